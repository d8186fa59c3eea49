"""The verifiers 0.3 line (0.3.0, 0.3.1, and the 0.3.1.dev builds prime-rl pins): a taskset is
read by iterating it, narrowed by lazy views (`shuffle(seed)`, then `head(n)`, as `eval` chains
them) with no `select`; traces carry an agent record and weighted rewards, as on 0.4; an
expired rollout deadline is an error on the trace ("agent timeout"), not a stop condition.

`RecordsSelection` stamps the selection record when the taskset is iterated, through any
views, so a run that selects nothing (`eval` without `-n`, prime-rl's `list(taskset)`) records
every task as expected, as on 0.2. It also gives the 0.2 call form `select(num_tasks, shuffle)`,
returning the list, so medhal's commands and tests call one way on every line. The shuffle is
verifiers' own fixed-seed `random.Random(0)` over the whole taskset, as on 0.2: the same `-n`/`-s`
picks the same tasks on 0.2 and 0.3."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import verifiers.v1 as vf
from verifiers.v1.utils.loaders import taskset_class, taskset_config_type

from medhal.kit.bad_data_exit import report_bad_data_in_one_line
from medhal.kit.selection import selection_record, shard_share

TIMEOUT_STOPS: frozenset[str] = frozenset()
"""0.3 stops no trace for a timeout: it records a `HarnessError` ("agent timeout: rollout
exceeded its N s budget"), which reports count as the rollout's error."""


class RecordsSelection:
    """Taskset mixin: the tasks a run iterates carry their selection (`BenchmarkData.selection`),
    and a `shard` option keeps only its share. Listed before the parameterized
    `vf.Taskset[...]` base, which verifiers reads the task and config types from:
    `class MyTaskset(RecordsSelection, vf.Taskset[MyTask, MyConfig])`."""

    _limit: int | None = None
    _shuffled: bool = False
    _seed: int | None = None

    def head(self, num_tasks: int) -> Any:
        view = super().head(num_tasks)  # type: ignore[misc]
        view._limit = num_tasks if self._limit is None else min(num_tasks, self._limit)
        return view

    def shuffle(self, seed: int | None = None) -> Any:
        view = super().shuffle(seed)  # type: ignore[misc]
        view._shuffled, view._seed = True, seed
        return view

    def __iter__(self) -> Iterator[Any]:
        report_bad_data_in_one_line()  # a refused dataset: one line, also under verifiers' own executables
        selected = list(super().__iter__())  # type: ignore[misc]
        record = selection_record([t.data.idx for t in selected], self._limit, self._shuffled)
        if self._seed is not None:
            record["seed"] = self._seed
        share, record = shard_share(selected, self.config.shard, record)  # type: ignore[attr-defined]
        for task in share:
            task.data = task.data.model_copy(update={"selection": record})
        return iter(share)

    def select(self, num_tasks: int | None = None, shuffle: bool = False) -> list[Any]:
        """The 0.2 call form: the tasks `eval -n num_tasks [-s]` runs, as a list."""
        return select_tasks(self, num_tasks, shuffle)


def select_tasks(taskset: Any, num_tasks: int | None = None, shuffle: bool = False) -> list[Any]:
    """The tasks `eval -n num_tasks [-s]` runs, in order: 0.3's eval shuffles, then takes
    the head."""
    view = taskset.shuffle() if shuffle else taskset
    return list(view.head(num_tasks) if num_tasks is not None else view)


def new_trace(task: vf.Task, nodes: list[vf.MessageNode]) -> vf.Trace:
    """An empty trace of `task`, as 0.3 and 0.4 record one (0.3.0's Task has no `key` or `hash`,
    later ones have both: left unset there)."""
    key, digest = getattr(task, "key", None), getattr(task, "hash", None)
    recorded = vf.TraceTask(type=type(task).__name__, data=task.data, key=key, hash=digest)
    return vf.Trace(task=recorded, agent=vf.AgentInfo(config=vf.AgentConfig()), nodes=nodes)


def offline_agent(model: str) -> vf.AgentInfo:
    """The agent record of replies scored outside a rollout (`medhal score`). No harness (0.2
    records `offline`): from 0.3 on a harness id is resolved to an installed package, and none ran."""
    return vf.AgentInfo(config=vf.AgentConfig(model=model, sampling=vf.SamplingConfig()))


def record_error(trace: vf.Trace, error: Exception) -> None:
    trace.record_error(error)


def reward_values(trace: vf.Trace) -> dict[str, float]:
    """Each reward's weighted value, by name (0.3 and 0.4 record `Reward(score, weight)`, or
    None when scoring did not run: left out)."""
    return {name: reward.value for name, reward in trace.rewards.items() if reward is not None}


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
