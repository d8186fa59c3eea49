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
it automatically. Run it only while no `eval` is writing to the directory. What repair sees
of a writer is refused, nothing changed: a process that holds the file open for writing
(found in /proc, on Linux: a writer paused inside a line), a file modified within the last
`QUIET_SECONDS` (a writer between two writes; `--force` says none is), and a file that
changes while it is read (size or modification time).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from medhal.reports.traces import TRACE_FILES, TraceFileError, parse_trace_line

CHUNK = 1 << 20
QUIET_SECONDS = 10
"""How long a trace file must have been left alone before repair changes it (without
`force`): verifiers writes each trace with one append, so a file a live eval writes is
modified at least this often only while rollouts finish, and a killed eval's is still."""


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
    why: str = "not valid JSON"
    """What was wrong with the moved line."""

    def describe(self) -> str:
        if self.moved:
            return (
                f"{self.path}: moved the partial line {self.lines + 1} ({self.moved:,} bytes, no newline, "
                f"{self.why}) to {self.path.name}.partial; the file now ends after line {self.lines}"
            )
        if self.added_newline:
            return f"{self.path}: the last line ({self.lines}) was complete but lacked its newline; added it"
        return f"{self.path}: intact ({self.lines} lines), nothing to do"


def _tail_problem(line: bytes) -> str | None:
    """Why a last line without its newline cannot be kept as a line (None: it can)."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return "not valid JSON"
    if not isinstance(value, dict):
        return f"valid JSON but not an object (a {type(value).__name__})"
    return None


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
    """Every non-blank line before `stop` must be a trace `medhal report` reads (the same
    reader, so "intact" means what the report will accept); returns how many lines."""
    count, offset = 0, 0
    with open(path, "rb") as f:
        for count, raw in enumerate(iter(f.readline, b""), start=1):
            if f.tell() > stop:  # the tail: not part of the complete lines
                return count - 1
            if not raw.isspace():
                try:
                    parse_trace_line(raw, str(path), count, offset)
                except TraceFileError as e:
                    raise RepairError(
                        f"{e}; it is not the last line, so it was not cut short by an interrupted "
                        "write: not repaired (nothing was changed)"
                    ) from None
            offset += len(raw)
    return count


def _state(path: Path) -> tuple[int, int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns, st.st_ino


def _unchanged(path: Path, before: tuple[int, int, int]) -> None:
    """Refuse when the file changed since `before` (an eval still appending to it)."""
    if _state(path) != before:
        raise RepairError(
            f"{path}: the file changed while it was being repaired (is an eval still writing to it?); "
            "not repaired (nothing was changed): run repair again once nothing writes to it"
        )


def _writers(path: Path) -> list[int]:
    """The processes that hold `path` open for writing, found in /proc (Linux; elsewhere,
    and for other users' processes, which /proc does not show, none are found)."""
    st = path.stat()
    found = []
    try:
        pids = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.stat(f"/proc/{pid}/fd/{fd}")
                if (target.st_dev, target.st_ino) == (st.st_dev, st.st_ino) and _for_writing(pid, fd):
                    found.append(int(pid))
                    break
            except OSError:
                continue
    return found


def _for_writing(pid: str, fd: str) -> bool:
    """Whether descriptor `fd` of process `pid` was opened for writing (its fdinfo flags)."""
    with open(f"/proc/{pid}/fdinfo/{fd}", encoding="ascii") as f:
        for line in f:
            if line.startswith("flags:"):
                return int(line.split()[1], 8) & os.O_ACCMODE in (os.O_WRONLY, os.O_RDWR)
    return False


def _no_writer(path: Path, before: tuple[int, int, int], force: bool) -> None:
    """Refuse to change a file a writer may still be writing (see the module docstring)."""
    writers = _writers(path)
    if writers:
        pids = ", ".join(map(str, writers))
        raise RepairError(
            f"{path}: process {pids} has it open for writing (an eval still running?); not repaired "
            "(nothing was changed): run repair again once it has stopped"
        )
    age = time.time() - before[1] / 1e9
    if not force and age < QUIET_SECONDS:
        raise RepairError(
            f"{path}: modified {max(age, 0):.0f} s ago, within {QUIET_SECONDS} s (an eval still writing?); "
            "not repaired (nothing was changed): run repair again once nothing writes to it, or give "
            "--force if nothing does"
        )


def repair_file(path: Path, force: bool = False) -> Repair:
    """Repair one trace file (see the module docstring); nothing changes unless needed.
    `force`: the file may have been modified within `QUIET_SECONDS` (its writer is known
    to have stopped)."""
    before = _state(path)
    size = before[0]
    tail_start = _tail_start(path, size)
    complete = _check_complete_lines(path, tail_start)
    if tail_start == size:
        _unchanged(path, before)
        return Repair(path, complete, 0)
    with open(path, "rb") as f:
        f.seek(tail_start)
        tail = f.read(size - tail_start)
    if not tail.strip():
        _unchanged(path, before)
        return Repair(path, complete, 0)
    why = _tail_problem(tail)
    if why is None:
        try:
            parse_trace_line(tail, str(path), complete + 1, tail_start)
        except TraceFileError as e:
            raise RepairError(f"{e}; not repaired (nothing was changed)") from None
    _no_writer(path, before, force)
    # Opened for writing before anything is written anywhere: a file that cannot be
    # written (read-only) is refused here, with no byte copied to the .partial file.
    with open(path, "r+b") as target:
        _unchanged(path, before)
        if why is None:
            target.seek(0, os.SEEK_END)
            target.write(b"\n")
            target.flush()
            os.fsync(target.fileno())
            return Repair(path, complete + 1, 0, added_newline=True)
        # Keep the bytes first (flushed to disk), then cut: a crash in between leaves them
        # in both places, never in neither. A change in between takes the copy back.
        partial = path.with_name(path.name + ".partial")
        with open(partial, "ab") as f:
            kept = f.tell()
            f.write(tail)
            f.flush()
            os.fsync(f.fileno())
            try:
                _unchanged(path, before)
            except RepairError:
                f.truncate(kept)
                raise
        target.truncate(tail_start)
    return Repair(path, complete, len(tail), why=why)


def repair_run(run: str | Path, force: bool = False) -> list[Repair]:
    """Repair every trace file of a run directory (or the one trace file given); `force`:
    see `repair_file`."""
    run = Path(run)
    if run.is_file():
        return [repair_file(run, force)]
    if not run.is_dir():
        raise RepairError(f"{run}: no such file or directory")
    files = [run / name for name in TRACE_FILES if (run / name).is_file()]
    if not files:
        raise RepairError(f"{run}: no {' or '.join(TRACE_FILES)} in this directory")
    return [repair_file(f, force) for f in files]
