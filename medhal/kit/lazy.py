"""Lazy package exports (PEP 562), so an environment package stays light to import.

`eval` finds an environment's Taskset and Harness through the package's `__all__`, which
pulls in verifiers; reports and the medhal CLI import the same package only for its
light modules (the declaration, the report spec) and must not pay for verifiers. An
environment's `__init__` therefore names where each export lives and resolves it on
first use: `__getattr__ = lazy_exports(__name__, {"MyTaskset": "my_env.taskset", ...})`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_exports(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` that imports `where[name]` when `name` is first used."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(module), name)

    return __getattr__
