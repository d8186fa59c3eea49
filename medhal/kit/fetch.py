"""Everything a real-data run reads, fetched once into one directory for offline machines.

Each environment declares, per setting, the pinned Hub dataset splits and the pinned prompt
assets it reads (`FETCH` in its `benchmark.py`: setting name -> `Needs`). `plan` lists the
files the chosen environments and settings need; `fetch` downloads each into a directory:

- a prompt asset to `<dir>/<asset name>`, so `MEDHAL_ASSETS_DIR=<dir>` serves it;
- a dataset split to `<dir>/<target><ext>`, the upstream file itself (parquet, csv, json or
  jsonl), so `--taskset.dataset-path` reads it (each environment README says which path).

Every file is checked against a hash fixed before the download: an asset against its pinned
sha256; a Hub file against the hash the Hub lists for it at the pinned revision (the sha256
of an LFS file; the git blob id of a small file), so the bytes are those of that commit.
Downloads go to `<file>.part` and are renamed only once verified: a finished file is never
partial, an interrupted download continues where it stopped (an HTTP range request; a server
that ignores it sends the whole file again), and a file already present and verified is not
downloaded again. `<dir>/medhal-fetch.json` records every file's source, revision and sha256
(the sha256 a run records in its provenance for a local file).

Which files a split needs comes from the dataset card at the pinned revision (`configs:` in
its YAML header, the Hub's own declaration of configs and their data files); a card without
the config falls back to the one data file under a folder named after the config. Hub
requests go to `HF_ENDPOINT` when it is set (a mirror; the tests' local server), with the
user's Hugging Face token when there is one; assets to their pinned URL, or to
`<mirror>/<asset name>` with `asset_mirror`.

Why not pooch (which the project prefers for pinned downloads) or `huggingface_hub`'s
`snapshot_download`: pooch restarts an interrupted download from zero and cannot check a git
blob id; `snapshot_download` fetches whole repositories, not the one split a setting reads,
retries for minutes before it reports a network that is down, and raises exceptions of its
HTTP stack's version. One small downloader over httpx (already a dependency) serves both
kinds of file with the same resume, checks and one-line errors.

Library code: no printing, no exit codes; every failure is a `FetchError` whose message is
one line naming the file or URL (the `medhal fetch` command prints it and exits 2).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Protocol
from urllib.parse import quote

from medhal.kit.assets import Asset
from medhal.kit.datasets import LOCAL_FORMATS, HubDataset

MANIFEST = "medhal-fetch.json"
CARDS_DIR = ".medhal-fetch"
"""Dataset cards (README.md at the pinned revision), kept to resolve configs again offline."""
PART = ".part"
TIMEOUT_S = 60.0
DEFAULT_ENDPOINT = "https://huggingface.co"


class FetchError(RuntimeError):
    """A download or check failed; the message is one line naming the file or URL."""


# ------------------------------------------------------------------------------ declarations


@dataclass(frozen=True)
class HubSplit:
    """One split of a pinned Hub dataset, stored as `<target><ext>` (`ext` from the upstream
    file) for the environment to read with `--taskset.dataset-path`."""

    dataset: HubDataset
    target: str
    """Relative path without extension, e.g. `medhallu/pqa_labeled`."""


@dataclass(frozen=True)
class Needs:
    """What one setting of an environment reads: dataset splits and prompt assets."""

    data: tuple[HubSplit, ...] = ()
    assets: tuple[Asset, ...] = ()


# ------------------------------------------------------------------------------ hashes


@dataclass(frozen=True)
class Check:
    """The hash a file must have: `sha256` of its bytes, or `git-blob` (git's object id:
    sha1 of `blob <size>\\0` + bytes), which the Hub lists for files not stored in LFS."""

    kind: str
    value: str

    def of(self, path: Path) -> str:
        digest = hashlib.sha256() if self.kind == "sha256" else hashlib.sha1()  # git's object id is sha1
        if self.kind == "git-blob":
            digest.update(f"blob {path.stat().st_size}\0".encode())
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()


def sha256_of(path: Path) -> str:
    return Check("sha256", "").of(path)


# ------------------------------------------------------------------------------ the plan


@dataclass(frozen=True)
class Item:
    """One file to fetch."""

    path: str
    """Where it goes, relative to the directory."""
    url: str
    check: Check
    size: int | None
    source: dict[str, Any] = field(hash=False, compare=False)
    """What it is, for the manifest: an asset's name and pinned URL, or a split's dataset id,
    revision, config, split and file in the repository."""
    headers: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    """Sent with the request: the Hugging Face token goes to the Hub only (httpx drops it when
    the Hub redirects elsewhere), never to GitHub or an asset mirror."""


@dataclass(frozen=True)
class Chosen:
    """The needs of the chosen environments and settings, before any network access."""

    splits: tuple[HubSplit, ...]
    assets: tuple[Asset, ...]
    settings: dict[str, tuple[str, ...]]
    """Environment id -> the settings chosen for it."""


def choose(
    env_ids: Sequence[str],
    declarations: Callable[[str], dict[str, Needs]],
    settings: Sequence[str] = (),
) -> Chosen:
    """The splits and assets the environments' chosen settings need (all settings when none
    are named), each once; `declarations` gives an environment's `FETCH` declaration. A
    setting that none of the environments declares is an error naming the settings there are."""
    splits: dict[str, HubSplit] = {}
    assets: dict[str, Asset] = {}
    chosen: dict[str, tuple[str, ...]] = {}
    known: dict[str, list[str]] = {}
    for env_id in env_ids:
        declared_here = declarations(env_id)
        known[env_id] = list(declared_here)
        names = [s for s in settings if s in declared_here] if settings else list(declared_here)
        chosen[env_id] = tuple(names)
        for name in names:
            for split in declared_here[name].data:
                splits.setdefault(split.target, split)
            for asset in declared_here[name].assets:
                assets.setdefault(asset.name, asset)
    unknown = [s for s in settings if not any(s in names for names in known.values())]
    if unknown:
        offered = "; ".join(f"{env}: {', '.join(names) or 'none'}" for env, names in known.items())
        raise FetchError(f"unknown setting {unknown[0]!r} (settings: {offered})")
    return Chosen(tuple(splits.values()), tuple(assets.values()), chosen)


def asset_item(asset: Asset, mirror: str | None) -> Item:
    url = f"{mirror.rstrip('/')}/{quote(asset.name)}" if mirror else asset.url
    source = {"kind": "asset", "name": asset.name, "url": asset.url}
    return Item(asset.name, url, Check("sha256", asset.expected_sha256), None, source)


# ------------------------------------------------------------------------------ the Hub


def hub_endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def hub_headers() -> dict[str, str]:
    """The Hugging Face token of the user, when there is one (HF_TOKEN or `hf auth login`):
    the pinned datasets are public, but a token lifts the Hub's rate limits."""
    from huggingface_hub import get_token

    token = get_token()
    return {"Authorization": f"Bearer {token}"} if token else {}


