"""prime-rl's own trace files, read as runs: one eval epoch (one environment's episodes at
one training step) is one run.

prime-rl (Prime Intellect's trainer, not on PyPI) records every rollout as one verifiers
`Episode.to_record()` line, in one of two layouts:

- **`rollouts`** (prime-rl up to the snapshot `559b447`, `src/prime_rl/monitors/file.py`):
  `<output_dir>/rollouts/step_<N>/<kind>/<subset>/traces.jsonl`, kind `train` or `eval`,
  subset `all` (every episode, as it lands) or `effective` (those that count: no error).
  Only `all` is read (`effective` leaves errors out, so its denominators shrink). Nothing
  says how many episodes an epoch should have, so the expected tasks are judged from the
  records: prime-rl evaluates the first `num_examples` tasks of the taskset, in order
  (`EvalEnv.start`), so the tasks 0 to the highest idx seen are expected, each with the most
  rollouts any task has. A gap or a short group shows; a run cut after its last task cannot.
- **`stream`** (from prime-rl PR #3444): `<run_dir>/monitors/file/traces/stream.jsonl` holds
  every episode of the run once (all kinds, environments and steps, in arrival order),
  `stream.index.jsonl` one row per episode (only counted here: more rows than episodes means
  the stream lost some), `annotations/` facts learnt later (training-side: advantages, token
  streams; not read, they change no reward or reading), and `monitors/file/plan.json`
  (`{env: {step: expected episodes}}`, written when an eval epoch starts) the episodes each
  epoch should have. PR #3465 splits the stream into `stream/<NNNNN>.jsonl` chunks and seals
  full ones as `.jsonl.zst`; plain chunks are read, a sealed one must be decompressed first.

Episodes are told apart by their recorded identity: `run.work.type` (or `run.type`) is the
kind, `env.name` (else `env.id`) the environment, `run.work.step` the step. Everything read
is untrusted: a field of the wrong type is an error naming the file, line and field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from medhal.reports.traces import TraceFileError, TraceRecord, parse_trace_line

ROLLOUTS = "rollouts"
STREAM = "stream"
_STEP_DIR = re.compile(r"step_(\d{1,12})")


@dataclass(frozen=True)
class Expected:
    """What prime-rl's files say about an epoch that its traces do not: which episodes
    they are, and how many it planned."""

    part: str
    """Which episodes of the files: `eval episodes of env 'medhallu' at step 0`."""
    episodes: int | None
    """Episodes planned (plan.json); None where prime-rl writes no count."""
    source: str
    """Where the expected count comes from, in words."""


@dataclass(frozen=True)
class Epoch:
    """One environment's eval episodes at one step: a run."""

    layout: str
    root: Path
    env: str
    step: int | None
    files: tuple[Path, ...]
    planned: int | None
    plan_file: Path | None
    benchmark: str | None
    """The benchmark its first episode's task names (None: not a medhal environment's)."""
    first: str
    """Where its first episode is (`file:line`)."""

    @property
    def expected(self) -> Expected:
        at = f"step {self.step}" if self.step is not None else "no step"
        part = f"prime-rl eval episodes of env {self.env!r} at {at}"
        if self.planned is not None and self.plan_file is not None:
            source = f"{self.plan_file.name}: {self.planned} episodes planned"
        else:
            source = (
                "the records (prime-rl writes no expected count here): tasks 0 to the highest idx "
                "seen, each with the most rollouts any task has"
            )
        return Expected(part, self.planned, source)


def read_epochs(sinks: Sequence[tuple[Epoch, Callable[[TraceRecord], None]]]) -> None:
    """Each epoch's episodes, as trace records in file order, handed to its sink: one pass
    over each set of files however many epochs share it (a stream holds every epoch of the
    run, so a pass per epoch would read it once per epoch)."""
    by_files: dict[tuple[Path, ...], dict[tuple[str, int | None], Callable[[TraceRecord], None]]] = {}
    for epoch, sink in sinks:
        by_files.setdefault(epoch.files, {})[(epoch.env, epoch.step)] = sink
    for files, wanted in by_files.items():
        for file in files:
            for number, raw, offset, stamp in _stamped_lines(file):
                to = wanted.get((str(stamp.env), stamp.step)) if stamp.kind == "eval" else None
                if to is not None:
                    to(_record(raw, file, number, offset, stamp))


