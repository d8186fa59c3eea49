"""Streaming reader for saved rollouts.

Reads verifiers 0.2 `traces.jsonl` (one full trace per line), verifiers 0.4 `traces.jsonl`
(one episode per line, its agent's trace inside, rewards as `{score, weight}`) and the older v0
`results.jsonl` rows, one line at a time, into flat `TraceRecord`s. A line that is not
a JSON object, or lacks what a trace must have, is an error naming the file and line:
nothing is skipped. A rollout that errored is still a record (with `errors` set), so
reports keep it in their denominators.

Each line is decoded by msgspec first (`_fast_record`); a line it refuses, or that fails a
check, is read again by the reference path (stdlib `json`, full checks), which words every
message. Both paths give the same record for every line (tests/medhal/test_traces_fast_path.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from medhal.kit.files import (
    LongNumber,
    UnreadableText,
    decode_utf8,
    loads_json,
    strip_utf8_bom,
    text_problem,
    too_long,
    value_problem,
)
from medhal.kit.reasoning import truncation
from medhal.kit.shards import parse_shard

TRACE_FILES = ("traces.jsonl", "results.jsonl")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD]")
"""The start of a JSON escape that may stand for a lone surrogate (\\ud800 to \\udfff)."""
T = TypeVar("T")
MAX_DEPTH = 64
"""Deepest nesting accepted in the parts of a trace a report reads (task data, info)."""


class TraceFileError(ValueError):
    """A trace file line cannot be read; the message names the file and line."""


@dataclass(slots=True)
class TraceRecord:
    """What a report needs from one rollout, in a shape shared by both file formats."""

    path: str
    line: int
    data: dict[str, Any]
    """The task's data (`task.data`): the TaskData fields, including `idx` and `benchmark`."""
    task_type: str | None
    reply: str | None
    """Final assistant text; None when the rollout produced none."""
    rewards: dict[str, float]
    metrics: dict[str, float]
    info: dict[str, Any]
    errors: list[dict[str, Any]]
    model: str | None = None
    sampling: dict[str, Any] = field(default_factory=dict)
    verifiers_version: str | None = None
    reasoning: str | None = None
    """The reasoning the model returned beside its final reply (`reasoning_content`, as vLLM's
    `--reasoning-parser` gives it): shown, never read as the answer. None without one."""
    finish_reason: str | None = None
    """Why generation of the final reply stopped (`stop`, `length`, ...), from the model call
    that produced it; None where the trace records none (a v0 row, a scored predictions file)."""
    rollout_id: str | None = None
    """The trace's own id (verifiers gives each rollout a uuid; it writes no rollout number):
    with the task idx, what tells one rollout of a task from another, and a duplicated line
    from a second rollout. A v0 results row has no id of its own (vf-eval writes the
    example's id only): it is known by its file and line, so each row is a rollout. None for
    a trace without an id (hand-made)."""
    usage: tuple[int, int] | None = None
    """(prompt tokens, completion tokens) over the rollout's model calls (`_call_totals`)."""
    latency: float | None = None
    """Seconds the rollout's model calls took, summed (`_call_totals`)."""

    @property
    def errored(self) -> bool:
        return bool(self.errors)

    @property
    def truncated(self) -> str | None:
        """Where the token limit cut the final reply (`medhal.kit.reasoning.truncation`), or None."""
        return None if self.errors else truncation(self.reply, self.finish_reason)

    @property
    def error_message(self) -> str | None:
        if not self.errors:
            return None
        last = self.errors[-1]
        kind = last.get("type") or "Error"
        message = last.get("message") or ""
        if not message.strip():
            message = describe_silent_error(kind, last.get("status_code"))
        return f"{kind}: {message}"

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def describe_silent_error(kind: str, status_code: Any) -> str:
    """Words for an error recorded without a message. verifiers 0.2.1 records a transport
    failure whose exception has no text (httpx.ReadError('') on a connection reset) as a
    ProviderError with an empty message and the status it chose for the fault:
    503 for a connection failure, 504 for a timeout (verifiers/v1/clients/eval.py:156-161,
    verifiers/v1/errors.py:114-125)."""
    if kind == "ProviderError" and status_code == 503:
        return (
            "no detail recorded (503: the connection to the endpoint failed, e.g. it was reset or closed "
            "before a reply)"
        )
    if kind == "ProviderError" and status_code == 504:
        return "no detail recorded (504: the request to the endpoint timed out)"
    if isinstance(status_code, int) and not isinstance(status_code, bool):
        return f"no detail recorded (status {status_code})"
    return "no detail recorded"