@dataclass(frozen=True)
class RepoFile:
    path: str
    size: int
    check: Check


class Hub:
    """The Hub's file listing at a pinned revision (`/api/datasets/<id>/tree/<revision>`),
    read once per repository and revision."""

    def __init__(self, client: Any, endpoint: str | None = None) -> None:
        self.client = client
        self.endpoint = endpoint or hub_endpoint()
        self.headers = hub_headers()
        self._trees: dict[tuple[str, str], dict[str, RepoFile]] = {}

    def file_url(self, dataset: HubDataset, path: str) -> str:
        return f"{self.endpoint}/datasets/{dataset.id}/resolve/{dataset.revision}/{quote(path)}"

    def tree(self, dataset: HubDataset) -> dict[str, RepoFile]:
        key = (dataset.id, dataset.revision)
        if key not in self._trees:
            url: str | None = (
                f"{self.endpoint}/api/datasets/{dataset.id}/tree/{dataset.revision}?recursive=true"
            )
            files: dict[str, RepoFile] = {}
            while url:
                response = get(
                    self.client, url, f"the file list of {dataset.id}@{dataset.revision}", self.headers
                )
                for entry in parse_tree(response.content, url):
                    files[entry.path] = entry
                url = response.links.get("next", {}).get("url")
            self._trees[key] = files
        return self._trees[key]