def _record(raw: bytes, file: Path, number: int, offset: int, stamp: _Stamp) -> TraceRecord:
    record = parse_trace_line(raw, str(file), number, offset)
    if record.rollout_id is None:  # an episode that failed before its trace: its own id
        record.rollout_id = stamp.id
    return record


@dataclass(frozen=True)
class _Stamp:
    id: str | None
    kind: str | None
    env: str | None
    step: int | None


class _Identity(msgspec.Struct):
    """The fields of an episode record that say which run, environment and step it is;
    the rest of the line is skipped by the decoder."""

    id: Any = None
    env: Any = None
    run: Any = None


_decode_identity = msgspec.json.Decoder(_Identity).decode


def _stamp(raw: bytes, file: Path, number: int, offset: int) -> _Stamp:
    """Which run, environment and step the episode on this line is."""
    where = f"{file}:{number}"
    try:
        row = _decode_identity(raw)
    except (msgspec.DecodeError, RecursionError):
        parse_trace_line(raw, str(file), number, offset)  # the reference reader names the problem
        raise TraceFileError(f"{where}: not an episode record") from None
    env = _object(row.env, "env", where)
    run = _object(row.run, "run", where)
    work = _object(run.get("work"), "run.work", where)
    kind = _text(work.get("type") if work else run.get("type"), "run.work.type", where)
    if kind is None:
        raise TraceFileError(f"{where}: field 'run' names no kind of work: not an episode prime-rl wrote")
    step = work.get("step")
    if step is not None and (type(step) is not int or step < 0):
        raise TraceFileError(f"{where}: field 'run.work.step' is not a step number (got {step!r:.40})")
    name = _text(env.get("name"), "env.name", where) or _text(env.get("id"), "env.id", where)
    if name is None:
        raise TraceFileError(f"{where}: field 'env.name' is missing: the episode names no environment")
    return _Stamp(_text(row.id, "id", where), kind, name, step)