def resolve_trace_file(path: str | Path) -> Path:
    """A run directory or a trace file -> the trace file."""
    path = Path(path)
    if path.is_dir():
        for name in TRACE_FILES:
            if (path / name).is_file():
                return path / name
        raise TraceFileError(f"{path}: no {' or '.join(TRACE_FILES)} in this directory")
    if not path.is_file():
        raise TraceFileError(f"{path}: no such file or directory")
    return path


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text", ""), str)
        )
    return ""


def _field(row: dict[str, Any], name: str, where: str, kind: type = dict, label: str | None = None) -> Any:
    """`row[name]` checked to be an object (or a list); absent or null gives an empty one."""
    value = row.get(name)
    if value is None:
        return kind()
    if not isinstance(value, kind):
        what = "an object" if kind is dict else "a list"
        raise TraceFileError(f"{where}: field {label or name!r} is not {what} (got {type(value).__name__})")
    return value


def _kind(value: Any) -> str:
    return f"a number with {value.digits} digits" if isinstance(value, LongNumber) else type(value).__name__


def _text_or_none(row: dict[str, Any], name: str, where: str, label: str) -> str | None:
    value = row.get(name)
    if value is not None and not isinstance(value, str):
        raise TraceFileError(f"{where}: field {label!r} is not a string (got {_kind(value)})")
    if value is not None and text_problem(value):
        raise TraceFileError(f"{where}: field {label!r} {text_problem(value)}")
    return value


def _checked(value: T, label: str, where: str, escapes: bool = True) -> T:
    """`value` with every text writable as UTF-8, no unusable number, bounded nesting.

    `escapes=False` says the line held no `\\ud...` escape, the only way JSON text read
    as strict UTF-8 can hold a lone surrogate: then only the containers are walked (`_plain`),
    and the full check, which names the field, runs only when that walk finds something."""
    if not escapes and _plain_known(value, label):
        return value
    found = value_problem(value, MAX_DEPTH)
    if found:
        path, problem = found
        name = f"{label}{'' if not path or path.startswith('[') else '.'}{path}"
        raise TraceFileError(f"{where}: field {name!r} {problem}")
    return value


_SHARED_FIELDS = ("provenance", "selection")
"""Task-data fields that every trace of a run repeats unchanged (about 1 KB of nested
options, hashes and versions)."""
_verified_shared: dict[str, Any] = {}
"""The last value of each shared field that passed `_plain`: an equal one (compared in C)
needs no second walk."""


def _plain_known(value: Any, label: str) -> bool:
    """`_plain`, skipping the shared fields of task data when they equal ones already walked
    (at the same place, so the same depth)."""
    if label != "task.data" or type(value) is not dict:
        return _plain(value, MAX_DEPTH)
    rest = value
    for name in _SHARED_FIELDS:
        shared = value.get(name)
        if shared is not None and shared == _verified_shared.get(name):
            if rest is value:
                rest = dict(value)
            del rest[name]
    if not _plain(rest, MAX_DEPTH):
        return False
    for name in _SHARED_FIELDS:
        if name in value:
            _verified_shared[name] = value[name]
    return True


