"""Installed environments, found only through the `medhal.environments` entry points.

Each environment package registers its light report spec under its environment id
(`medhallu = "medhallu.report:REPORT"`). Benchmark ids read from trace files are looked
up here, never imported by name: a trace is untrusted input, and a module it names must
not be run. Nothing here imports verifiers or an environment's taskset.
"""

from __future__ import annotations

from functools import cache
from importlib import import_module
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType

from medhal.kit.report_spec import ReportSpec

ENTRY_POINT_GROUP = "medhal.environments"


class UnknownEnvironment(LookupError):
    """No installed environment has this id (the message lists the installed ones)."""


def normal_id(env_id: str) -> str:
    """`eval` accepts `med_halt` and `Med-HALT` for `med-halt`; so does medhal."""
    return env_id.strip().lower().replace("_", "-")


@cache
def installed() -> dict[str, EntryPoint]:
    """Environment id -> its entry point, sorted by id."""
    found = {normal_id(ep.name): ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    return dict(sorted(found.items()))


def entry_point(env_id: object) -> EntryPoint:
    if not isinstance(env_id, str) or not env_id.strip():
        raise UnknownEnvironment(f"benchmark id {env_id!r} is not a name")
    ep = installed().get(normal_id(env_id))
    if ep is None:
        names = ", ".join(installed()) or "none"
        raise UnknownEnvironment(f"{env_id!r} is not an installed medhal environment (installed: {names})")
    return ep


def report_spec(env_id: object) -> ReportSpec:
    spec = entry_point(env_id).load()
    if not isinstance(spec, ReportSpec):
        raise UnknownEnvironment(f"environment {env_id!r}: its entry point does not name a medhal ReportSpec")
    return spec


def package(env_id: str) -> str:
    """The environment's import package (`med_halt` for `med-halt`)."""
    return entry_point(env_id).module.split(".")[0]


def benchmark_module(env_id: str) -> ModuleType:
    """The environment's light declaration module (`<package>.benchmark`)."""
    return import_module(f"{package(env_id)}.benchmark")


def distribution(env_id: str) -> tuple[str, str]:
    """(distribution name, version) of the package that provides the environment."""
    ep = entry_point(env_id)
    dist = ep.dist
    return (dist.name, dist.version) if dist is not None else (env_id, "unknown")
