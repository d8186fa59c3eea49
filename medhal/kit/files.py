"""Reading untrusted files and writing output files safely.

Writing: every output (traces.jsonl, report.json/md, plots) goes to a temporary file in
the same directory and is renamed over the target only when it is complete, so a failure
half-way never leaves a 0-byte or partial file beside (or instead of) a good old one.
`os.replace` within one directory is atomic on POSIX and Windows.

Reading: `decode_utf8` and `loads_json` turn the ways a hostile or broken file fails
(bytes that are not UTF-8, a UTF-16 file, JSON nested 100,000 levels deep, an integer of
5,000 digits, duplicate keys, lone surrogates) into one-line messages the callers prefix
with file and line, instead of UnicodeDecodeError, RecursionError or int() ValueErrors.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

MAX_INT_DIGITS = 1000
"""Longest integer literal read as a number. Python refuses to convert more than 4,300
digits (a CPU-time guard); nothing in our files needs more than 20."""
TOO_LONG_INT = 10**MAX_INT_DIGITS
"""The smallest magnitude of an integer over `MAX_INT_DIGITS` digits. Decoders without the
`LongNumber` hook (msgspec, in the trace reader's fast path) return such integers as ints,
up to Python's own limit: the walks below treat them as they treat `LongNumber`."""

UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_UTF32_BOMS = (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")


# ---------------------------------------------------------------------------- writing


TEMP_MARK = ".tmp-medhal-"
"""Temporary files are `<target>.tmp-medhal-<pid>-<random>`: recognisably ours, and naming the
process that writes them, so that one left behind by a killed process (kill -9 leaves no
chance to clean up) can be told from one still being written."""


def _temp_path(path: Path) -> Path:
    remove_stale_temporaries(path)
    return path.with_name(f"{path.name}{TEMP_MARK}{os.getpid()}-{secrets.token_hex(6)}")


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # someone else's process, or we cannot tell: keep its file
    return True


def remove_stale_temporaries(path: Path) -> list[Path]:
    """Remove the temporary files of `path` left by processes that no longer run (a writer
    killed with kill -9); those of running processes stay. The removed paths."""
    removed = []
    prefix = f"{path.name}{TEMP_MARK}"
    with contextlib.suppress(OSError):
        for entry in os.scandir(path.parent):
            if not entry.name.startswith(prefix):
                continue
            pid = entry.name[len(prefix) :].split("-", 1)[0]
            if pid.isdigit() and int(pid) != os.getpid() and not _process_alive(int(pid)):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
                    removed.append(Path(entry.path))
    return removed


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "w", encoding: str = "utf-8") -> Iterator[IO[Any]]:
    """Open `path.tmp-<random>` for writing; on a clean exit flush, fsync and rename it to
    `path`; on an exception remove it and leave `path` as it was.

    `mode` is "w" (text, `encoding`) or "wb" (bytes)."""
    if mode not in ("w", "wt", "wb"):
        raise ValueError(f"atomic_open writes whole files: mode must be 'w' or 'wb', not {mode!r}")
    path = Path(path)
    tmp = _temp_path(path)
    # "x": never write into a file that already exists under the temporary name. Not a
    # `with` block: the file is closed below, and renamed only when complete.
    f: IO[Any]
    if "b" in mode:
        f = open(tmp, "xb")  # noqa: SIM115
    else:
        f = open(tmp, "x", encoding=encoding, newline="")  # noqa: SIM115
    try:
        yield f
        f.flush()
        os.fsync(f.fileno())
        f.close()
        os.replace(tmp, path)
    except BaseException:
        f.close()
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str, encoding: str = "utf-8") -> Path:
    """Write `text` to `path` all or nothing (see `atomic_open`)."""
    with atomic_open(path, "w", encoding=encoding) as f:
        f.write(text)
    return Path(path)