def _plain(value: Any, max_depth: int) -> bool:
    """True when `value` holds no over-long number (`too_long`) and no container nested
    `max_depth` or more levels below it (strings are not looked at). The cheap walk behind
    `_checked`: one type test per value, level by level, no paths built."""
    kind = type(value)
    if kind is not dict and kind is not list:
        return not too_long(value)
    level = [value]
    for _ in range(max_depth):
        below = []
        for item in level:
            for child in item.values() if type(item) is dict else item:
                kind = type(child)
                if kind is dict or kind is list:
                    below.append(child)
                elif (kind is int or kind is LongNumber) and too_long(child):
                    return False
        if not below:
            return True
        level = below
    return False


MAX_MAGNITUDE = 1e12
"""The largest magnitude a reward, a metric or a reward's score or weight may have: far above
any a benchmark gives, and small enough that every sum a report makes (over 50 million tasks
of a million rollouts each, and of their squares) stays a finite number. A trace holding a
larger one, NaN or an infinity is bad input, never read as 0."""


def _numbers(values: dict[str, Any], label: str, where: str) -> dict[str, float]:
    """Rewards and metrics: a number within `MAX_MAGNITUDE` (or null) under each name."""
    for name, value in values.items():
        kind = type(value)
        if (kind is float or kind is int) and -MAX_MAGNITUDE <= value <= MAX_MAGNITUDE or value is None:
            continue
        raise TraceFileError(_not_a_number(value, f"{label}.{name}" if label else name, where))
    return values


def _not_a_number(value: Any, label: str, where: str) -> str:
    """Why `value` at field `label` is not a number a report can add up."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or too_long(value):
        return f"{where}: field {label!r} is not a number (got {_kind(value)})"
    return f"{where}: field {label!r} is {value!r}, not a finite number within +-10^12 (medhal's bound)"


def _task_data(data: dict[str, Any], where: str, label: str, escapes: bool = True) -> dict[str, Any]:
    """The task's data, with the two fields every reader relies on checked."""
    idx = data.get("idx")
    if "idx" not in data:
        raise TraceFileError(f"{where}: field '{label}.idx' is missing")
    if not isinstance(idx, int) or isinstance(idx, bool):
        raise TraceFileError(f"{where}: field '{label}.idx' is not an integer (got {_kind(idx)})")
    benchmark = data.get("benchmark")
    if benchmark is not None and not isinstance(benchmark, str):
        raise TraceFileError(f"{where}: field '{label}.benchmark' is not a string (got {_kind(benchmark)})")
    selection = data.get("selection")
    if selection is not None:
        _selection(selection, where, f"{label}.selection")
    return _checked(data, label, where, escapes)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _selection(selection: Any, where: str, label: str) -> None:
    """The task selection a report's completeness checks rely on: task counts are
    non-negative integers, and a shard is `i/k` (i below k) with its own task count."""
    if not isinstance(selection, dict):
        raise TraceFileError(f"{where}: field '{label}' is not an object (got {_kind(selection)})")
    n_expected = selection.get("n_expected")
    if n_expected is not None and not _count(n_expected):
        raise TraceFileError(
            f"{where}: field '{label}.n_expected' is not a task count (got {_kind(n_expected)})"
        )
    shard = selection.get("shard")
    if shard is None:
        return
    if parse_shard(shard) is None:
        shown = repr(shard[:40]) if isinstance(shard, str) else _kind(shard)
        raise TraceFileError(f"{where}: field '{label}.shard' is not i/k with i below k (got {shown})")
    if not _count(selection.get("n_shard")):
        got = "nothing" if "n_shard" not in selection else _kind(selection["n_shard"])
        raise TraceFileError(f"{where}: field '{label}.n_shard' is not a task count (got {got})")


def _errors(values: list[Any], where: str, escapes: bool = True) -> list[dict[str, Any]]:
    for i, error in enumerate(_objects(values, "errors", where)):
        for key in ("type", "message"):
            if error.get(key) is not None and not isinstance(error[key], str):
                raise TraceFileError(
                    f"{where}: field 'errors[{i}].{key}' is not a string (got {_kind(error[key])})"
                )
    return _checked(values, "errors", where, escapes)