def parse_tree(content: bytes, url: str) -> list[RepoFile]:
    """Files of a Hub tree listing: path, size, and the hash to check (LFS sha256, else the
    git blob id). Anything else in the answer is a one-line error."""
    try:
        entries = json.loads(content)
        files = []
        for entry in entries:
            if entry.get("type") != "file":
                continue
            lfs = entry.get("lfs")
            check = Check("sha256", str(lfs["oid"])) if lfs else Check("git-blob", str(entry["oid"]))
            files.append(RepoFile(str(entry["path"]), int(entry["size"]), check))
        return files
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        raise FetchError(f"{url}: not a Hub file listing ({type(e).__name__}: {e})") from None


def card_configs(card: Path) -> list[dict[str, Any]]:
    """The `configs` list of a dataset card's YAML header (empty when it has none)."""
    from huggingface_hub.repocard import metadata_load

    try:
        metadata = metadata_load(card) or {}
    except Exception as e:  # a malformed YAML header: yaml's errors vary by version
        raise FetchError(
            f"{card}: the dataset card's YAML header cannot be read ({type(e).__name__})"
        ) from None
    configs = metadata.get("configs", [])
    return [c for c in configs if isinstance(c, dict)] if isinstance(configs, list) else []


def split_patterns(config: dict[str, Any], split: str) -> list[str]:
    """The data-file patterns of one split of a card's config entry (`data_files` as a
    string, a list of strings, a list of `{split, path}` or a mapping split -> path)."""
    data_files = config.get("data_files")
    if isinstance(data_files, str):
        return [data_files] if split == "train" else []
    if isinstance(data_files, dict):
        value = data_files.get(split)
        return [value] if isinstance(value, str) else [str(v) for v in value or []]
    patterns: list[str] = []
    for entry in data_files or []:
        if isinstance(entry, str):
            patterns += [entry] if split == "train" else []
        elif isinstance(entry, dict) and entry.get("split", "train") == split:
            path = entry.get("path", [])
            patterns += [path] if isinstance(path, str) else [str(p) for p in path]
    return patterns


def matches(path: str, pattern: str) -> bool:
    """A card pattern against a repository path: `*` stays within one folder, `**` crosses."""
    if "**" not in pattern and pattern.count("/") != path.count("/"):
        return False
    return fnmatch.fnmatchcase(path, pattern.replace("**/", "*").replace("**", "*"))


def split_files(files: dict[str, RepoFile], configs: list[dict[str, Any]], split: HubSplit) -> list[RepoFile]:
    """The repository files of the split: by the card's declaration of the config, else the
    data files under a folder named after the config."""
    name = split.dataset.config or "default"
    entry = next((c for c in configs if c.get("config_name", "default") == name), None)
    if entry is not None:
        patterns = split_patterns(entry, split.dataset.split)
        return [f for p, f in sorted(files.items()) if any(matches(p, pattern) for pattern in patterns)]
    folder = PurePosixPath(name)
    return [
        f
        for p, f in sorted(files.items())
        if PurePosixPath(p).parent == folder and PurePosixPath(p).suffix in LOCAL_FORMATS
    ]


