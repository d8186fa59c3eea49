"""The verifiers-facing part of the kit, one small module per verifiers API line, chosen at
import by what the installed verifiers offers: `v02` for the 0.2 line (`Taskset.select(num_tasks,
shuffle)` returns a list), `v03` for 0.3 (the loaders under `verifiers.v1.utils`, no `select`:
lazy `shuffle`/`head` views over iteration; traces with an agent record and weighted rewards),
`v04` for 0.4 (views chained by `select(SelectConfig)`). All give the same names, so
`medhal.kit.task`, the harness, the commands and the environments' tasksets are written once.

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

from importlib.util import find_spec

import verifiers.v1 as _vf

LINE = "0.4" if hasattr(_vf, "SelectConfig") else "0.3" if find_spec("verifiers.v1.utils.loaders") else "0.2"
"""The verifiers API line installed: "0.2" (0.2.x), "0.3" (0.3.x, and the 0.3.1.dev builds
prime-rl pins) or "0.4" (0.4.x)."""

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
elif LINE == "0.3":
    from medhal.kit.lines.v03 import (  # type: ignore[assignment]
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
