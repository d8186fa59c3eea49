"""The verifiers 0.4 line: a taskset is iterated through lazy views that `select(SelectConfig)`
chains (include, exclude, shuffle, skip, limit). Traces are 0.3's (an agent record, weighted
rewards `{"score", "weight"}`): `new_trace`, `offline_agent`, `record_error` and `reward_values`
are the 0.3 line's.

`RecordsSelection.select` also takes the 0.2 call form, `select(num_tasks, shuffle)`, and then
returns the list, so medhal's commands and tests call one way on every line. A shuffled
selection is drawn by each line's own shuffle: the same `-n`/`-s` picks other tasks on 0.4
than on 0.2 (each trace's selection record says which); unshuffled selections are identical."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import verifiers.v1 as vf
from verifiers.v1.utils.loaders import taskset_class, taskset_config_type

from medhal.kit.bad_data_exit import report_bad_data_in_one_line
from medhal.kit.lines.v03 import new_trace, offline_agent, record_error, reward_values
from medhal.kit.selection import selection_record, shard_share

TIMEOUT_STOPS = frozenset({"agent_timeout", "harness_timeout"})
"""0.4 names a stage's expired deadline `<stage>_timeout`; the agent stage is the request."""


def _views(config: vf.SelectConfig) -> dict[str, Any]:
    """The 0.4-only selection steps a run used, for its record (none: nothing added, so an
    unfiltered selection records exactly what 0.2 records)."""
    views: dict[str, Any] = {}
    for name in ("include", "exclude"):
        match = getattr(config, name)
        if not match.empty:
            views[name] = match.model_dump(mode="json", exclude_defaults=True)
    if config.shuffle:
        views["seed"] = config.seed
    if config.skip:
        views["skip"] = config.skip
    return views


class RecordsSelection:
    """Taskset mixin: the tasks a run selects carry their selection (`BenchmarkData.selection`),
    and a `shard` option keeps only its share. Listed before the parameterized
    `vf.Taskset[...]` base, which verifiers reads the task and config types from:
    `class MyTaskset(RecordsSelection, vf.Taskset[MyTask, MyConfig])`."""

    def select(self, config: vf.SelectConfig | int | None = None, shuffle: bool = False) -> Any:
        report_bad_data_in_one_line()  # a refused dataset: one line, also under verifiers' own executables
        if not isinstance(config, vf.SelectConfig):
            # The 0.2 call form: select(num_tasks, shuffle) -> list of tasks.
            return list(self.select(vf.SelectConfig(limit=config, shuffle=shuffle)))
        view = super().select(config)  # type: ignore[misc]
        select = config
        shard = self.config.shard  # type: ignore[attr-defined]

        def stamped(tasks: Iterator[Any]) -> Iterator[Any]:
            selected = list(tasks)
            record = {
                **selection_record([t.data.idx for t in selected], select.limit, select.shuffle),
                **_views(select),
            }
            share, record = shard_share(selected, shard, record)
            return iter([task.with_data(selection=record) for task in share])

        return view._view(stamped)


def select_tasks(taskset: Any, num_tasks: int | None = None, shuffle: bool = False) -> list[Any]:
    """The tasks `vf-eval -n num_tasks [-s]` runs, in order."""
    return list(taskset.select(vf.SelectConfig(limit=num_tasks, shuffle=shuffle)))


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