class StagedFiles:
    """Several files written all or nothing: `write` puts each in a complete temporary file
    beside its target now (`remove` marks a target to go); `commit` renames them all at the
    end. Leaving the `with` block without `commit` (an error while rendering the third of
    five files, say) removes every temporary and leaves every target as it was: a report of
    several runs that fails on run 2 leaves no file of run 1, a failed `medhal score` no new
    traces beside the old report.

    The commit itself is all or nothing too: every target is checked before the first rename
    (a directory where a file goes stops it, nothing renamed), each old file is kept aside
    (a hard link, so the target never goes missing) until every rename has succeeded, and a
    rename that still fails (a full disk, a race) puts every renamed target back as it was.
    What it cannot undo is its own process killed between two renames (kill -9): every target
    then holds a whole file, some old and some new."""

    def __init__(self) -> None:
        self._staged: dict[Path, Path | None] = {}
        """Target -> its complete temporary file, or None for a target to remove."""

    def __enter__(self) -> StagedFiles:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()

    def write(self, path: str | Path, content: str | bytes | Iterable[bytes]) -> Path:
        """Stage `content` for `path` (text as UTF-8; an iterable of byte blocks, such as a
        page too large to hold at once, block by block); the temporary path, readable now."""
        path = Path(path)
        self._forget(path)  # the same file again: the later content wins, as it would on disk
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = _temp_path(path)
        self._staged[path] = tmp
        with open(tmp, "xb") as f:
            if isinstance(content, (str, bytes)):
                f.write(content.encode("utf-8") if isinstance(content, str) else content)
            else:
                for block in content:
                    f.write(block)
            f.flush()
            os.fsync(f.fileno())
        return tmp

    def remove(self, path: str | Path) -> None:
        """Stage the removal of `path` (nothing when it does not exist at commit): it goes with
        the renames, or not at all."""
        path = Path(path)
        self._forget(path)
        self._staged[path] = None

    def _forget(self, path: Path) -> None:
        tmp = self._staged.pop(path, None)
        if tmp is not None:
            tmp.unlink(missing_ok=True)

    def commit(self) -> list[Path]:
        """Rename every staged file over its target (and remove those staged to go), all or
        nothing; the targets."""
        for path in self._staged:
            if path.is_dir() and not path.is_symlink():
                raise OSError(
                    f"{path}: is a directory, not a file, so it cannot be replaced: nothing was written"
                )
        kept: list[tuple[Path, Path | None]] = []
        """(target, its old file kept aside, or None where there was none), in commit order."""
        try:
            for path, tmp in list(self._staged.items()):
                kept.append((path, _replace(path, tmp)))
                del self._staged[path]
        except BaseException:
            _put_back(kept)
            raise
        for _, aside in kept:
            if aside is not None:
                with contextlib.suppress(OSError):
                    aside.unlink()
        return [path for path, _ in kept]

    def discard(self) -> None:
        for tmp in self._staged.values():
            if tmp is not None:
                tmp.unlink(missing_ok=True)
        self._staged.clear()


def _replace(path: Path, tmp: Path | None) -> Path | None:
    """Rename `tmp` over `path` (None: remove `path`), keeping the old file under a temporary
    name: the aside path (None: there was no old file). When the rename fails, `path` is left
    as it was and nothing is kept aside."""
    if not os.path.lexists(path):
        if tmp is not None:
            os.replace(tmp, path)
        return None
    aside = _temp_path(path)
    if tmp is None:
        os.replace(path, aside)
        return aside
    try:  # a hard link keeps the old file in place until the rename replaces it
        os.link(path, aside, follow_symlinks=False)
    except OSError:  # a file system without hard links: renamed aside, back on failure
        os.replace(path, aside)
        try:
            os.replace(tmp, path)
        except BaseException:
            os.replace(aside, path)
            raise
        return aside
    try:
        os.replace(tmp, path)
    except BaseException:
        aside.unlink(missing_ok=True)
        raise
    return aside


def _put_back(kept: list[tuple[Path, Path | None]]) -> None:
    """Undo a commit that failed: each target gets its old file back, and a target that had
    none is removed (best effort: a failure here leaves that target's old file aside)."""
    for path, aside in reversed(kept):
        with contextlib.suppress(OSError):
            if aside is None:
                path.unlink(missing_ok=True)
            else:
                os.replace(aside, path)


