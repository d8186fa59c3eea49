"""What a Hub server says about a dataset repository, read as untrusted: its file listing
(`/api/datasets/<id>/tree/<revision>`) and the configs its dataset card declares.

A mirror (`HF_ENDPOINT`) may send anything, so every value is checked for what it must be
(a listing is a JSON list of entries; a file's size a whole number, its hash 40 or 64 hex
digits) and the card's YAML header is read within bounds: no aliases (a few hundred bytes of
nested aliases stand for billions of values), at most `MAX_CARD_HEADER_CHARS`, brackets
nested at most `MAX_CARD_NESTING` deep, indentation as deep as the parser's stack allows.
Values the card gives that are no pattern are ignored.

Pure: bytes in, values out; bad input is a `ValueError` whose message is one line saying
what is wrong (the caller adds the URL or the card's name)."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from medhal.kit.datasets import LOCAL_FORMATS
from medhal.kit.files import UnreadableText, decode_utf8, loads_json, strip_utf8_bom

MAX_CARD_HEADER_CHARS = 1 << 20
MAX_CARD_NESTING = 100
MAX_PATTERNS = 100
"""Bounds on a dataset card: its YAML header's length, its nesting of `[` and `{` (PyYAML's
scanner takes time growing with the square of that depth; a card needs three or four
levels), the data-file patterns of a split."""
_HEX40 = re.compile(r"[0-9a-f]{40}")
_HEX64 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Check:
    """The hash a file must have: `sha256` of its bytes, or `git-blob` (git's object id:
    sha1 of `blob <size>\\0` + bytes), which the Hub lists for files not stored in LFS."""

    kind: str
    value: str


@dataclass(frozen=True)
class RepoFile:
    path: str
    size: int
    check: Check


# ------------------------------------------------------------------------------ the listing


def parse_tree(content: bytes) -> list[RepoFile]:
    """Files of one page of a Hub tree listing: path, size, and the hash to check (LFS
    sha256, else the git blob id); folders are left out."""
    try:
        entries = loads_json(decode_utf8(content))
    except UnreadableText as e:
        raise ValueError(str(e)) from None
    if not isinstance(entries, list):
        raise ValueError("a JSON list of entries expected")
    files = []
    for number, entry in enumerate(entries, 1):
        try:
            listed = listed_file(entry)
        except ValueError as e:
            raise ValueError(f"entry {number}: {e}") from None
        if listed is not None:
            files.append(listed)
    return files


def listed_file(entry: Any) -> RepoFile | None:
    """One entry of a listing as a file (None for a folder)."""
    if not isinstance(entry, dict):
        raise ValueError("not a JSON object")
    if entry.get("type") != "file":
        return None
    path, size, lfs = entry.get("path"), entry.get("size"), entry.get("lfs")
    if not isinstance(path, str) or not 0 < len(path) <= 4096:
        raise ValueError("path is not a text of 1 to 4,096 characters")
    if type(size) is not int or not 0 <= size < 1 << 63:  # not a bool, a float (1e400) or a LongNumber
        raise ValueError(f"{path}: size is not a whole number of bytes")
    if lfs is not None:
        oid = lfs.get("oid") if isinstance(lfs, dict) else None
        if not isinstance(oid, str) or not _HEX64.fullmatch(oid):
            raise ValueError(f"{path}: lfs.oid is not a sha256 (64 hex digits)")
        return RepoFile(path, size, Check("sha256", oid))
    oid = entry.get("oid")
    if not isinstance(oid, str) or not _HEX40.fullmatch(oid):
        raise ValueError(f"{path}: oid is not a git blob id (40 hex digits)")
    return RepoFile(path, size, Check("git-blob", oid))


# ------------------------------------------------------------------------------ the dataset card


def card_loader() -> type:
    """PyYAML's safe loader, refusing aliases: `*a` repeats what `&a` names, so nine lines of
    nested aliases stand for a billion values (the "billion laughs"), while a dataset card
    has no use for them. Without aliases, what is built is no larger than the text."""
    import yaml

    class CardLoader(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                mark = self.peek_event().start_mark
                raise yaml.composer.ComposerError(
                    None, None, "a YAML alias: a dataset card is read without them", mark
                )
            return super().compose_node(parent, index)

    return CardLoader


def card_header(text: str) -> str | None:
    """The YAML header of a card: between a first line `---` and the next line `---`
    (found in one pass; a lazy regex over the whole card would be quadratic)."""
    first = text.split("\n", 1)
    if first[0].rstrip() != "---" or len(first) == 1:
        return None
    end = re.search(r"^---[ \t]*\r?$", first[1], re.MULTILINE)
    return first[1][: end.start()] if end else None


def first_deep_bracket(text: str, limit: int) -> int | None:
    """The line (0-based) where `[` and `{` first nest deeper than `limit`, or None; one pass,
    counting brackets inside quotes too (a card with a hundred open brackets in one string
    is refused, which no real card has)."""
    depth = 0
    for match in re.finditer(r"[\[\]{}]", text):
        depth += 1 if match.group() in "[{" else -1
        if depth > limit:
            return text.count("\n", 0, match.start())
    return None


def card_configs(card: bytes) -> list[dict[str, Any]]:
    """The `configs` list of a dataset card's YAML header (empty when it has none)."""
    import yaml

    try:
        header = card_header(decode_utf8(strip_utf8_bom(card)))
    except UnreadableText as e:
        raise ValueError(f"the dataset card is not text ({e})") from None
    if header is None:
        return []
    if len(header) > MAX_CARD_HEADER_CHARS:
        raise ValueError(f"the dataset card's YAML header is over {MAX_CARD_HEADER_CHARS:,} characters")
    deep = first_deep_bracket(header, MAX_CARD_NESTING)
    if deep is not None:
        raise ValueError(
            f"the dataset card's YAML header nests [ and {{ more than {MAX_CARD_NESTING} deep "
            f"(line {deep + 2})"  # the header starts on line 2
        )
    try:
        metadata = yaml.load(header, Loader=card_loader())
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as e:
        mark = getattr(e, "problem_mark", None)
        at = f" at line {mark.line + 2}" if mark is not None else ""  # the header starts on line 2
        problem = "nested too deeply" if isinstance(e, RecursionError) else getattr(e, "problem", None)
        raise ValueError(f"the dataset card's YAML header cannot be read{at} ({problem or e})") from None
    if not isinstance(metadata, dict):
        return []
    configs = metadata.get("configs", [])
    return [c for c in configs if isinstance(c, dict)] if isinstance(configs, list) else []