def _objects(values: list[Any], name: str, where: str) -> list[dict[str, Any]]:
    for i, value in enumerate(values):
        if not isinstance(value, dict):
            raise TraceFileError(
                f"{where}: field '{name}[{i}]' is not an object (got {type(value).__name__})"
            )
    return values


def _last_sampled_reply(nodes: list[dict[str, Any]], where: str) -> tuple[str | None, str | None, int | None]:
    """The final reply's text, its reasoning (`reasoning_content`) and its node's index; all
    None when the rollout sampled no assistant message."""
    for i in range(len(nodes) - 1, -1, -1):
        message = _field(nodes[i], "message", where, dict, f"nodes[{i}].message")
        if nodes[i].get("sampled") and message.get("role") == "assistant":
            reply = _content_text(message.get("content")).strip()
            if text_problem(reply):
                raise TraceFileError(f"{where}: field 'nodes[{i}].message.content' {text_problem(reply)}")
            reasoning = _text_or_none(
                message, "reasoning_content", where, f"nodes[{i}].message.reasoning_content"
            )
            return reply, reasoning or None, i
    return None, None, None


def _finish_reason(row: dict[str, Any], node: int | None, where: str) -> str | None:
    """The finish reason of the model call that produced node `node` (the final reply)."""
    if node is None:
        return None
    calls = _objects(_field(row, "calls", where, list), "calls", where)
    for i in range(len(calls) - 1, -1, -1):
        if calls[i].get("node") == node:
            return _text_or_none(calls[i], "finish_reason", where, f"calls[{i}].finish_reason")
    return None


# A rollout the stock harness left at its timeout carries no error and no reply; it failed.
TIMEOUT_ERROR = {
    "type": "HarnessTimeout",
    "message": "stopped by the rollout timeout before any reply (harness_timeout)",
}


TIMEOUT_STOPS = ("harness_timeout", "agent_timeout")
"""The stop condition of a rollout ended by its timeout: verifiers 0.2's and 0.4's names."""


def _rewards(values: dict[str, Any], where: str) -> dict[str, Any]:
    """Rewards by name: verifiers 0.2 records the weighted number, 0.4 `{score, weight}`
    (null when scoring did not run); both read as the weighted number."""
    out: dict[str, Any] = {}
    for name, value in values.items():
        if type(value) is dict:
            score, weight = value.get("score"), value.get("weight", 1.0)
            _numbers({"score": score, "weight": weight}, f"rewards.{name}", where)
            if score is None or weight is None:
                raise TraceFileError(f"{where}: field 'rewards.{name}' has a null score or weight")
            out[name] = score * weight  # bounded by MAX_MAGNITUDE ** 2: checked as a reward below
        else:
            out[name] = value
    return out


def _agent_config(agent: dict[str, Any], where: str) -> dict[str, Any]:
    """Where the model and sampling are recorded: on the agent (0.2) or its config (0.4)."""
    if "config" not in agent or "model" in agent:
        return agent
    config: dict[str, Any] = _field(agent, "config", where, dict, "agent.config")
    return config


def _sampling(setup: dict[str, Any], where: str) -> dict[str, Any]:
    """The sampling settings that are set: 0.4 lists every setting, null when unset, 0.2
    only those given; a null and an absent setting are the same (unset) on either line."""
    sampling: dict[str, Any] = _field(setup, "sampling", where, dict, "agent.sampling")
    if None not in sampling.values():
        return sampling
    return {k: v for k, v in sampling.items() if v is not None}


def _from_episode(row: dict[str, Any], where: str, path: str, line: int, escapes: bool = True) -> TraceRecord:
    """A verifiers 0.3/0.4 line: an episode, with one trace per agent run under `traces`. Our
    environments run one agent, so an episode is one rollout: its trace, with the errors the
    episode recorded around it (an episode that failed before its agent ran has no trace)."""
    traces = _objects(_field(row, "traces", where, list), "traces", where)
    if len(traces) > 1:
        raise TraceFileError(
            f"{where}: field 'traces' holds {len(traces)} agent traces; medhal's environments run one agent"
        )
    trace = dict(traces[0]) if traces else {"task": row.get("task"), "nodes": []}
    if not isinstance(trace.get("task"), dict):
        trace["task"] = row.get("task")
    own = _errors(_field(trace, "errors", where, list, "traces[0].errors"), where, escapes)
    around = _errors(_field(row, "errors", where, list), where, escapes)
    if around:
        listed = {_frozen(e) for e in own}
        trace["errors"] = [*own, *(e for e in around if _frozen(e) not in listed)]
    return _from_v1(trace, where, path, line, escapes)


