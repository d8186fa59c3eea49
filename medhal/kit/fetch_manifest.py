"""`medhal-fetch.json`, the record of what a fetch directory holds: each file's path, sha256,
size and source (dataset, revision, config, split and file in the repository; or the
asset's name and pinned URL).

Each run writes it anew, all or nothing (through `medhal-fetch.json.part`, then a rename),
from the files it verified and the entries of the previous manifest that still hold: an
earlier entry is carried only when its file is still in the directory, a regular file, with
the sha256 recorded. Every other entry (the file gone, changed or replaced by a link; an
entry that is not an object, or whose path is a number, a list or leaves the directory) is
dropped with a `Dropped` saying why, so the manifest never vouches for bytes no run checked.

Library code: files are read and written through a `Confined` directory (no link followed);
a write that fails is an OSError for the caller to name."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from medhal.kit.confined import Confined, Unsafe, write_all
from medhal.kit.files import UnreadableText, decode_utf8, loads_json, value_problem

MANIFEST = "medhal-fetch.json"
PART = ".part"
MAX_MANIFEST_BYTES = 64 << 20
_HEX64 = "0123456789abcdef"


@dataclass(frozen=True)
class Dropped:
    """An entry of the previous manifest not carried into the new one, and why."""

    path: str
    reason: str


def sha256_of(directory: Confined, relative: str) -> str:
    digest = hashlib.sha256()
    with directory.reading(relative) as (_, blocks):
        for block in blocks:
            digest.update(block)
    return digest.hexdigest()


def previous_entries(directory: Confined) -> tuple[list[Any] | None, list[Dropped]]:
    """The entries of the manifest already there (None when there is none), and a `Dropped`
    for a manifest that cannot be read. A link or special file at its name, or at the name
    it is written through, is refused now (`Unsafe`), before any download."""
    directory.size(MANIFEST + PART)
    if directory.size(MANIFEST) is None:
        return None, []
    try:
        body = loads_json(decode_utf8(directory.read(MANIFEST, MAX_MANIFEST_BYTES)))
    except (UnreadableText, Unsafe) as e:
        return [], [Dropped(MANIFEST, f"unreadable ({e}): written anew from the files verified now")]
    files = body.get("files") if isinstance(body, dict) else None
    if not isinstance(files, list):
        return [], [Dropped(MANIFEST, "not a list of files: written anew from the files verified now")]
    return files, []


def entry_problem(entry: Any, reserved: tuple[str, ...]) -> str | None:
    """Why a previous manifest entry cannot be carried as it stands, or None. `reserved`:
    top-level names that are not fetched files (the manifest, the cards' folder)."""
    if not isinstance(entry, dict):
        return "not a JSON object"
    path, sha256 = entry.get("path"), entry.get("sha256")
    names = PurePosixPath(path).parts if isinstance(path, str) else ()
    if (
        not isinstance(path, str)
        or not names
        or path.startswith("/")
        or any(n in (".", "..") for n in names)
        or names[0] in reserved
    ):
        return "its path is not a file's path inside the directory"
    if not isinstance(sha256, str) or len(sha256) != 64 or sha256.strip(_HEX64):
        return "its sha256 is not 64 hex digits"
    problem = value_problem(entry, 3)
    return f"{problem[0]} {problem[1]}" if problem else None


def carried(
    directory: Confined, reserved: tuple[str, ...]
) -> tuple[dict[str, dict[str, Any]] | None, list[Dropped]]:
    """The previous manifest's entries whose file is still there with the sha256 recorded,
    by path (None when there was no manifest), and a `Dropped` for every other entry."""
    entries, dropped = previous_entries(directory)
    if entries is None:
        return None, []
    kept: dict[str, dict[str, Any]] = {}
    for number, entry in enumerate(entries, 1):
        problem = entry_problem(entry, (MANIFEST, *reserved))
        if problem is not None:
            path = entry.get("path") if isinstance(entry, dict) else None
            name = path if isinstance(path, str) else f"{MANIFEST} entry {number}"
            dropped.append(Dropped(name, f"entry {number} of the previous manifest: {problem}"))
            continue
        problem = still_there(directory, entry["path"], entry["sha256"])
        if problem is not None:
            dropped.append(Dropped(entry["path"], problem))
        else:
            kept[entry["path"]] = entry
    return kept, dropped


def still_there(directory: Confined, path: str, sha256: str) -> str | None:
    """Why the file a previous entry records is not carried (gone, not a regular file,
    other bytes), or None when it is there with the sha256 recorded."""
    try:
        if directory.size(path) is None:
            return "no longer in the directory"
        actual = sha256_of(directory, path)
    except Unsafe as e:
        return str(e)
    except OSError as e:
        return f"cannot be read ({e.strerror or e})"
    if actual != sha256:
        return f"changed since it was recorded (sha256 {actual[:12]}, recorded {sha256[:12]})"
    return None


def write_manifest(directory: Confined, entries: dict[str, dict[str, Any]], written_by: str) -> Path:
    """Write the manifest all or nothing; OSError (naming no file: the caller names the
    `.part`) when the disk is full or the directory cannot be written."""
    body = {"written_by": written_by, "files": sorted(entries.values(), key=lambda e: str(e["path"]))}
    with directory.open(MANIFEST + PART, "write") as fd:
        write_all(fd, (json.dumps(body, indent=1) + "\n").encode())
        os.fsync(fd)
    directory.replace(MANIFEST + PART, MANIFEST)
    return directory.shown(MANIFEST)