# ---------------------------------------------------------------------------- reading


class UnreadableText(ValueError):
    """Bytes or text that cannot be read as a file's content; the message says what is
    wrong and what was expected, but not the file: callers add it, with `line` and
    `column` (1-based, within the text given) when the failure has a position."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


def encoding_problem(data: bytes) -> str | None:
    """The start of a file in UTF-16/32 (a byte-order mark, or NUL bytes among the first
    four, which UTF-8 text never has) -> a sentence naming the encoding; else None."""
    if data.startswith(_UTF32_BOMS):
        return "the file is UTF-32 encoded (byte-order mark at byte offset 0); expected UTF-8"
    if data.startswith(_UTF16_BOMS):
        return "the file is UTF-16 encoded (byte-order mark at byte offset 0); expected UTF-8"
    if b"\x00" in data[:4]:
        return "the file looks UTF-16 or UTF-32 encoded (NUL bytes at the start, line 1); expected UTF-8"
    return None


def decode_utf8(data: bytes, first_line: int = 1, offset: int = 0) -> str:
    """Strict UTF-8 decoding of (a part of) a file. On failure the message names the byte
    offset in the file and the line; `first_line` and `offset` say where `data` starts."""
    problem = encoding_problem(data) if offset == 0 else None
    if problem:
        raise UnreadableText(problem, first_line)
    nul = data.find(b"\x00", 0, 4)
    if nul >= 0:
        raise UnreadableText(
            f"NUL byte at byte offset {offset + nul} (line {first_line}): UTF-16 text or binary data; "
            "expected UTF-8",
            first_line,
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = first_line + data.count(b"\n", 0, e.start)
        bad = data[e.start : e.start + 1].hex()
        raise UnreadableText(
            f"not UTF-8 text: byte 0x{bad} at byte offset {offset + e.start} (line {line}); expected UTF-8",
            line,
        ) from None


def strip_utf8_bom(data: bytes) -> bytes:
    return data[len(UTF8_BOM) :] if data.startswith(UTF8_BOM) else data


class LongNumber:
    """An integer literal too long to convert, kept as a marker so validation can name the
    field that holds it (JSON readers turn such literals into this instead of failing)."""

    __slots__ = ("digits",)

    def __init__(self, digits: int) -> None:
        self.digits = digits

    def __repr__(self) -> str:
        return f"<a number with {self.digits} digits>"


def _parse_int(text: str) -> int | LongNumber:
    digits = len(text) - (text[0] == "-")  # the sign is not a digit
    return int(text) if digits <= MAX_INT_DIGITS else LongNumber(digits)


class DuplicateKeys:
    """`object_pairs_hook` that builds dicts (last value wins, as json does) and remembers
    the keys that appeared more than once, in order."""

    def __init__(self) -> None:
        self.keys: list[str] = []

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        if len(out) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen and key not in self.keys:
                    self.keys.append(key)
                seen.add(key)
        return out


_DECODER = json.JSONDecoder(parse_int=_parse_int)
"""One decoder for every line (building one per call costs more than reading a small line)."""


JSON_DEPTH = 1100
"""Levels of nesting the stdlib decoder can always read, wherever it is called from: more
than the 1,000 msgspec reads (the trace reader's fast path), so a line the fast path accepts
is never refused by the reference path for want of stack (Python's recursion limit counts
the caller's frames too, so without this the answer depended on the call site)."""


@contextlib.contextmanager
def _json_headroom() -> Iterator[None]:
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back  # type: ignore[assignment]
    limit, needed = sys.getrecursionlimit(), depth + JSON_DEPTH
    if needed <= limit:
        yield
        return
    sys.setrecursionlimit(needed)
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def loads_json(text: str | bytes, duplicates: DuplicateKeys | None = None) -> Any:
    """`json.loads` for untrusted text: integers over `MAX_INT_DIGITS` digits become
    `LongNumber`, too-deep nesting and bad JSON raise `UnreadableText` with line and column.
    `duplicates`, when given, collects repeated object keys."""
    try:
        with _json_headroom():
            if duplicates is None:
                if isinstance(text, bytes):
                    text = text.decode("utf-8")  # as json.loads does (callers have checked the bytes)
                return _DECODER.decode(text)
            return json.loads(text, parse_int=_parse_int, object_pairs_hook=duplicates)
    except json.JSONDecodeError as e:
        position = f"line {e.lineno} column {e.colno}" if e.lineno > 1 else f"column {e.colno}"
        where = position if e.msg.endswith(" at") else f"at {position}"
        raise UnreadableText(f"not valid JSON ({e.msg} {where})", e.lineno, e.colno) from None
    except RecursionError:
        raise UnreadableText("JSON nested too deeply to read (hundreds of levels of [ or {)") from None


def first_deep_line(text: str, limit: int) -> int | None:
    """The line on which bracket nesting first exceeds `limit` (strings skipped), or None.
    Linear in the text: one regex pass over strings and brackets."""
    import re

    depth = 0
    for match in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > limit:
                return text.count("\n", 0, match.start()) + 1
        elif token in "]}":
            depth -= 1
    return None


def text_problem(value: str) -> str | None:
    """Why `value` cannot be written as UTF-8 (a lone surrogate, e.g. from JSON "\\ud800"),
    or None."""
    if value.isascii():
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        code = ord(value[e.start])
        return (
            "holds a character that is not valid Unicode text "
            f"(lone surrogate U+{code:04X} at character {e.start + 1})"
        )
    return None


def too_long(value: Any) -> bool:
    """An integer over `MAX_INT_DIGITS` digits: a `LongNumber` marker, or an int so long."""
    return type(value) is LongNumber or (type(value) is int and not -TOO_LONG_INT < value < TOO_LONG_INT)


def _bad_scalar(value: Any) -> bool:
    return too_long(value) or (
        isinstance(value, str) and not value.isascii() and text_problem(value) is not None
    )


def _has_problem(value: Any, max_depth: int) -> bool:
    """Whether `value_problem` would find anything: the same walk without building paths,
    which is most of its cost on the (usual) clean value."""
    if not isinstance(value, (dict, list)):
        return _bad_scalar(value)
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth >= max_depth:
            return True
        if isinstance(item, dict):
            if any(_bad_scalar(key) for key in item):
                return True
            children: Iterable[Any] = item.values()
        else:
            children = item
        for child in children:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))
            elif _bad_scalar(child):
                return True
    return False


