"""verifiers' model-free task check, `validate <env-id>` on the subprocess runtime, in this
process: the arguments are parsed into the command's own narrowed config and its
`run_validate` checks every task (`verifiers.v1.cli.validate`, what the `validate`
executable runs after setting up logging), so the suite starts verifiers once for all its
validations. Each environment's test_validate.py also runs the executable itself once."""

from __future__ import annotations

import asyncio
import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tests.running import environment

MEDHAL_LOGGER = "medhal.kit.task"
"""Where `validate_task` logs why a task is invalid: `<benchmark> <source id> (idx <n>) is invalid: <why>`."""


@dataclass
class Validation:
    valid: dict[int, bool] = field(default_factory=dict)
    reasons: dict[int, list[str]] = field(default_factory=dict)
    """idx -> why it is invalid, as logged (one entry per problem)."""
    error: str | None = None
    """Why the tasks could not be loaded (None when they were)."""

    @property
    def invalid(self) -> set[int]:
        return {idx for idx, ok in self.valid.items() if not ok}


class _Reasons(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.found: dict[int, list[str]] = {}

    def emit(self, record: logging.LogRecord) -> None:
        _benchmark, _source_id, idx, why = record.args  # type: ignore[misc]
        self.found.setdefault(int(idx), []).append(str(why))


def validate(env_id: str, *args: str, assets: Path | None = None) -> Validation:
    """`validate env_id --runtime.type subprocess ARGS`, with `MEDHAL_ASSETS_DIR=assets`
    when given: each task's verdict, medhal's reasons for the invalid ones, or the error
    that stopped the tasks from loading."""
    from pydantic_config import cli
    from verifiers.v1.cli.resolve import with_positional_taskset
    from verifiers.v1.cli.validate import _narrow, run_validate

    argv = with_positional_taskset([env_id, "--runtime.type", "subprocess", "--no-rich", *args])
    saved_argv = sys.argv
    sys.argv = ["validate", *argv]
    try:
        config = cli(_narrow(argv))
    finally:
        sys.argv = saved_argv
    logger = logging.getLogger(MEDHAL_LOGGER)
    reasons = _Reasons()
    logger.addHandler(reasons)
    result = Validation()
    try:
        with environment({} if assets is None else {"MEDHAL_ASSETS_DIR": str(assets)}):
            rows = asyncio.run(run_validate(config))
    except Exception as e:  # a row that cannot be a task: refused at load, with its message
        result.error = f"{type(e).__name__}: {e}"
        return result
    finally:
        logger.removeHandler(reasons)
    for row in rows:
        idx = int(row["index"])
        assert idx not in result.valid, f"idx {idx} reported twice"
        assert (row["reason"] == "valid") is bool(row["valid"]), row
        result.valid[idx] = bool(row["valid"])
    result.reasons = reasons.found
    return result
