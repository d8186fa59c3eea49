"""Taskset options given on a command line (`--taskset.<option> value`, as `eval` takes them),
validated by the environment's own config.

Light on purpose: the `medhal` command imports it at start-up, and verifiers (which the
validation needs) is imported only when options are validated.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

TASKSET_PREFIX = "--taskset."


class OptionError(ValueError):
    """A taskset option is malformed or not valid for the environment."""


def parse_taskset_options(args: list[str]) -> dict[str, Any]:
    """`--taskset.<option> value` / `--taskset.<option>=value` pairs, as `eval` takes them.
    Values are read as JSON when they parse (true, 3, null), else kept as text."""
    options: dict[str, Any] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith(TASKSET_PREFIX) or arg == TASKSET_PREFIX:
            raise OptionError(
                f"unexpected argument {arg!r}; environment options look like {TASKSET_PREFIX}<option> <value>"
            )
        key, eq, value = arg[len(TASKSET_PREFIX) :].partition("=")
        if not eq:
            if i + 1 >= len(args):
                raise OptionError(f"option {arg} needs a value")
            value = args[i + 1]
            i += 1
        try:
            parsed: Any = json.loads(value)
        except json.JSONDecodeError:
            parsed = value
        _set_dotted(options, key.replace("-", "_"), parsed, arg)
        i += 1
    return options


def _set_dotted(options: dict[str, Any], key: str, value: Any, arg: str) -> None:
    """Set `key` in `options`, a dotted key in nested tables (`task.wrong_reward` sets
    `options["task"]["wrong_reward"]`, as `eval` reads `--taskset.task.wrong_reward`)."""
    *tables, name = key.split(".")
    if not name or not all(tables):
        raise OptionError(f"option {arg}: an empty name between dots")
    for table in tables:
        inner = options.setdefault(table, {})
        if not isinstance(inner, dict):
            raise OptionError(f"option {arg}: {table} is already set to a value, not a table of options")
        options = inner
    options[name] = value


def taskset_config(env_id: str, options: Mapping[str, Any]) -> Any:
    """The environment's taskset config, validated by its own pydantic model; a bad value
    is one line per option (`option subset: Input should be 'all' or ...`)."""
    from pydantic import ValidationError

    from medhal.kit.lines import taskset_config_type

    try:
        return taskset_config_type(env_id).model_validate({"id": env_id, **options})
    except ValidationError as e:
        problems = "; ".join(
            f"option {'.'.join(str(p) for p in err['loc']) or '(config)'}: {err['msg']}"
            + (f" (got {err['input']!r})" if "input" in err and not isinstance(err["input"], dict) else "")
            for err in e.errors()
        )
        raise OptionError(f"invalid options for {env_id}: {problems}") from None
