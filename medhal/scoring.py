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

import verifiers.v1 as vf

from medhal.task import reply_trace, score_reply


class PredictionError(ValueError):
    """A predictions file line is unusable; the message names the file and line."""


def read_predictions(path: str | Path, known: set[int]) -> dict[int, str]:
    replies: dict[int, str] = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise PredictionError(f"{where}: not valid JSON ({e.msg})") from e
            if not isinstance(row, dict):
                raise PredictionError(f"{where}: expected an object with 'idx' and 'reply'")
            idx, reply = row.get("idx"), row.get("reply")
            if not isinstance(idx, int) or isinstance(idx, bool):
                raise PredictionError(f"{where}: field 'idx' must be an integer, got {idx!r}")
            if not isinstance(reply, str):
                raise PredictionError(f"{where}: field 'reply' must be a string, got {type(reply).__name__}")
            if idx not in known:
                raise PredictionError(f"{where}: idx {idx} is not a task of this environment with these options")
            if idx in replies:
                raise PredictionError(f"{where}: duplicate idx {idx}")
            replies[idx] = reply
    return replies


def _missing(task: vf.Task) -> vf.Trace:
    trace = reply_trace(task, None)
    trace.capture_error(LookupError(f"no prediction for idx {task.data.idx}"))
    trace.errors[-1].type = "MissingPrediction"
    trace.errors[-1].traceback = None
    return trace


async def score_tasks(tasks: list[vf.Task], replies: dict[int, str], model: str) -> list[vf.Trace]:
    async def one(task: vf.Task) -> vf.Trace:
        reply = replies.get(task.data.idx)
        trace = _missing(task) if reply is None else await score_reply(task, reply)
        trace.agent = vf.AgentInfo(model=model, sampling=vf.SamplingConfig(), harness=vf.HarnessConfig(id="offline"))
        trace.verifiers = vf.VersionInfo(version=vf_version())
        trace.is_completed = True
        return trace

    return list(await asyncio.gather(*(one(t) for t in tasks)))


def vf_version() -> str:
    from verifiers import __version__

    return __version__


def write_traces(traces: list[vf.Trace], out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "traces.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for trace in traces:
            f.write(json.dumps(trace.to_record(), ensure_ascii=False) + "\n")
    return path