def _frozen(value: Any) -> Any:
    """A checked JSON value (nested at most `MAX_DEPTH` deep) as a hashable one that equals
    another exactly when the two values are equal: an error looked up in a set, not
    compared with every error of a list (which made an episode's errors quadratic)."""
    if isinstance(value, dict):
        return frozenset((k, _frozen(v)) for k, v in value.items())
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


MAX_TOKENS = 10**12
"""The most tokens a call may report and still be shown (a larger count is not a count)."""


def _span(start: Any, end: Any) -> float | None:
    """`end - start` of two numbers (not booleans), else None."""
    if type(start) not in (int, float) or type(end) not in (int, float):
        return None
    try:
        return float(end - start)
    except OverflowError:  # integers past a float's range
        return None


def _call_totals(calls: Any) -> tuple[tuple[int, int] | None, float | None]:
    """Tokens (prompt, completion) and seconds over a trace's model calls: verifiers records
    each call under `calls` with its `usage` (`prompt_tokens`, `completion_tokens`) and `time`
    (`start`, `end`, epoch seconds), on both lines. Shown beside an item, never counted in a
    figure, so a trace that records either in part or not as numbers has None for it (a
    hand-made trace, a call that failed before its usage came back), not an error."""
    if type(calls) is not list or not calls:
        return None, None
    prompt = completion = 0
    seconds = 0.0
    tokens_ok = time_ok = True
    for call in calls:
        if type(call) is not dict:
            return None, None
        usage = call.get("usage")
        if tokens_ok and type(usage) is dict:
            p, c = usage.get("prompt_tokens"), usage.get("completion_tokens")
            if type(p) is int and type(c) is int and 0 <= p <= MAX_TOKENS and 0 <= c <= MAX_TOKENS:
                prompt, completion = prompt + p, completion + c
            else:
                tokens_ok = False
        else:
            tokens_ok = False
        time = call.get("time")
        if time_ok and type(time) is dict:
            span = _span(time.get("start"), time.get("end"))
            if span is not None and 0 <= span <= MAX_MAGNITUDE:
                seconds += span
            else:
                time_ok = False
        else:
            time_ok = False
    return (prompt, completion) if tokens_ok else None, seconds if time_ok else None


def _from_v1(row: dict[str, Any], where: str, path: str, line: int, escapes: bool = True) -> TraceRecord:
    task = row["task"]
    if not isinstance(task, dict) or not isinstance(task.get("data"), dict):
        raise TraceFileError(f"{where}: field 'task.data' is missing or not an object")
    agent = _field(row, "agent", where)
    errors = _errors(_field(row, "errors", where, list), where, escapes)
    reply, reasoning, node = _last_sampled_reply(
        _objects(_field(row, "nodes", where, list), "nodes", where), where
    )
    if not errors and reply is None and row.get("stop_condition") in TIMEOUT_STOPS:
        errors = [TIMEOUT_ERROR]
    setup = _agent_config(agent, where)
    usage, latency = _call_totals(row.get("calls"))
    return TraceRecord(
        path=path,
        line=line,
        data=_task_data(task["data"], where, "task.data", escapes),
        task_type=_text_or_none(task, "type", where, "task.type"),
        reply=reply,
        rewards=_numbers(_rewards(_field(row, "rewards", where), where), "rewards", where),
        metrics=_numbers(_field(row, "metrics", where), "metrics", where),
        info=_checked(_field(row, "info", where), "info", where, escapes),
        errors=errors,
        model=_text_or_none(setup, "model", where, "agent.model"),
        sampling=_checked(_sampling(setup, where), "agent.sampling", where, escapes),
        verifiers_version=_text_or_none(
            _field(row, "verifiers", where), "version", where, "verifiers.version"
        ),
        rollout_id=_text_or_none(row, "id", where, "id"),
        reasoning=reasoning,
        finish_reason=_finish_reason(row, node, where),
        usage=usage,
        latency=latency,
    )


