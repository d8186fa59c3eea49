"""Scoring predictions made elsewhere (`medhal score`).

Each prediction line is `{"idx": <TaskData.idx>, "reply": "<raw model text>"}`. `idx`
is the task's position in the environment's deterministic load order for the given
options (the same order `eval` uses). Every loaded task gets exactly one trace: scored
from its reply, or, when no line gave one, recorded with a `MissingPrediction` error so
it stays in every denominator. An unknown or duplicated idx, or a line without a reply,
is an error naming the file and line.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import verifiers.v1 as vf

from medhal.kit.files import (
    DuplicateKeys,
    LongNumber,
    StagedFiles,
    UnreadableText,
    atomic_open,
    decode_utf8,
    loads_json,
    strip_utf8_bom,
    text_problem,
)
from medhal.kit.lines import offline_agent, record_error
from medhal.kit.task import reply_trace, score_reply


class PredictionError(ValueError):
    """A predictions file line is unusable; the message names the file and line."""


def read_predictions(path: str | Path, known: set[int]) -> dict[int, str]:
    """`{idx: reply}` from a predictions file. Every problem is a PredictionError naming
    file, line and field: bytes that are not UTF-8 (or a UTF-16 file), broken or absurdly
    nested JSON, a key given twice in one object (which value was meant?), an idx that is
    not a usable integer or not a task, a reply that is not writable text (a lone
    surrogate), an idx given twice; and a file with no prediction at all."""
    replies: dict[int, str] = {}
    offset = 0
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            start, offset = offset, offset + len(raw)
            where = f"{path}:{number}"
            try:
                line = decode_utf8(strip_utf8_bom(raw) if number == 1 else raw, number, start)
                if not line.strip():
                    continue
                duplicates = DuplicateKeys()
                row = loads_json(line, duplicates)
            except UnreadableText as e:
                raise PredictionError(f"{where}: {e}") from None
            if not isinstance(row, dict):
                raise PredictionError(f"{where}: expected an object with 'idx' and 'reply'")
            if duplicates.keys:
                raise PredictionError(
                    f"{where}: field {duplicates.keys[0]!r} appears more than once in this object"
                )
            idx, reply = row.get("idx"), row.get("reply")
            if isinstance(idx, LongNumber):
                raise PredictionError(
                    f"{where}: field 'idx' must be an integer, got a number with {idx.digits} digits"
                )
            if not isinstance(idx, int) or isinstance(idx, bool):
                raise PredictionError(f"{where}: field 'idx' must be an integer, got {_short(idx)}")
            if not isinstance(reply, str):
                raise PredictionError(f"{where}: field 'reply' must be a string, got {type(reply).__name__}")
            if text_problem(reply):
                raise PredictionError(f"{where}: field 'reply' {text_problem(reply)}")
            if idx not in known:
                raise PredictionError(
                    f"{where}: idx {idx} is not a task of this environment with these options"
                )
            if idx in replies:
                raise PredictionError(f"{where}: duplicate idx {idx}")
            replies[idx] = reply
    if not replies:
        raise PredictionError(f"{path}: no predictions (the file has no prediction lines)")
    return replies


def _short(value: object) -> str:
    """A value for a one-line message: its repr, cut to 80 characters."""
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:77]}..."


def failed_trace(task: vf.Task, kind: str, message: str) -> vf.Trace:
    """The trace of a rollout of `task` that failed with no reply: one error of type `kind`."""
    trace = reply_trace(task, None)
    record_error(trace, LookupError(message))
    trace.errors[-1].type = kind
    trace.errors[-1].traceback = None
    return trace


def _missing(task: vf.Task) -> vf.Trace:
    return failed_trace(task, "MissingPrediction", f"no prediction for idx {task.data.idx}")


def offline_trace(trace: vf.Trace, model: str) -> vf.Trace:
    """`trace` marked as made outside a rollout: the offline agent with `model`, the verifiers
    version installed, completed."""
    trace.agent = offline_agent(model)
    trace.verifiers = vf.VersionInfo(version=vf_version())
    trace.is_completed = True
    return trace


async def score_tasks(tasks: list[vf.Task], replies: dict[int, str], model: str) -> list[vf.Trace]:
    async def one(task: vf.Task) -> vf.Trace:
        reply = replies.get(task.data.idx)
        trace = _missing(task) if reply is None else await score_reply(task, reply)
        return offline_trace(trace, model)

    return list(await asyncio.gather(*(one(t) for t in tasks)))


def select_run_tasks(
    env_id: str, options: dict[str, Any], num_tasks: int | None = None, shuffle: bool = False
) -> list[vf.Task]:
    """The tasks a run of `env_id` with these taskset options selects (`eval -n num_tasks
    [-s]`), in its order; the options are validated by the environment's own config."""
    from medhal.kit.lines import select_tasks, taskset_class
    from medhal.kit.options import taskset_config

    config = taskset_config(env_id, options)
    return select_tasks(taskset_class(env_id)(config), num_tasks, shuffle)


def vf_version() -> str:
    from verifiers import __version__

    return str(__version__)


def write_traces(traces: list[vf.Trace], out_dir: Path, staged: StagedFiles | None = None) -> Path:
    """Write `out_dir/traces.jsonl` all or nothing: each trace is serialised first (a trace
    that cannot be is an error naming its idx), then the file is written to a temporary
    name and renamed, so a failure never leaves a partial file beside an old report. With
    `staged`, the file joins the caller's staging set (renamed when the caller commits, with
    the report made from it) and its temporary path is returned, to be read meanwhile."""
    path = out_dir / "traces.jsonl"
    lines = []
    for trace in traces:
        try:
            line = json.dumps(trace.to_record(), ensure_ascii=False) + "\n"
            line.encode("utf-8")
        except (ValueError, TypeError) as e:  # UnicodeEncodeError and pydantic's are ValueErrors
            raise PredictionError(
                f"{path}: cannot write the trace of idx {trace.task.data.idx}: {str(e).splitlines()[0]}"
            ) from None
        lines.append(line)
    if staged is not None:
        return staged.write(path, "".join(lines))
    out_dir.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "w") as f:
        f.writelines(lines)
    return path


SCORE_HARNESS = "offline"
"""The harness id `medhal score` records on its traces: how it knows a trace file as its own."""


def written_by_score(path: Path) -> bool:
    """Whether `path` is a trace file `medhal score` wrote (its first trace names the offline
    harness); an eval run's traces, an empty or unreadable file are not."""
    try:
        with open(path, "rb") as f:
            first = f.readline(16 * 1024 * 1024)
        record = json.loads(strip_utf8_bom(first))
        return bool(record["agent"]["harness"]["id"] == SCORE_HARNESS)
    except (OSError, ValueError, TypeError, KeyError, RecursionError):
        return False