def split_item(hub: Hub, split: HubSplit, root: Path, progress: ProgressFactory | None) -> Item:
    """The one upstream file of a split, with its hash at the pinned revision."""
    dataset = split.dataset
    files = hub.tree(dataset)
    where = f"{dataset.id}@{dataset.revision}"
    card = files.get("README.md")
    configs: list[dict[str, Any]] = []
    if card is not None:
        card_path = root / CARDS_DIR / dataset.id / dataset.revision / "README.md"
        card_item = Item(
            str(card_path.relative_to(root)),
            hub.file_url(dataset, card.path),
            card.check,
            card.size,
            {},
            hub.headers,
        )
        download(hub.client, card_item, root, progress)
        configs = card_configs(card_path)
    found = split_files(files, configs, split)
    what = f"config {dataset.config or 'default'!r} split {dataset.split!r} of {where}"
    if not found:
        raise FetchError(f"{what}: the dataset card declares no data file for it, and no folder holds one")
    if len(found) > 1:
        listed = ", ".join(f.path for f in found[:4])
        raise FetchError(
            f"{what}: {len(found)} data files ({listed}{', ...' if len(found) > 4 else ''}); an environment "
            "reads one local file per split (merge them, or run on a machine that reaches the Hub)"
        )
    upstream = found[0]
    ext = PurePosixPath(upstream.path).suffix.lower()
    if ext not in LOCAL_FORMATS:
        raise FetchError(
            f"{what}: {upstream.path} is not a file type the environments read ({', '.join(LOCAL_FORMATS)})"
        )
    source = {
        "kind": "dataset",
        "dataset": dataset.id,
        "revision": dataset.revision,
        "config": dataset.config,
        "split": dataset.split,
        "file": upstream.path,
    }
    url = hub.file_url(dataset, upstream.path)
    return Item(f"{split.target}{ext}", url, upstream.check, upstream.size, source, hub.headers)


# ------------------------------------------------------------------------------ downloading


class Progress(Protocol):
    def update(self, n: int) -> object: ...

    def close(self) -> None: ...


ProgressFactory = Callable[[str, int | None, int], Progress]
"""(file name, total bytes or None, bytes already there) -> a progress bar (tqdm fits)."""


@dataclass(frozen=True)
class Fetched:
    path: Path
    status: str
    """`verified` (already there), `downloaded` or `resumed`."""
    size: int
    sha256: str
    source: dict[str, Any]


def get(client: Any, url: str, what: str, headers: dict[str, str]) -> Any:
    import httpx

    try:
        response = client.get(url, headers=headers)
    except httpx.HTTPError as e:
        raise FetchError(f"cannot download {what} from {url}: {network_reason(e)}") from None
    if response.status_code != 200:
        raise FetchError(f"cannot download {what} from {url}: HTTP {response.status_code}")
    return response


def network_reason(error: Exception) -> str:
    reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return f"{reason} (no network? fetch where the Hub and GitHub are reachable and carry the directory)"


def write_error(path: Path, error: OSError) -> FetchError:
    return FetchError(f"cannot write {path}: {error.strerror or error}")


def download(client: Any, item: Item, root: Path, progress: ProgressFactory | None) -> Fetched:
    """Bring `root/item.path` to the bytes the item's check names (see the module docstring)."""
    target = root / item.path
    if target.is_file() and item.check.of(target) == item.check.value:
        return Fetched(target, "verified", target.stat().st_size, sha256_of(target), item.source)
    part = target.with_name(target.name + PART)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise write_error(target.parent, e) from None
    resumed = stream(client, item, part, progress)
    actual = item.check.of(part)
    if actual != item.check.value and resumed:  # the bytes kept from before were not this file's
        part.unlink()
        resumed = stream(client, item, part, progress)
        actual = item.check.of(part)
    if actual != item.check.value:
        part.unlink()
        raise FetchError(
            f"{item.url}: the download has {item.check.kind} {actual}, expected {item.check.value}; "
            "nothing was kept (a changed or corrupt upstream file, or a proxy rewriting it)"
        )
    try:
        os.replace(part, target)
    except OSError as e:
        raise write_error(target, e) from None
    status = "resumed" if resumed else "downloaded"
    return Fetched(target, status, target.stat().st_size, sha256_of(target), item.source)