def strings(value: Any) -> list[str]:
    """A card value that is one pattern or a list of them, as a list (anything else: none)."""
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def split_patterns(config: dict[str, Any], split: str) -> list[str]:
    """The data-file patterns of one split of a card's config entry (`data_files` as a
    string, a list of strings, a list of `{split, path}` or a mapping split -> path)."""
    data_files = config.get("data_files")
    if isinstance(data_files, str):
        return [data_files] if split == "train" else []
    if isinstance(data_files, dict):
        return strings(data_files.get(split))
    patterns: list[str] = []
    for entry in data_files if isinstance(data_files, list) else []:
        if isinstance(entry, str):
            patterns += [entry] if split == "train" else []
        elif isinstance(entry, dict) and entry.get("split", "train") == split:
            patterns += strings(entry.get("path"))
    return patterns


def matches(path: str, pattern: str) -> bool:
    """A card pattern against a repository path: `*` stays within one folder, `**` crosses."""
    if "**" not in pattern and pattern.count("/") != path.count("/"):
        return False
    return fnmatch.fnmatchcase(path, pattern.replace("**/", "*").replace("**", "*"))


def split_files(
    files: dict[str, RepoFile], configs: list[dict[str, Any]], config: str | None, split: str
) -> list[RepoFile]:
    """The repository files of a config's split: by the card's declaration of the config,
    else the data files under a folder named after the config."""
    name = config or "default"
    entry = next((c for c in configs if c.get("config_name", "default") == name), None)
    if entry is not None:
        patterns = split_patterns(entry, split)
        if len(patterns) > MAX_PATTERNS:
            raise ValueError(
                f"the dataset card gives {len(patterns):,} data-file patterns for config {name!r}, "
                f"more than the {MAX_PATTERNS:,} read"
            )
        return [f for p, f in sorted(files.items()) if any(matches(p, pattern) for pattern in patterns)]
    folder = PurePosixPath(name)
    return [
        f
        for p, f in sorted(files.items())
        if PurePosixPath(p).parent == folder and PurePosixPath(p).suffix in LOCAL_FORMATS
    ]
