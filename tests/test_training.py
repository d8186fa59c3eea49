"""README "Training with these rewards": its scoring example runs verbatim, and the prime-rl
config (configs/rl/medhallu.toml) holds environments verifiers 0.2.1 accepts."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
RL_CONFIG = ROOT / "configs" / "rl" / "medhallu.toml"

PRIME_RL_ENV_KEYS = {
    # prime-rl @ 445392294, packages/prime-rl-configs/src/prime_rl/configs/orchestrator.py: what its
    # EnvConfig / TrainEnvConfig / EvalEnvConfig add to verifiers' EnvServerConfig.
    "train": {"name", "address", "ratio", "sampling", "group_size", "algo"},
    "eval": {"name", "address", "ratio", "sampling", "num_examples", "group_size", "interval"},
}


def scoring_example() -> str:
    text = README.read_text()
    block = re.search(
        r"<!-- scoring-example:begin -->\n```python\n(.*?)```\n<!-- scoring-example:end -->", text, re.S
    )
    assert block, "README: the scoring example's markers are missing"
    return block.group(1)


def test_scoring_example_is_about_thirty_lines() -> None:
    assert 15 <= len(scoring_example().splitlines()) <= 35


def test_readme_scoring_example_runs_verbatim() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", scoring_example()], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert len(lines) == 5
    assert lines[0].startswith("+1.00") and "advantage +0.60" in lines[0]
    assert lines[3].startswith("+0.00") and "None" in lines[3] and "'0 or 1'" in lines[3]


def env_tables() -> list[tuple[str, dict]]:
    config = tomllib.loads(RL_CONFIG.read_text())
    orchestrator = config["orchestrator"]
    return [("train", t) for t in orchestrator["train"]["env"]] + [
        ("eval", t) for t in orchestrator["eval"]["env"]
    ]


@pytest.mark.parametrize(
    ("role", "table"), env_tables(), ids=lambda v: v if isinstance(v, str) else v["name"]
)
def test_rl_config_envs_are_verifiers_env_server_configs(role: str, table: dict) -> None:
    """Each env table, less prime-rl's own keys, is a verifiers `EnvServerConfig` (the base of
    prime-rl's EnvConfig): the taskset options validate against the environment's own config,
    and the harness resolves to the environment's own."""
    from verifiers.v1.env import EnvServerConfig

    assert set(table) - {"taskset", "harness", "timeout", "pool", "retries"} <= PRIME_RL_ENV_KEYS[role]
    env = EnvServerConfig.model_validate({k: v for k, v in table.items() if k not in PRIME_RL_ENV_KEYS[role]})
    assert type(env.taskset).__name__ == "MedHalluConfig"
    assert env.harness.id == "medhallu"
    assert env.timeout.rollout == 360


def test_rl_config_trains_on_the_training_pool_and_evaluates_on_the_eval_set() -> None:
    tables = {role: t["taskset"] for role, t in env_tables()}
    assert (tables["train"]["config"], tables["train"]["split"]) == ("pqa_artificial", "train")
    assert (tables["eval"]["config"], tables["eval"]["split"]) == ("pqa_labeled", "eval")