def _object(value: Any, label: str, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise TraceFileError(f"{where}: field {label!r} is not an object (got {type(value).__name__})")
    return value


def _text(value: Any, label: str, where: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TraceFileError(f"{where}: field {label!r} is not a string (got {type(value).__name__})")
    return value


def _stamped_lines(file: Path) -> Iterator[tuple[int, bytes, int, _Stamp]]:
    offset = 0
    with open(file, "rb") as f:
        for number, raw in enumerate(f, start=1):
            if not raw.isspace():
                yield number, raw, offset, _stamp(raw, file, number, offset)
            offset += len(raw)


# ---------------------------------------------------------------------------- finding runs


def epochs(path: Path) -> list[Epoch] | None:
    """The eval epochs under `path`, in (environment, step) order, when `path` is a prime-rl
    run directory, its `rollouts` folder, a `rollouts/step_N` folder (or `eval`, `eval/all`,
    its `traces.jsonl`) or its `monitors/file` stream; None when it is none of these (an
    `eval` run, a trace file). A prime-rl path medhal cannot report is an error saying why."""
    found = _layout(path)
    if found is None:
        return None
    layout, root, step = found
    if layout == ROLLOUTS:
        return _rollouts_epochs(root, step)
    return _stream_epochs(root)


_STREAM_TAILS = (
    ("monitors", "file", "traces", "stream.jsonl"),
    ("monitors", "file", "traces"),
    ("monitors", "file"),
)


def _layout(path: Path) -> tuple[str, Path, int | None] | None:
    """(layout, run root, the one step a rollouts path names) for a prime-rl path."""
    parts = path.parts
    for tail in (
        ("monitors", "file", "traces", "stream.jsonl"),
        ("monitors", "file", "traces"),
        ("monitors", "file"),
    ):
        if parts[-len(tail) :] == tail:
            return STREAM, Path(*parts[: -len(tail)]) if len(parts) > len(tail) else Path("."), None
    for at in range(max(0, len(parts) - 5), len(parts)):
        if parts[at] == "rollouts" and (at + 1 < len(parts) and _STEP_DIR.fullmatch(parts[at + 1])):
            root = Path(*parts[:at]) if at else Path(".")
            return ROLLOUTS, root, _rollouts_step(path, parts[at + 1 :])
    if not path.is_dir():
        return None
    if path.name == "rollouts" and any(_STEP_DIR.fullmatch(p.name) for p in _children(path)):
        return ROLLOUTS, path.parent, None
    has_rollouts = any(_STEP_DIR.fullmatch(p.name) for p in _children(path / "rollouts"))
    has_stream = (path / "monitors" / "file" / "traces").is_dir()
    if has_rollouts and has_stream:
        raise TraceFileError(
            f"{path}: holds both prime-rl layouts (rollouts/ and monitors/file/traces/); "
            "give the one to report (PATH/rollouts or PATH/monitors/file)"
        )
    if has_rollouts:
        return ROLLOUTS, path, None
    if has_stream:
        return STREAM, path, None
    return None


def _children(folder: Path) -> list[Path]:
    return sorted(folder.iterdir()) if folder.is_dir() else []


def _rollouts_step(path: Path, below: tuple[str, ...]) -> int:
    """The step a path below `rollouts/` names (`step_N`, `step_N/eval`, ...), refusing the
    paths that are not an evaluation's every episode."""
    match = _STEP_DIR.fullmatch(below[0])
    assert match is not None  # _layout matched it
    kind, subset = (*below[1:3], "", "")[:2]
    if kind == "train":
        raise TraceFileError(
            f"{path}: training rollouts are not an evaluation (each step samples a batch of training "
            "tasks); report the eval rollouts (rollouts/step_N/eval/all)"
        )
    if subset == "effective":
        raise TraceFileError(
            f"{path}: prime-rl's effective subset keeps only the episodes without error, so its "
            "denominators shrink; report every episode: rollouts/step_N/eval/all"
        )
    if kind not in ("", "eval") or subset not in ("", "all") or below[3:] not in ((), ("traces.jsonl",)):
        raise TraceFileError(f"{path}: not a prime-rl rollouts/step_<N>/eval/all folder")
    return int(match.group(1))


def _rollouts_epochs(root: Path, only_step: int | None) -> list[Epoch]:
    steps = sorted(
        int(m.group(1))
        for p in _children(root / "rollouts")
        if (m := _STEP_DIR.fullmatch(p.name)) and p.is_dir()
    )
    found: list[Epoch] = []
    for step in steps if only_step is None else [only_step]:
        file = root / "rollouts" / f"step_{step}" / "eval" / "all" / "traces.jsonl"
        if not file.is_file():
            if only_step is not None:
                raise TraceFileError(f"{file}: no such file (prime-rl writes eval episodes there)")
            continue
        firsts: dict[tuple[str, int | None], tuple[str | None, str]] = {}
        for number, raw, offset, stamp in _stamped_lines(file):
            if stamp.kind != "eval" or stamp.step != step:
                raise TraceFileError(
                    f"{file}:{number}: a {stamp.kind} episode of step {stamp.step} in the eval "
                    f"episodes of step {step}"
                )
            _note_first(firsts, stamp, raw, file, number, offset)
        found += [
            Epoch(ROLLOUTS, root, env, step, (file,), None, None, benchmark, first)
            for (env, _), (benchmark, first) in firsts.items()
        ]
    if not found:
        raise TraceFileError(f"{root / 'rollouts'}: no eval episodes (rollouts/step_N/eval/all/traces.jsonl)")
    return sorted(found, key=lambda e: (e.env, e.step or 0))


def _stream_files(traces: Path) -> tuple[Path, ...]:
    """The stream's files in order: `stream.jsonl` (PR #3444) or the plain chunks of
    `stream/` (PR #3465); a sealed chunk without its plain twin is an error."""
    single, chunks = traces / "stream.jsonl", traces / "stream"
    if single.is_file():
        return (single,)
    if not chunks.is_dir():
        raise TraceFileError(f"{traces}: no stream.jsonl or stream/ (prime-rl's episode stream)")
    numbers: dict[int, Path] = {}
    for file in chunks.iterdir():
        head, _, rest = file.name.partition(".")
        if not head.isdigit() or rest not in ("jsonl", "jsonl.zst"):
            raise TraceFileError(f"{file}: not a stream chunk (<number>.jsonl or <number>.jsonl.zst)")
        if rest == "jsonl":
            numbers[int(head)] = file
        elif not (chunks / f"{head}.jsonl").is_file():
            raise TraceFileError(
                f"{file}: a sealed (zstd) chunk; medhal reads plain chunks: decompress it beside "
                f"itself (zstd -d {file.name}) or run prime-rl with the file monitor's compress = false"
            )
    return tuple(numbers[n] for n in sorted(numbers))


def _stream_epochs(root: Path) -> list[Epoch]:
    monitor = root / "monitors" / "file"
    files = _stream_files(monitor / "traces")
    plan_file = monitor / "plan.json"
    plan = read_plan(plan_file) if plan_file.is_file() else {}
    present: dict[tuple[str, int | None], tuple[str | None, str]] = {}
    lines = 0
    for file in files:
        for number, raw, offset, stamp in _stamped_lines(file):
            lines += 1
            if stamp.kind == "eval":
                _note_first(present, stamp, raw, file, number, offset)
    _check_index(monitor / "traces" / "stream.index.jsonl", lines, files)
    found = []
    for (env, step), (benchmark, first) in present.items():
        planned = _planned(plan, env, step)
        source = plan_file if planned is not None else None
        found.append(Epoch(STREAM, root, env, step, files, planned, source, benchmark, first))
    covered = {(e.env, e.step) for e in found if e.planned is not None}
    for env, steps in plan.items():
        for step, planned in steps.items():
            if planned and (env, step) not in covered and (env, None) not in covered:
                raise TraceFileError(
                    f"{plan_file}: env {env!r} step {step} plans {planned} episodes; the stream holds none"
                )
    if not found:
        raise TraceFileError(f"{monitor / 'traces'}: no eval episodes in the stream")
    return sorted(found, key=lambda e: (e.env, e.step if e.step is not None else -1))


def _note_first(
    firsts: dict[tuple[str, int | None], tuple[str | None, str]],
    stamp: _Stamp,
    raw: bytes,
    file: Path,
    number: int,
    offset: int,
) -> None:
    """An epoch's first episode, read in full once: the benchmark its task names."""
    key = (str(stamp.env), stamp.step)
    if key not in firsts:
        benchmark = _record(raw, file, number, offset, stamp).data.get("benchmark")
        firsts[key] = (benchmark if isinstance(benchmark, str) else None, f"{file}:{number}")


def _planned(plan: dict[str, dict[int, int]], env: str, step: int | None) -> int | None:
    """The episodes plan.json expects of an epoch. An episode without a step (a standalone
    evaluation run's) takes its env's one planned epoch, if it has exactly one."""
    steps = plan.get(env, {})
    if step is None:
        return next(iter(steps.values())) if len(steps) == 1 else None
    return steps.get(step)


def read_plan(path: Path) -> dict[str, dict[int, int]]:
    """plan.json: `{env: {step: expected episodes}}`, checked."""
    try:
        plan = json.loads(path.read_bytes())
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise TraceFileError(f"{path}: not readable JSON ({str(e)[:200]})") from None
    if not isinstance(plan, dict):
        raise TraceFileError(f"{path}: not an object of env -> step -> expected episodes")
    out: dict[str, dict[int, int]] = {}
    for env, steps in plan.items():
        if not isinstance(steps, dict):
            raise TraceFileError(f"{path}: field {env!r} is not an object of step -> expected episodes")
        for step, expected in steps.items():
            if not (isinstance(step, str) and step.isdigit()) or type(expected) is not int or expected < 0:
                raise TraceFileError(
                    f"{path}: field '{env}.{step}' is not a step number with a count of episodes "
                    f"(got {expected!r:.40})"
                )
            out.setdefault(env, {})[int(step)] = expected
    return out


def _check_index(index: Path, lines: int, files: tuple[Path, ...]) -> None:
    """The index has a row for every episode written before it (prime-rl flushes the stream
    first): more rows than episodes means episodes were lost from the stream."""
    if not index.is_file():
        return
    with open(index, "rb") as f:
        rows = sum(1 for line in f if not line.isspace())
    if rows > lines:
        shown = files[0] if len(files) == 1 else files[0].parent
        raise TraceFileError(
            f"{index}: indexes {rows} episodes, {shown} holds {lines}: the stream lost episodes"
        )
