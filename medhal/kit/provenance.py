"""Which code produced a score: package versions recorded next to the data's provenance.

A score depends on the environment's reading and scoring code as much as on the model, so
every trace records the environment package and its version, medhal's and verifiers'.
Reports compare runs made with different code only with a warning.
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import PackageNotFoundError, version


@cache
def package_version(distribution: str) -> str:
    """The installed version of `distribution`, or "unknown" (e.g. run from a source tree)."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "unknown"


def code_versions(environment: str) -> dict[str, str]:
    """{"environment": name, "environment_version", "medhal", "verifiers"} for provenance."""
    return {
        "environment": environment,
        "environment_version": package_version(environment),
        "medhal": package_version("medhal"),
        "verifiers": package_version("verifiers"),
    }
