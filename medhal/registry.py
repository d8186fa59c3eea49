"""Find an environment's module, taskset and report spec from its id.

Environment ids follow the `eval` convention (`my-env` -> module `my_env`), so any
installed environment package that exports a `Taskset` and a `REPORT` works with the
medhal CLI; this module knows no benchmark by name.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from medhal.report import ReportSpec


def env_module(env_id: str) -> ModuleType:
    name = env_id.strip().lower().replace("-", "_")
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        raise SystemExit(f"environment {env_id!r}: module {name!r} is not installed ({e})") from e


def report_spec(env_id: str) -> ReportSpec:
    module = env_module(env_id)
    spec = getattr(module, "REPORT", None)
    if not isinstance(spec, ReportSpec):
        raise SystemExit(f"environment {env_id!r} exports no REPORT (a medhal.report.ReportSpec)")
    return spec


ENTRY_POINT_GROUP = "medhal.environments"


def installed_environments() -> dict[str, str]:
    """Environment id -> module name, for every installed package that registers itself
    under the `medhal.environments` entry-point group (sorted by id)."""
    from importlib.metadata import entry_points

    found = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}
    return dict(sorted(found.items()))
