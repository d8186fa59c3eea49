"""The verifiers 0.2 line: `Taskset.select(num_tasks, shuffle)` materializes a list, traces
hold plain reward numbers and need no agent record."""

from __future__ import annotations

from typing import Any

import verifiers.v1 as vf
from verifiers.v1.loaders import taskset_class, taskset_config_type

from medhal.kit.bad_data_exit import report_bad_data_in_one_line
from medhal.kit.selection import selection_record, shard_share

TIMEOUT_STOPS = frozenset({"harness_timeout"})


class RecordsSelection:
    """Taskset mixin: the tasks a run selects carry their selection (`BenchmarkData.selection`),
    and a `shard` option keeps only its share. Listed before the parameterized
    `vf.Taskset[...]` base, which verifiers reads the task and config types from:
    `class MyTaskset(RecordsSelection, vf.Taskset[MyTask, MyConfig])`."""

    def select(self, num_tasks: int | None = None, shuffle: bool = False) -> list[Any]:
        report_bad_data_in_one_line()  # a refused dataset: one line, also under verifiers' own executables
        tasks: list[Any] = super().select(num_tasks, shuffle)  # type: ignore[misc]
        record = selection_record([t.data.idx for t in tasks], num_tasks, shuffle)
        tasks, record = shard_share(tasks, self.config.shard, record)  # type: ignore[attr-defined]
        for task in tasks:
            task.data = task.data.model_copy(update={"selection": record})
        return tasks


def select_tasks(taskset: Any, num_tasks: int | None = None, shuffle: bool = False) -> list[Any]:
    """The tasks `eval -n num_tasks [-s]` runs, in order."""
    return list(taskset.select(num_tasks, shuffle))


def new_trace(task: vf.Task, nodes: list[vf.MessageNode]) -> vf.Trace:
    return vf.Trace(task=vf.TraceTask(type=type(task).__name__, data=task.data), nodes=nodes)


def offline_agent(model: str) -> vf.AgentInfo:
    """The agent record of replies scored outside a rollout (`medhal score`)."""
    return vf.AgentInfo(model=model, sampling=vf.SamplingConfig(), harness=vf.HarnessConfig(id="offline"))


def record_error(trace: vf.Trace, error: Exception) -> None:
    trace.capture_error(error)


def reward_values(trace: vf.Trace) -> dict[str, float]:
    """Each reward's weighted value, by name (0.2 records the number itself)."""
    return dict(trace.rewards)


__all__ = [
    "TIMEOUT_STOPS",
    "RecordsSelection",
    "new_trace",
    "offline_agent",
    "record_error",
    "reward_values",
    "select_tasks",
    "taskset_class",
    "taskset_config_type",
]
