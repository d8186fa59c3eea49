"""Loads every configs/rl/*.toml with prime-rl's own `RLConfig`, as `uv run rl @ FILE` parses it,
and prints each source as prime-rl resolved it (environment, taskset config class, the options
set, harness, runtime, rollout timeout, role, binary reward). Exit 1 if a file does not load.

Needs prime-rl's `prime-rl-configs` package (not on PyPI) beside these environments and the
verifiers prime-rl pins: `make check-prime-rl-configs PRIME_RL=<a prime-rl checkout>` installs it
from the checkout into compat/prime-rl and runs this there.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def describe(role: str, source: object) -> str:
    env = source.env  # type: ignore[attr-defined]
    taskset = env.taskset
    options = taskset.model_dump(exclude_defaults=True, exclude={"id"})
    harness = env.agent.harness.id if env.agent.harness is not None else None
    return (
        f"  {role:5} {source.resolved_name}: {type(taskset).__name__} {options}; harness {harness}; "  # type: ignore[attr-defined]
        f"runtime {env.agent.runtime.type}; rollout timeout {env.agent.timeout.rollout}; "
        f"role {taskset.role}; binary_reward {taskset.binary_reward}"
    )


def main() -> int:
    try:
        from prime_rl.configs.rl import RLConfig
        from pydantic_config import cli
    except ImportError as e:
        print(
            f"prime-rl's config package is not installed ({e}): see this script's docstring", file=sys.stderr
        )
        return 2
    failed = 0
    for path in sorted((ROOT / "configs" / "rl").glob("*.toml")):
        try:
            config = cli(RLConfig, args=["@", str(path)])
        except (Exception, SystemExit) as e:  # a refused config: pydantic's errors, or the cli's exit
            print(f"{path.relative_to(ROOT)}: refused by prime-rl's RLConfig: {e}", file=sys.stderr)
            failed += 1
            continue
        orchestrator = config.orchestrator
        print(f"{path.relative_to(ROOT)}: loaded by prime-rl's RLConfig (model {config.model.name})")
        for source in orchestrator.train.source:
            print(describe("train", source))
        for source in orchestrator.eval.source if orchestrator.eval is not None else []:
            print(describe("eval", source))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