def value_problem(value: Any, max_depth: int) -> tuple[str, str] | None:
    """Walk a decoded JSON value (iteratively: no recursion) and return (path, problem) for
    the first string that cannot be encoded as UTF-8, integer too long to use, or nesting
    deeper than `max_depth`; None when all is well. `path` is like `[2].name` (relative)."""
    if not _has_problem(value, max_depth):
        return None
    stack: list[tuple[str, Any, int]] = [("", value, 0)]
    while stack:
        path, item, depth = stack.pop()
        if isinstance(item, str):
            problem = text_problem(item)
            if problem:
                return path, problem
        elif isinstance(item, LongNumber):
            return path, f"is a number with {item.digits} digits (at most {MAX_INT_DIGITS} are read)"
        elif too_long(item):
            return path, f"is a number with more than {MAX_INT_DIGITS} digits"
        elif isinstance(item, (dict, list)):
            if depth >= max_depth:
                return path, f"is nested more than {max_depth} levels deep"
            if isinstance(item, dict):
                for key, child in reversed(list(item.items())):
                    if isinstance(key, str) and text_problem(key):
                        return path, f"has a key that {text_problem(key)}"
                    stack.append((f"{path}.{key}" if path else str(key), child, depth + 1))
            else:
                for i in range(len(item) - 1, -1, -1):
                    stack.append((f"{path}[{i}]", item[i], depth + 1))
    return None
