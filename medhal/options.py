"""Validating environment options, with errors that name the option and its allowed values."""

from __future__ import annotations

from collections.abc import Iterable


def one_of(option: str, value: str, allowed: Iterable[str]) -> str:
    """`value` if it is allowed; else a ValueError naming the option and every allowed value."""
    allowed = tuple(allowed)
    if value not in allowed:
        raise ValueError(f"{option} {value!r} is not one of {', '.join(allowed)}")
    return value