def _from_v0(row: dict[str, Any], where: str, path: str, line: int) -> TraceRecord:
    """A v0 `results.jsonl` row; medhal's v0 environments keep the TaskData under
    `info.task_data`."""
    info = _field(row, "info", where)
    data = info.get("task_data")
    if not isinstance(data, dict):
        raise TraceFileError(
            f"{where}: results.jsonl row has no 'info.task_data' object (not written by a medhal environment)"
        )
    completion = row.get("completion")
    reasoning = None
    if isinstance(completion, list):
        messages = [m for m in _objects(completion, "completion", where) if m.get("role") == "assistant"]
        reply = _content_text(messages[-1].get("content")).strip() if messages else None
        if messages:
            reasoning = _text_or_none(
                messages[-1], "reasoning_content", where, "completion.reasoning_content"
            )
    else:
        reply = completion.strip() if isinstance(completion, str) else None
    if reply is not None and text_problem(reply):
        raise TraceFileError(f"{where}: field 'completion' {text_problem(reply)}")
    error = row.get("error")
    if error is not None and not isinstance(error, str):
        error = _checked(error, "error", where)
    metrics = _numbers(dict(_field(row, "metrics", where)), "metrics", where)
    return TraceRecord(
        path=path,
        line=line,
        data=_task_data(data, where, "info.task_data"),
        task_type=_text_or_none(info, "task_type", where, "info.task_type"),
        reply=reply,
        rewards=_numbers({"reward": row["reward"]}, "", where) if row.get("reward") is not None else {},
        metrics=metrics,
        info=_checked({k: v for k, v in info.items() if k != "task_data"}, "info", where),
        errors=[{"type": "Error", "message": str(error)}] if error else [],
        model=_text_or_none(row, "model", where, "model"),
        rollout_id=where,
        reasoning=reasoning or None,
    )


def parse_trace_line(text: str | bytes, path: str, line: int, offset: int | None = None) -> TraceRecord:
    """One line -> a record, or a TraceFileError naming `path:line` and the field. `offset`
    (the line's byte offset in the file) makes a bad-byte message exact."""
    where = f"{path}:{line}"
    if isinstance(text, bytes):
        record = _fast_record(text, where, path, line)
        if record is not None:
            return record
    try:
        # Text decoded here as strict UTF-8 holds a lone surrogate only through an escape;
        # text given as a str may hold one as it is, so it is always checked in full.
        escapes = not isinstance(text, bytes) or _SURROGATE_ESCAPE.search(text) is not None
        if isinstance(text, bytes):
            text = decode_utf8(strip_utf8_bom(text) if line == 1 else text, line, offset or 0)
        row = loads_json(text)
    except UnreadableText as e:
        message = str(e)
        if message.startswith("not valid JSON"):
            message += "; truncated or corrupt line"
        else:
            message = f"not valid JSON: {message}"
        raise TraceFileError(f"{where}: {message}") from None
    return _record(row, where, path, line, escapes)


_decode = msgspec.json.Decoder().decode


def _fast_record(raw: bytes, where: str, path: str, line: int) -> TraceRecord | None:
    """The record of a well-formed line, decoded by msgspec (compiled, about 2.5 times the
    speed of `json.loads` with our integer hook), or None to send the line down the
    reference path above, which words every message. msgspec refuses every line that path
    would refuse or mark (bytes that are not UTF-8, lone surrogates, NaN, integers over
    Python's digit limit, nesting over 1,000 levels) except integers of 1,001 to 4,300
    digits, which the walks flag as `too_long`: so a record returned here is the one the
    reference path returns, and a line that fails any check is read again there."""
    try:
        row = _decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return None
    try:
        return _record(row, where, path, line, escapes=False)
    except TraceFileError:
        return None


