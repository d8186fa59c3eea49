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
(the sha256 a run records in its provenance for a local file); an entry of an earlier run is
kept only when its file is still there with the sha256 recorded.

Which files a split needs comes from the dataset card at the pinned revision (`configs:` in
its YAML header, the Hub's own declaration of configs and their data files); a card without
the config falls back to the one data file under a folder named after the config. Hub
requests go to `HF_ENDPOINT` when it is set (a mirror; the tests' local server), with the
user's Hugging Face token when there is one; assets to their pinned URL, or to
`<mirror>/<asset name>` with `asset_mirror`.

A mirror is not trusted with the machine: beneath the directory nothing is followed and only
regular files are written (`medhal.kit.confined`); one `medhal fetch` at a time fills a
directory (a lock); each file has an overall deadline and at most its listed size
(`medhal.kit.transfer`); listings are bounded in pages, bytes and files, on the endpoint's
host only (the token goes nowhere else); the card is read without YAML aliases; every text a
server sends is shown as one printable line; credentials in a mirror URL are never shown.
What a mirror is trusted with: a Hub mirror lists the hashes the dataset files are checked
against, so it can serve other rows than the Hub's; an asset mirror can only fail.

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

import contextlib
import hashlib
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Protocol
from urllib.parse import quote, urljoin, urlsplit

from medhal.kit.assets import Asset
from medhal.kit.confined import Busy, Confined, Unsafe, write_all
from medhal.kit.datasets import LOCAL_FORMATS, HubDataset
from medhal.kit.fetch_manifest import MANIFEST, Dropped, carried, write_manifest
from medhal.kit.hub_listing import (
    Check,
    RepoFile,
    card_configs,
    matches,
    parse_tree,
    split_files,
    split_patterns,
)
from medhal.kit.transfer import Expired, Head, TooLong, Transfer, TransferError, read_body, reason
from medhal.kit.untrusted import one_line

__all__ = [
    "MANIFEST",
    "Check",
    "Chosen",
    "Dropped",
    "FetchError",
    "Fetched",
    "HubSplit",
    "Needs",
    "RepoFile",
    "choose",
    "digests",
    "fetch",
    "matches",
    "mirror_url",
    "split_files",
    "split_patterns",
]
CARDS_DIR = ".medhal-fetch"
"""Dataset cards (README.md at the pinned revision), kept to resolve configs again offline."""
LOCK = f"{CARDS_DIR}/lock"
"""The advisory lock a run holds (its text names the holder; the file stays, empty of meaning
once no process holds it)."""
PART = ".part"
DEFAULT_ENDPOINT = "https://huggingface.co"
DEADLINE_S = 3600.0
"""Seconds one file (or one repository's file listing) may take, first request to last byte:
an hour, 100 MB at 28 kB/s (the splits we pin are tens of MB in all). A slower or stalled
server is given up."""
MAX_LISTING_PAGES = 1000
MAX_PAGE_BYTES = 8 << 20
MAX_LISTED_FILES = 200_000
"""A Hub listing longer than this (in pages of the listing, bytes per page, or files) is
refused: the repositories we pin hold tens of files; the Hub pages listings by 1,000."""
MAX_CARD_BYTES = 4 << 20
"""The largest dataset card read (its YAML header has bounds of its own: `hub_listing`)."""
MAX_UNLISTED_BYTES = 64 << 20
"""The most bytes of a file with no listed size (a prompt asset: the largest is under 1 MB)."""
_CREDENTIALS = re.compile(r"(?<=//)[^/?#@\s]*@")


def redact(text: str) -> str:
    """`text` with the credentials of every URL in it (`//user:password@`) replaced by `***`."""
    return _CREDENTIALS.sub("***@", text)


class FetchError(RuntimeError):
    """A download or check failed; the message is one line naming the file or URL, shown
    printable (server text may hold ESC) and without the credentials of any URL."""

    def __init__(self, message: str) -> None:
        super().__init__(redact(one_line(message)))


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


def digests(directory: Confined, relative: str, check: Check) -> tuple[str, str]:
    """(the hash `check` names, sha256) of a regular file in `directory`, in one read."""
    sha256 = hashlib.sha256()
    with directory.reading(relative) as (size, blocks):
        blob = hashlib.sha1(f"blob {size}\0".encode()) if check.kind == "git-blob" else None  # git's id
        for block in blocks:
            sha256.update(block)
            if blob is not None:
                blob.update(block)
    return (blob or sha256).hexdigest(), sha256.hexdigest()


# ------------------------------------------------------------------------------ URLs


def mirror_url(text: str, what: str) -> str:
    """A mirror's base URL, checked (http or https with a host; no space or control character,
    which would reach a request line or a terminal), without its trailing slash."""
    import httpx

    if not text.strip():
        raise FetchError(f"{what}: an empty URL (leave it out for the default)")
    if any(c.isspace() or not c.isprintable() for c in text):
        raise FetchError(f"{what}: {text} holds a space or control character; not a URL")
    try:
        parts = urlsplit(text)
        _ = parts.port  # a port that is not a number raises here
        httpx.URL(text)
    except (ValueError, httpx.InvalidURL) as e:
        raise FetchError(f"{what}: {text} is not a URL ({reason(e)})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FetchError(f"{what}: {text} is not an http:// or https:// URL with a host")
    if parts.query or parts.fragment:
        raise FetchError(f"{what}: {text} has a ? or # part; give the base URL only")
    return text.rstrip("/")


def origin(url: str) -> tuple[str, str, int | None] | None:
    """(scheme, host, port) of `url`, the port the scheme's default when none is given."""
    try:
        parts = urlsplit(url)
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return None
    return parts.scheme, (parts.hostname or "").lower(), port


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
    """Sent with the request: the Hugging Face token goes to the Hub's host only (httpx drops
    it when the Hub redirects elsewhere), never to GitHub or an asset mirror."""


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
    url = f"{mirror}/{quote(asset.name)}" if mirror else asset.url
    source = {"kind": "asset", "name": asset.name, "url": asset.url}
    return Item(asset.name, url, Check("sha256", asset.expected_sha256), None, source)


# ------------------------------------------------------------------------------ the Hub


def hub_endpoint() -> str:
    """`HF_ENDPOINT`, checked, or the Hub (unset or empty, as huggingface_hub reads it)."""
    return mirror_url(os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT, "HF_ENDPOINT")


def hub_headers() -> dict[str, str]:
    """The Hugging Face token of the user, when there is one (HF_TOKEN or `hf auth login`):
    the pinned datasets are public, but a token lifts the Hub's rate limits."""
    from huggingface_hub import get_token

    token = get_token()
    return {"Authorization": f"Bearer {token}"} if token else {}


class Hub:
    """The Hub's file listing at a pinned revision (`/api/datasets/<id>/tree/<revision>`),
    read once per repository and revision: its pages on the endpoint's host only, each once,
    at most `MAX_LISTING_PAGES` of `MAX_PAGE_BYTES`, all within one deadline."""

    def __init__(self, client: Any, endpoint: str | None = None, deadline_s: float = DEADLINE_S) -> None:
        self.client = client
        self.endpoint = endpoint or hub_endpoint()
        self.deadline_s = deadline_s
        self.headers = hub_headers()
        self._trees: dict[tuple[str, str], dict[str, RepoFile]] = {}

    def file_url(self, dataset: HubDataset, path: str) -> str:
        return f"{self.endpoint}/datasets/{dataset.id}/resolve/{dataset.revision}/{quote(path)}"

    def tree(self, dataset: HubDataset) -> dict[str, RepoFile]:
        key = (dataset.id, dataset.revision)
        if key not in self._trees:
            self._trees[key] = self._listing(dataset)
        return self._trees[key]

    def _listing(self, dataset: HubDataset) -> dict[str, RepoFile]:
        what = f"the file list of {dataset.id}@{dataset.revision}"
        url: str | None = f"{self.endpoint}/api/datasets/{dataset.id}/tree/{dataset.revision}?recursive=true"
        deadline = time.monotonic() + self.deadline_s
        seen: set[str] = set()
        files: dict[str, RepoFile] = {}
        while url is not None:
            if len(seen) == MAX_LISTING_PAGES:
                raise FetchError(f"{what}: more than {MAX_LISTING_PAGES:,} pages at {self.endpoint}; refused")
            seen.add(url)
            head, body = self._page(url, what, deadline)
            try:
                listed = parse_tree(body)
            except ValueError as e:
                raise FetchError(f"{url}: not a Hub file listing ({e})") from None
            for entry in listed:
                files[entry.path] = entry
            if len(files) > MAX_LISTED_FILES:
                raise FetchError(f"{what}: more than {MAX_LISTED_FILES:,} files at {self.endpoint}; refused")
            url = self._next_page(head, what, seen)
        return files

    def _page(self, url: str, what: str, deadline: float) -> tuple[Head, bytes]:
        try:
            with Transfer(self.client, url, self.headers, deadline) as transfer:
                head = transfer.head()
                if head.status != 200:
                    raise FetchError(f"cannot download {what} from {url}: HTTP {head.status}")
                return head, read_body(transfer, MAX_PAGE_BYTES)
        except TransferError as e:
            raise FetchError(f"cannot download {what} from {url}: {failure(e, self.deadline_s)}") from None

    def _next_page(self, head: Head, what: str, seen: set[str]) -> str | None:
        """The listing's next page (`Link: <url>; rel="next"`): on the endpoint's host (the
        token goes nowhere else) and not read before (a listing that loops)."""
        link = head.links.get("next", {}).get("url")
        if not link:
            return None
        url = urljoin(head.url, link)
        if origin(url) != origin(self.endpoint):
            raise FetchError(
                f"{what}: the listing's next page is {url}, not on {self.endpoint}; refused "
                "(the Hugging Face token goes to the endpoint's host only)"
            )
        if url in seen:
            raise FetchError(f"{what}: the listing's next page {url} was read already (a listing that loops)")
        return url


def read_card(
    hub: Hub, dataset: HubDataset, directory: Confined, progress: ProgressFactory | None
) -> list[Any]:
    """The configs the dataset card at the pinned revision declares (none without a card),
    the card kept under `CARDS_DIR`."""
    card = hub.tree(dataset).get("README.md")
    if card is None:
        return []
    where = f"{dataset.id}@{dataset.revision}"
    if card.size > MAX_CARD_BYTES:
        raise FetchError(
            f"{where}: the dataset card is {card.size:,} bytes, more than the {MAX_CARD_BYTES:,} read"
        )
    path = f"{CARDS_DIR}/{dataset.id}/{dataset.revision}/README.md"
    item = Item(path, hub.file_url(dataset, card.path), card.check, card.size, {}, hub.headers)
    download(hub.client, item, directory, progress, hub.deadline_s)
    try:
        return card_configs(directory.read(path, MAX_CARD_BYTES))
    except ValueError as e:
        raise FetchError(f"{where} README.md: {e}") from None


def split_item(hub: Hub, split: HubSplit, directory: Confined, progress: ProgressFactory | None) -> Item:
    """The one upstream file of a split, with its hash at the pinned revision."""
    dataset = split.dataset
    configs = read_card(hub, dataset, directory, progress)
    what = (
        f"config {dataset.config or 'default'!r} split {dataset.split!r} of {dataset.id}@{dataset.revision}"
    )
    try:
        found = split_files(hub.tree(dataset), configs, dataset.config, dataset.split)
    except ValueError as e:
        raise FetchError(f"{what}: {e}") from None
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


def failure(error: TransferError, deadline_s: float) -> str:
    """Why a GET failed, for a message that names the file and URL before it."""
    if isinstance(error, Expired):
        return (
            f"no complete answer within {deadline_s:g} s (a stalled or very slow server; "
            "medhal fetch --deadline sets the seconds one file may take)"
        )
    if isinstance(error, TooLong):
        return str(error)
    return f"{error} (no network? fetch where the Hub and GitHub are reachable and carry the directory)"


def write_error(path: Path, error: OSError) -> FetchError:
    return FetchError(f"cannot write {path}: {error.strerror or error}")


def download(
    client: Any, item: Item, directory: Confined, progress: ProgressFactory | None, deadline_s: float
) -> Fetched:
    """Bring `item.path` to the bytes the item's check names (see the module docstring),
    all requests for it within `deadline_s`."""
    shown = directory.shown(item.path)
    if directory.size(item.path) is not None:
        actual, sha256 = digests(directory, item.path, item.check)
        if actual == item.check.value:
            return Fetched(shown, "verified", directory.size(item.path) or 0, sha256, item.source)
    deadline = time.monotonic() + deadline_s
    part = item.path + PART
    resumed = stream(client, item, directory, progress, (deadline, deadline_s))
    actual, sha256 = digests(directory, part, item.check)
    if actual != item.check.value and resumed:  # the bytes kept from before were not this file's
        directory.remove(part)
        resumed = stream(client, item, directory, progress, (deadline, deadline_s))
        actual, sha256 = digests(directory, part, item.check)
    if actual != item.check.value:
        directory.remove(part)
        raise FetchError(
            f"{item.url}: the download has {item.check.kind} {actual}, expected {item.check.value}; "
            "nothing was kept (a changed or corrupt upstream file, or a proxy rewriting it)"
        )
    try:
        directory.replace(part, PurePosixPath(item.path).name)
    except OSError as e:
        raise write_error(shown, e) from None
    status = "resumed" if resumed else "downloaded"
    return Fetched(shown, status, directory.size(item.path) or 0, sha256, item.source)


def stream(
    client: Any,
    item: Item,
    directory: Confined,
    progress: ProgressFactory | None,
    deadline: tuple[float, float],
) -> bool:
    """Download `item.url` into `<item.path>.part`, continuing after the bytes already there
    when the server honours the range request; True when it continued. `deadline`: (the
    `time.monotonic()` by which it must be done, the seconds that was, for messages)."""
    part = item.path + PART
    limit = item.size if item.size is not None else MAX_UNLISTED_BYTES
    have = directory.size(part) or 0
    if have and have == item.size:
        return True  # complete already (a run stopped before the check): checked next
    if have > limit:
        directory.remove(part)
        have = 0
    headers = {**item.headers, **({"Range": f"bytes={have}-"} if have else {})}
    try:
        with Transfer(client, item.url, headers, deadline[0]) as transfer:
            head = transfer.head()
            if have and (
                head.status == 416  # asked past the end: what is there is no prefix
                or (head.status == 206 and not content_range_starts_at(head, have))
            ):
                transfer.close()
                directory.remove(part)
                return stream(client, item, directory, progress, deadline)
            if head.status not in (200, 206):
                raise FetchError(f"cannot download {item.path} from {item.url}: HTTP {head.status}")
            append = head.status == 206 and have > 0  # a 206 nobody asked for is checked as a whole file
            receive(transfer, head, item, directory, progress, have if append else 0)
            return append
    except TransferError as e:
        raise FetchError(f"cannot download {item.path} from {item.url}: {failure(e, deadline[1])}") from None


def receive(
    transfer: Transfer,
    head: Head,
    item: Item,
    directory: Confined,
    progress: ProgressFactory | None,
    start: int,
) -> None:
    """Write the body into the `.part` after its first `start` bytes, as it arrives (a cut
    keeps what came), never past the listed size."""
    part = item.path + PART
    limit = item.size if item.size is not None else MAX_UNLISTED_BYTES
    total = item.size if item.size is not None else content_length(head, start)
    bar = progress(item.path, total, start) if progress else None
    written = start
    try:
        with directory.open(part, "append" if start else "write") as fd:
            for chunk in transfer.chunks():
                written += len(chunk)
                if written > limit:
                    break
                write_all(fd, chunk)
                if bar is not None:
                    bar.update(len(chunk))
    except OSError as e:
        raise write_error(directory.shown(part), e) from None
    finally:
        if bar is not None:
            bar.close()
    if written > limit:
        transfer.close()
        directory.remove(part)
        listed = "the listing gives" if item.size is not None else "a file with no listed size may have"
        raise FetchError(
            f"{item.url}: the server sent more than the {limit:,} bytes {listed} for {item.path}; "
            "nothing was kept"
        )


def content_length(head: Head, start: int) -> int | None:
    value = str(head.headers.get("content-length", ""))
    return int(value) + start if value.isascii() and value.isdigit() and len(value) <= 18 else None


def content_range_starts_at(head: Head, offset: int) -> bool:
    value = str(head.headers.get("content-range", ""))
    return value.startswith(f"bytes {offset}-")


# ------------------------------------------------------------------------------ the run


@contextlib.contextmanager
def refusals(root: Path) -> Iterator[None]:
    """What the directory refuses, as `FetchError`: a link or special file (`Unsafe`),
    another fetch filling it (`Busy`), a file that cannot be read (the writes name their
    file themselves)."""
    try:
        yield
    except Unsafe as e:
        raise FetchError(str(e)) from None
    except OSError as e:
        raise FetchError(f"cannot read or write in {root}: {e}") from None
    except Busy as e:
        holder = str(e) or "it did not say which"
        raise FetchError(
            f"{root} is being filled by another medhal fetch ({holder}); wait for it to end, "
            "or fetch into another directory"
        ) from None


def holder() -> str:
    """What the lock file says about the run that holds it."""
    import socket

    return f"pid {os.getpid()} on {socket.gethostname()}, since {time.strftime('%Y-%m-%d %H:%M:%S')}"


def open_directory(root: Path) -> Confined:
    try:
        return Confined(root)
    except OSError as e:
        raise write_error(root, e) from None


@contextlib.contextmanager
def http_client(client: Any) -> Iterator[Any]:
    """`client`, or a new httpx client closed at the end (redirects followed: the Hub sends
    LFS files from its CDN; httpx drops the token on a redirect to another host)."""
    if client is not None:
        yield client
        return
    import httpx

    with httpx.Client(follow_redirects=True) as own:
        yield own


def fetch(
    chosen: Chosen,
    root: Path,
    asset_mirror: str | None = None,
    progress: ProgressFactory | None = None,
    client: Any = None,
    deadline_s: float = DEADLINE_S,
) -> Iterator[Fetched | Dropped]:
    """Fetch every file of `chosen` into `root` (created when missing), yielding a `Dropped`
    for each previous manifest entry not carried, then each file as it is done; the manifest
    is written at the end, and also when a file fails (what was verified stays recorded).
    `deadline_s`: the seconds each file, and each repository's listing, may take."""
    mirror = mirror_url(asset_mirror, "--asset-mirror") if asset_mirror is not None else None
    endpoint = hub_endpoint()
    with refusals(root):
        directory = open_directory(root)
        with directory, directory.locked(LOCK, holder()), http_client(client) as http:
            entries, dropped = carried(directory, (CARDS_DIR,))
            yield from dropped
            recorded = entries if entries is not None else {}
            try:
                for done in fetch_all(chosen, directory, Hub(http, endpoint, deadline_s), mirror, progress):
                    relative = done.path.relative_to(root).as_posix()
                    recorded[relative] = {
                        "path": relative,
                        "sha256": done.sha256,
                        "size": done.size,
                        **done.source,
                    }
                    yield done
            except BaseException:
                if recorded or entries is not None:
                    with contextlib.suppress(FetchError, Unsafe):  # the first failure is the one to report
                        record(directory, recorded)
                raise
            if recorded or entries is not None:
                record(directory, recorded)


def record(directory: Confined, entries: dict[str, dict[str, Any]]) -> Path:
    """Write the manifest (`fetch_manifest`), a failure named by the file it was writing."""
    from medhal import __version__

    try:
        return write_manifest(directory, entries, f"medhal {__version__} (medhal fetch)")
    except OSError as e:
        raise write_error(directory.shown(MANIFEST + PART), e) from None


def fetch_all(
    chosen: Chosen, directory: Confined, hub: Hub, mirror: str | None, progress: ProgressFactory | None
) -> Iterator[Fetched]:
    for asset in chosen.assets:
        yield download(hub.client, asset_item(asset, mirror), directory, progress, hub.deadline_s)
    for split in chosen.splits:
        item = split_item(hub, split, directory, progress)
        yield download(hub.client, item, directory, progress, hub.deadline_s)
