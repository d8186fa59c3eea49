"""The verifiers-facing part of the kit, one small module per verifiers API line, chosen at
import by what the installed verifiers offers: `v02` for the 0.2 line (`Taskset.select(num_tasks,
shuffle)` returns a list), `v04` for 0.4 (lazy taskset views chained by
`select(SelectConfig)`, traces with an agent record and weighted rewards). Both give the
same names, so `medhal.kit.task`, the harness, the commands and the environments' tasksets are
written once.

    RecordsSelection   taskset mixin: selected tasks carry their selection record; `shard`
    select_tasks       the tasks a run with `num_tasks`/`shuffle` selects, as a list
    new_trace          an empty trace of a task (for scoring a reply outside a rollout)
    offline_agent      the agent record of replies scored outside a rollout
    record_error       put an exception on a trace's errors
    reward_values      a trace's rewards as weighted numbers, by name
    taskset_class, taskset_config_type   the loaders by environment id
    TIMEOUT_STOPS      the stop conditions of a rollout ended by its timeout
"""

from __future__ import annotations

import verifiers.v1 as _vf

LINE = "0.4" if hasattr(_vf, "SelectConfig") else "0.2"
"""The verifiers API line installed: "0.2" (0.2.x) or "0.4" (0.4.x)."""

if LINE == "0.4":
    from medhal.kit.lines.v04 import (
        TIMEOUT_STOPS,
        RecordsSelection,
        new_trace,
        offline_agent,
        record_error,
        reward_values,
        select_tasks,
        taskset_class,
        taskset_config_type,
    )
else:
    from medhal.kit.lines.v02 import (  # type: ignore[assignment]
        TIMEOUT_STOPS,
        RecordsSelection,
        new_trace,
        offline_agent,
        record_error,
        reward_values,
        select_tasks,
        taskset_class,
        taskset_config_type,
    )

__all__ = [
    "LINE",
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