def stream(client: Any, item: Item, part: Path, progress: ProgressFactory | None) -> bool:
    """Download `item.url` into `part`, continuing after the bytes already there when the
    server honours the range request; True when it continued."""
    import httpx

    have = part.stat().st_size if part.is_file() else 0
    headers = {**item.headers, **({"Range": f"bytes={have}-"} if have else {})}
    try:
        with client.stream("GET", item.url, headers=headers) as response:
            if have and (
                response.status_code == 416  # asked past the end: what is there is no prefix
                or (response.status_code == 206 and not content_range_starts_at(response, have))
            ):
                response.close()
                part.unlink()
                return stream(client, item, part, progress)
            if response.status_code not in (200, 206):
                raise FetchError(f"cannot download {item.path} from {item.url}: HTTP {response.status_code}")
            append = bool(response.status_code == 206)
            length = response.headers.get("content-length")
            total = (int(length) + (have if append else 0)) if length and length.isdigit() else item.size
            bar = progress(item.path, total, have if append else 0) if progress else None
            try:
                with open(part, "ab" if append else "wb") as f:
                    for chunk in response.iter_bytes():  # as it arrives: a cut keeps what came
                        f.write(chunk)
                        if bar is not None:
                            bar.update(len(chunk))
            except OSError as e:
                raise write_error(part, e) from None
            finally:
                if bar is not None:
                    bar.close()
            return append
    except httpx.HTTPError as e:
        raise FetchError(f"cannot download {item.path} from {item.url}: {network_reason(e)}") from None


def content_range_starts_at(response: Any, offset: int) -> bool:
    value = str(response.headers.get("content-range", ""))
    return value.startswith(f"bytes {offset}-")


# ------------------------------------------------------------------------------ the run


def fetch(
    chosen: Chosen,
    root: Path,
    asset_mirror: str | None = None,
    progress: ProgressFactory | None = None,
    client: Any = None,
) -> Iterator[Fetched]:
    """Fetch every file of `chosen` into `root`, yielding each as it is done, then write the
    manifest (merged with the one already there)."""
    import httpx

    own = client is None
    client = client or httpx.Client(follow_redirects=True, timeout=TIMEOUT_S)
    done: list[Fetched] = []
    try:
        hub = Hub(client)
        for asset in chosen.assets:
            done.append(download(client, asset_item(asset, asset_mirror), root, progress))
            yield done[-1]
        for split in chosen.splits:
            done.append(download(client, split_item(hub, split, root, progress), root, progress))
            yield done[-1]
    finally:
        if own:
            client.close()
        if done:
            write_manifest(root, done)


def write_manifest(root: Path, fetched: list[Fetched]) -> Path:
    path = root / MANIFEST
    entries: dict[str, Any] = {}
    try:
        previous = json.loads(path.read_text()) if path.is_file() else {}
        entries = {e["path"]: e for e in previous.get("files", []) if isinstance(e, dict) and "path" in e}
    except (OSError, ValueError, AttributeError):
        entries = {}  # an unreadable manifest is rewritten from what this run verified
    for f in fetched:
        relative = str(f.path.relative_to(root))
        entries[relative] = {"path": relative, "sha256": f.sha256, "size": f.size, **f.source}
    from medhal import __version__

    body = {
        "written_by": f"medhal {__version__} (medhal fetch)",
        "files": sorted(entries.values(), key=lambda e: e["path"]),
    }
    tmp = path.with_name(path.name + PART)
    try:
        tmp.write_text(json.dumps(body, indent=1) + "\n")
        os.replace(tmp, path)
    except OSError as e:
        raise write_error(path, e) from None
    return path
