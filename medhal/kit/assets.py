"""Pinned external assets: upstream files we may use but must not redistribute.

An asset is declared as a name (a relative path that also names its place in an offline
mirror), a URL at a fixed commit, and the sha256 of its bytes. It is downloaded once into
a cache and verified on every read. With `MEDHAL_ASSETS_DIR` set, assets are read only
from that directory (`$MEDHAL_ASSETS_DIR/<name>`) and never downloaded, which is how
offline machines and tests supply them. `MEDHAL_ASSET_SHA256` (a JSON object mapping
asset names to hashes) replaces a pinned hash, so a test can supply a stand-in file of the
same shape; the replaced hash is what provenance then records, next to the pinned one.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ASSETS_DIR_ENV = "MEDHAL_ASSETS_DIR"
CACHE_DIR_ENV = "MEDHAL_CACHE_DIR"
SHA256_OVERRIDE_ENV = "MEDHAL_ASSET_SHA256"


_VERIFIED: dict[tuple[str, int, int, str], bytes] = {}
"""Verified asset bytes by (file, size, mtime, expected sha256)."""


class AssetError(RuntimeError):
    """An asset is missing, unreachable or does not match its pinned hash."""


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cache_dir() -> Path:
    root = os.environ.get(CACHE_DIR_ENV) or Path.home() / ".cache" / "medhal"
    return Path(root) / "assets"


@dataclass(frozen=True)
class Asset:
    name: str
    url: str
    sha256: str

    @property
    def expected_sha256(self) -> str:
        """The pinned hash, unless `MEDHAL_ASSET_SHA256` names this asset."""
        raw = os.environ.get(SHA256_OVERRIDE_ENV)
        if not raw:
            return self.sha256
        try:
            overrides = json.loads(raw)
        except json.JSONDecodeError as e:
            raise AssetError(f"{SHA256_OVERRIDE_ENV} is not valid JSON ({e.msg})") from e
        if not isinstance(overrides, dict):
            raise AssetError(f"{SHA256_OVERRIDE_ENV} must be a JSON object of asset name -> sha256")
        return str(overrides.get(self.name, self.sha256))

    def _offline_hint(self) -> str:
        return (
            f"to run offline, save the file from {self.url} as "
            f"${ASSETS_DIR_ENV}/{self.name} and set {ASSETS_DIR_ENV}"
        )

    def _verified(self, data: bytes, where: str) -> bytes:
        actual = sha256_bytes(data)
        if actual != self.expected_sha256:
            raise AssetError(
                f"asset {self.name!r} at {where} has sha256 {actual}, expected {self.expected_sha256} "
                f"(pinned source: {self.url}); replace it with the pinned file, {self._offline_hint()}"
            )
        return data

    def _download(self) -> bytes:
        try:
            with urllib.request.urlopen(self.url, timeout=60) as response:
                return bytes(response.read())
        except OSError as e:
            raise AssetError(
                f"asset {self.name!r} could not be downloaded from {self.url}: {e}; {self._offline_hint()}"
            ) from e

    @property
    def data(self) -> bytes:
        """The verified bytes: from the offline directory when one is set, else the cache
        (downloading into it on first use). Verified reads are memoised per source file
        (path, size, mtime) and expected hash, so a changed `MEDHAL_ASSETS_DIR`, file or
        hash override is always honoured."""
        expected = self.expected_sha256
        offline = os.environ.get(ASSETS_DIR_ENV)
        if offline:
            path = Path(offline) / self.name
            if not path.is_file():
                raise AssetError(
                    f"asset {self.name!r} not found at {path} ({ASSETS_DIR_ENV}={offline}); "
                    f"{self._offline_hint()}"
                )
        else:
            path = cache_dir() / expected / Path(self.name).name
        if path.is_file():
            stat = path.stat()
            key = (str(path), stat.st_size, stat.st_mtime_ns, expected)
            if key not in _VERIFIED:
                _VERIFIED[key] = self._verified(path.read_bytes(), str(path))
            return _VERIFIED[key]
        data = self._verified(self._download(), self.url)
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as tmp:
            tmp.write(data)
        os.replace(tmp.name, path)
        return data

    def text(self) -> str:
        return self.data.decode("utf-8")

    def json(self) -> Any:
        return json.loads(self.data)

    def provenance(self) -> dict[str, str]:
        record = {"name": self.name, "url": self.url, "sha256": self.expected_sha256}
        if record["sha256"] != self.sha256:
            record["pinned_sha256"] = self.sha256
        return record


@dataclass(frozen=True)
class BundledFile:
    """A file shipped inside an environment package (demo prompts written by medhal), with
    the reading interface of `Asset`. Its provenance says it is ours, with its sha256, so a
    report never passes it off as the benchmark's own prompt."""

    path: Path
    name: str

    @property
    def data(self) -> bytes:
        try:
            return self.path.read_bytes()
        except OSError as e:
            raise AssetError(f"bundled file {self.name!r} cannot be read at {self.path}: {e}") from e

    def text(self) -> str:
        return self.data.decode("utf-8")

    def json(self) -> Any:
        return json.loads(self.data)

    def provenance(self) -> dict[str, str]:
        return {
            "name": self.name,
            "written_by": "medhal (demo prompt, not the benchmark's)",
            "sha256": sha256_bytes(self.data),
        }
