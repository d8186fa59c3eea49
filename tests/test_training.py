"""README "Training with these rewards": its scoring example runs verbatim, and the prime-rl
configs (configs/rl/) are in prime-rl main's shape and hold our tasksets in the roles they state."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CONFIGS = sorted((ROOT / "configs" / "rl").glob("*.toml"))


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


def sources() -> list[tuple[str, str, dict]]:
    found = []
    for path in CONFIGS:
        orchestrator = tomllib.loads(path.read_text())["orchestrator"]
        for role in ("train", "eval"):
            found += [(path.name, role, table) for table in orchestrator.get(role, {}).get("source", [])]
    return found


def test_the_configs_are_in_prime_rl_mains_shape() -> None:
    """prime-rl renamed `[[orchestrator.<train|eval>.env]]` (up to 445392294) to `.source`, each
    with its verifiers env under `env`; a file in the old shape loads nowhere now."""
    assert CONFIGS
    for path in CONFIGS:
        orchestrator = tomllib.loads(path.read_text())["orchestrator"]
        assert "env" not in orchestrator["train"] and "env" not in orchestrator.get("eval", {}), path.name
        assert orchestrator["train"]["source"] and orchestrator["eval"]["source"], path.name


@pytest.mark.parametrize(
    ("config", "role", "table"), sources(), ids=lambda v: v if isinstance(v, str) else v["name"]
)
def test_rl_config_sources_hold_our_tasksets_in_their_roles(config: str, role: str, table: dict) -> None:
    """Each source's taskset options validate against the environment's own config on this
    line too; training sources state `role = "train"` and evaluation sources `role = "eval"` with
    0/1 rewards (prime-rl's pass@k). The whole source is checked against prime-rl main's own
    verifiers in tests/test_prime_rl.py (`make test-prime-rl`)."""
    from medhal.kit.lines import taskset_config_type

    taskset = table["env"]["taskset"]
    options = taskset_config_type(taskset["id"]).model_validate(taskset)
    assert options.role == role
    assert options.binary_reward is (role == "eval")
    assert table["env"]["agent"]["harness"]["id"] == taskset["id"]


def test_rl_configs_train_on_training_pools_and_evaluate_on_evaluation_sets() -> None:
    picked = {
        (
            role,
            t["env"]["taskset"]["id"],
            t["env"]["taskset"].get("config"),
            t["env"]["taskset"].get("split_type"),
        )
        for _c, role, t in sources()
    }
    assert picked == {
        ("train", "medhallu", "pqa_artificial", None),
        ("eval", "medhallu", "pqa_labeled", None),
        ("eval", "medfact-bench", None, None),
        ("train", "med-halt", None, "train"),
        ("eval", "med-halt", None, "test"),
    }
