"""`medhal repair RUN_DIR`: make a killed run's trace file resumable again.

An `eval` killed mid-write (kill -9, OOM, a full disk) can leave the last line of
`traces.jsonl` cut short. `eval --resume` then dies inside verifiers with a
JSONDecodeError while re-reading the file, so the run can be neither resumed nor
reported. Repair moves that partial last line, byte for byte, to `traces.jsonl.partial`
(appended, so a second repair loses nothing either), cuts the trace file back to its last
complete line, and says what it did; `--resume` then re-runs the cut item like any other
missing one. Only the last line is ever repaired: a corrupt line elsewhere was not caused
by an interrupted write, and is reported (file and line) for a person to look at.

It is a separate step, run before `eval --resume`: verifiers' resume has no hook to run
it automatically. Run it only while no `eval` is writing to the directory.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from medhal.reports.traces import TRACE_FILES

CHUNK = 1 << 20


class RepairError(ValueError):
    """The file cannot be repaired safely; the message names the file and line."""


@dataclass(frozen=True)
class Repair:
    path: Path
    lines: int
    """Complete lines the file holds after the repair."""
    moved: int
    """Bytes moved to the `.partial` file (0: none)."""
    added_newline: bool = False

    def describe(self) -> str:
        if self.moved:
            return (
                f"{self.path}: moved the partial line {self.lines + 1} ({self.moved:,} bytes, no newline, "
                f"not valid JSON) to {self.path.name}.partial; the file now ends after line {self.lines}"
            )
        if self.added_newline:
            return f"{self.path}: the last line ({self.lines}) was complete but lacked its newline; added it"
        return f"{self.path}: intact ({self.lines} lines), nothing to do"


def _is_json_object(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return False


def _tail_start(path: Path, size: int) -> int:
    """Offset just after the last newline (0 when there is none), read backwards in chunks
    so a 23 MB partial line costs no more than reading it once."""
    with open(path, "rb") as f:
        end = size
        while end > 0:
            start = max(0, end - CHUNK)
            f.seek(start)
            at = f.read(end - start).rfind(b"\n")
            if at >= 0:
                return start + at + 1
            end = start
    return 0


def _check_complete_lines(path: Path, stop: int) -> int:
    """Every non-blank line before `stop` must be a JSON object; returns how many lines."""
    count = 0
    with open(path, "rb") as f:
        for count, raw in enumerate(iter(f.readline, b""), start=1):
            if f.tell() > stop:  # the tail: not part of the complete lines
                return count - 1
            if raw.strip() and not _is_json_object(raw):
                raise RepairError(
                    f"{path}:{count}: this line is not valid JSON, and it is not the last line, so it was "
                    "not cut short by an interrupted write; not repaired (nothing was changed)"
                )
    return count


def repair_file(path: Path) -> Repair:
    """Repair one trace file (see the module docstring); nothing changes unless needed."""
    size = path.stat().st_size
    tail_start = _tail_start(path, size)
    complete = _check_complete_lines(path, tail_start)
    if tail_start == size:
        return Repair(path, complete, 0)
    with open(path, "rb") as f:
        f.seek(tail_start)
        tail = f.read()
    if not tail.strip():
        return Repair(path, complete, 0)
    if _is_json_object(tail):
        with open(path, "ab") as f:
            f.write(b"\n")
            f.flush()
            os.fsync(f.fileno())
        return Repair(path, complete + 1, 0, added_newline=True)
    # Keep the bytes first (flushed to disk), then cut: a crash in between leaves them in
    # both places, never in neither.
    with open(path.with_name(path.name + ".partial"), "ab") as f:
        f.write(tail)
        f.flush()
        os.fsync(f.fileno())
    os.truncate(path, tail_start)
    return Repair(path, complete, len(tail))


def repair_run(run: str | Path) -> list[Repair]:
    """Repair every trace file of a run directory (or the one trace file given)."""
    run = Path(run)
    if run.is_file():
        return [repair_file(run)]
    if not run.is_dir():
        raise RepairError(f"{run}: no such file or directory")
    files = [run / name for name in TRACE_FILES if (run / name).is_file()]
    if not files:
        raise RepairError(f"{run}: no {' or '.join(TRACE_FILES)} in this directory")
    return [repair_file(f) for f in files]