def _record(row: Any, where: str, path: str, line: int, escapes: bool) -> TraceRecord:
    if not isinstance(row, dict):
        raise TraceFileError(f"{where}: expected a JSON object, got {_kind(row)}")
    if "task" in row and "nodes" in row:
        return _from_v1(row, where, path, line, escapes)
    if "traces" in row and ("task" in row or "env" in row):  # 0.3.0's episode: its task on its trace only
        return _from_episode(row, where, path, line, escapes)
    if "prompt" in row and "completion" in row:
        return _from_v0(row, where, path, line)
    raise TraceFileError(
        f"{where}: neither a verifiers trace (needs 'task' and 'nodes' or 'traces') nor a results row "
        "(needs 'prompt' and 'completion')"
    )


RUN_CONFIG = "config.toml"
"""What `eval` writes beside `traces.jsonl`: the run's settings, `num_rollouts` among them."""
RUN_SETTINGS = {
    "traces.jsonl": (RUN_CONFIG, "num_rollouts"),
    "results.jsonl": ("metadata.json", "rollouts_per_example"),
}
"""Where each trace file's run records its rollouts per task: `eval` writes `config.toml`
(`num_rollouts`) beside `traces.jsonl`, vf-eval `metadata.json` (`rollouts_per_example`)
beside `results.jsonl`."""


def configured_rollouts(trace_file: Path) -> tuple[int, str] | None:
    """Rollouts per task the run asked for, and the file that says so (`RUN_SETTINGS`), or
    None when there is no such file or it does not say. Read as data (TOML or JSON, one
    integer), never run; a file that cannot be read or holds another value is an error
    naming it."""
    if trace_file.name not in RUN_SETTINGS:
        return None
    name, key = RUN_SETTINGS[trace_file.name]
    path = trace_file.parent / name
    if not path.is_file():
        return None
    settings = _run_settings(path)
    if key not in settings:
        return None
    value = settings[key]
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1_000_000:
        shown = repr(value)[:40] if not isinstance(value, LongNumber) else _kind(value)
        raise TraceFileError(f"{path}: field {key!r} is not a positive integer (got {shown})")
    return value, name


def _run_settings(path: Path) -> dict[str, Any]:
    """A run's settings file (TOML or JSON by its name) as an object, or a TraceFileError."""
    import tomllib

    try:
        text = path.read_text(encoding="utf-8")
        settings = tomllib.loads(text) if path.suffix == ".toml" else loads_json(text)
    except tomllib.TOMLDecodeError as e:
        raise TraceFileError(f"{path}: not valid TOML ({str(e).splitlines()[0][:200]})") from None
    except UnreadableText as e:
        raise TraceFileError(f"{path}: {e}") from None
    except UnicodeDecodeError:
        raise TraceFileError(f"{path}: not UTF-8 text") from None
    except OSError as e:
        raise TraceFileError(f"{path}: cannot be read ({e.strerror})") from None
    if not isinstance(settings, dict):
        raise TraceFileError(f"{path}: not a JSON object (got {_kind(settings)})")
    return settings


READ_BUFFER = 1 << 20
"""Bytes read at a time. A trace line runs to 10 KB, longer than the default buffer (8 KB), and
splitting such lines out of it cost a quarter of the time their decoding takes."""


def iter_traces(path: str | Path) -> Iterator[TraceRecord]:
    """Yield one record per non-blank line, in file order, without loading the file."""
    file = resolve_trace_file(path)
    offset = 0
    with open(file, "rb", buffering=READ_BUFFER) as f:
        for number, raw in enumerate(f, start=1):
            if not raw.isspace():  # skips blank lines (unlike strip(), copies nothing)
                yield parse_trace_line(raw, str(file), number, offset)
            offset += len(raw)
