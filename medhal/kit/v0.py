"""The classic (v0) face of a v1 environment: `load_environment(**kwargs)`.

The Hub's quality scan and `vf-eval` still call `load_environment` and expect a v0
`SingleTurnEnv`. Rather than keeping a second copy of prompts and scoring, the v0
environment is built from the v1 taskset: the dataset rows are the tasks' own prompt
messages, and the rubric rebuilds each row's `Task` and runs its `Task.score` on the
completion, so v0 and v1 score the same reply identically by construction. Each v1
reward becomes a unit-weight v0 reward returning its weighted contribution (so the
total reward is the same), and each key a v1 scoring pass records as a metric (a metric
may return several) becomes a zero-weight v0 metric.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

import verifiers as vf0
import verifiers.v1 as vf

from medhal.kit.task import prompt_messages, reply_trace, score_reply

logger = logging.getLogger(__name__)

TRACE_KEY = "medhal_trace"


def _field(message: Any, name: str) -> Any:
    """A message field, from a dict or from verifiers' message models (which vf-eval passes:
    pydantic objects with item access but no `get`)."""
    return message.get(name) if isinstance(message, Mapping) else getattr(message, name, None)


def _text(content: Any) -> str:
    """A message's text: the string, or the text parts of a list of content parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            text
            for part in content
            if _field(part, "type") == "text" and isinstance(text := _field(part, "text"), str)
        )
    return ""


def _completion_text(completion: Any) -> str:
    """The last assistant message's text ("" without one)."""
    if isinstance(completion, str):
        return completion
    texts = [_text(_field(m, "content")) for m in completion or [] if _field(m, "role") == "assistant"]
    return texts[-1] if texts else ""


def _scored_in_thread(coroutine: Coroutine[Any, Any, vf.Trace]) -> vf.Trace:
    """Run a scoring coroutine to completion from sync code, whether or not the caller is
    inside an event loop (v0 tooling builds environments from both)."""
    result: list[vf.Trace] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            result.append(asyncio.run(coroutine))
        except BaseException as e:  # re-raised in the caller's thread
            errors.append(e)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return result[0]


def _taskset_sections(env_id: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """`kwargs` with a `config={"taskset": {...}, "harness": {...}}` argument unpacked: the
    `[[eval]]` TOML loaders of vf-eval and prime (verifiers 0.2.0's schema) pass a `[taskset]`
    table that way. Its options join the others (one option given both ways is an error); a
    harness section is ignored with a log, the v0 environment being single-turn. A `config`
    that is not a table is an option like any other (MedHallu's dataset configuration)."""
    sections = kwargs.get("config")
    if not isinstance(sections, Mapping):
        return kwargs
    rest = {k: v for k, v in kwargs.items() if k != "config"}
    unknown = sorted(set(sections) - {"taskset", "harness"})
    if unknown:
        raise ValueError(f"{env_id}: config sections {unknown} are not one of taskset, harness")
    taskset = dict(sections.get("taskset") or {})
    declared = taskset.pop("id", env_id)
    name = str(declared).split("/")[-1].split("@")[0].strip().lower().replace("_", "-")  # owner/name@version
    if name != env_id:
        raise ValueError(f"{env_id}: config.taskset.id is {declared!r}, another environment")
    both = sorted(set(taskset) & set(rest))
    if both:
        raise ValueError(f"{env_id}: options {both} are given both in config.taskset and as arguments")
    if sections.get("harness"):
        logger.info("%s: ignoring config.harness (the v0 environment is single-turn)", env_id)
    return {**rest, **taskset}


def legacy_environment(taskset_cls: type[vf.Taskset], env_id: str, **kwargs: Any) -> vf0.SingleTurnEnv:
    """A v0 SingleTurnEnv over `taskset_cls`'s tasks. Taskset options are taken from
    `kwargs` (or from a `config={"taskset": {...}}` table, as vf-eval passes a `[taskset]`
    section); anything else (`max_turns`, ... passed by v0 tooling) is ignored with a log."""
    from datasets import Dataset

    from medhal.kit.lines import reward_values, taskset_config_type

    kwargs = _taskset_sections(env_id, kwargs)
    config_cls = taskset_config_type(env_id)
    options = {k: v for k, v in kwargs.items() if k in config_cls.model_fields}
    ignored = sorted(set(kwargs) - set(options))
    if ignored:
        logger.info("%s: ignoring arguments that are not taskset options: %s", env_id, ignored)
    config = config_cls.model_validate({"id": env_id, **options})
    tasks = taskset_cls(config).select()
    if not tasks:
        raise ValueError(f"{env_id}: these options select no tasks: {options}")
    task_cls = type(tasks[0])
    data_cls = type(tasks[0].data)
    rows = _dataset_rows(tasks)

    async def scored(completion: Any, info: dict[str, Any], state: dict[str, Any]) -> vf.Trace:
        trace = state.get(TRACE_KEY)
        if trace is None:
            # The task as it was, from its JSON text: the dataset's Arrow columns give every
            # row the union of the nested keys of all rows (None where a row has none, e.g.
            # Med-HALT's `choices` on IR rows), which the task data would refuse.
            data = data_cls.model_validate_json(info["task_json"]) if "task_json" in info else None
            data = data or data_cls.model_validate(info["task_data"])
            task = task_cls(data, config.task)
            trace = reply_trace(task, _completion_text(completion))
            await task.score(trace)
            state[TRACE_KEY] = trace
            info["scored"] = dict(trace.info)
        return trace

    def signal(name: str, kind: str) -> Callable[..., Awaitable[float]]:
        async def value(completion: Any, info: dict[str, Any], state: dict[str, Any]) -> float:
            trace = await scored(completion, info, state)
            return float((reward_values(trace) if kind == "reward" else trace.metrics).get(name, 0.0))

        value.__name__ = name
        return value

    rewards: dict[str, None] = {}
    metrics: dict[str, None] = {}
    for task in probe_tasks(tasks):
        probe = _scored_in_thread(score_reply(task, ""))
        rewards.update(dict.fromkeys(probe.rewards))
        metrics.update(dict.fromkeys(probe.metrics))
    rubric = vf0.Rubric()
    for name in rewards:
        rubric.add_reward_func(signal(name, "reward"), weight=1.0)
    for name in metrics:
        rubric.add_metric(signal(name, "metric"))
    return vf0.SingleTurnEnv(eval_dataset=Dataset.from_list(rows), rubric=rubric, env_id=env_id)


def probe_tasks(tasks: list[Any]) -> list[Any]:
    """The first task of each distinct provenance block: what the v0 rubric scores once to
    learn the names of the rewards and metrics. A task records only the metrics that apply
    to it (a Med-HALT set's own rules), and every task of one provenance (one data source,
    prompt and set of options) records the same ones, so the names of every task are the
    names of these. (v0 gives every row every metric: one a task does not record reads 0 in
    a v0 row.)"""
    seen: set[str] = set()
    probes = []
    for task in tasks:
        key = json.dumps(task.data.provenance, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            probes.append(task)
    return probes


def _dataset_rows(tasks: list[Any]) -> list[dict[str, Any]]:
    """One v0 dataset row per task: its prompt messages, and its data twice (as JSON values
    for v0 tooling to show, and as JSON text from which the task is rebuilt exactly)."""
    return [
        {
            "prompt": [m.model_dump(exclude_none=True) for m in prompt_messages(t.data)],
            "answer": "",
            "info": {
                "task_data": t.data.model_dump(mode="json"),
                "task_json": t.data.model_dump_json(),
                "task_type": type(t).__name__,
            },
        }
        for t in tasks
    ]
