"""Taskset options given on a command line, validated by the environment's own config.

Light on purpose: the `medhal` command imports it at start-up, and verifiers (which the
validation needs) is imported only when options are validated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class OptionError(ValueError):
    """A taskset option is malformed or not valid for the environment."""


def taskset_config(env_id: str, options: Mapping[str, Any]) -> Any:
    """The environment's taskset config, validated by its own pydantic model; a bad value
    is one line per option (`option subset: Input should be 'all' or ...`)."""
    from pydantic import ValidationError
    from verifiers.v1.loaders import taskset_config_type

    try:
        return taskset_config_type(env_id).model_validate({"id": env_id, **options})
    except ValidationError as e:
        problems = "; ".join(
            f"option {'.'.join(str(p) for p in err['loc']) or '(config)'}: {err['msg']}"
            + (f" (got {err['input']!r})" if "input" in err and not isinstance(err["input"], dict) else "")
            for err in e.errors()
        )
        raise OptionError(f"invalid options for {env_id}: {problems}") from None
