"""Every paper config under configs/eval loads with `eval --dry-run`, so none can rot.

All configs are resolved in one Python process that calls `eval`'s own entry point
(`verifiers.v1.cli.eval.main.main`, what the `eval` executable runs) once per config: one
start-up of verifiers instead of one per config. Running `eval` itself is tested wherever a
test evaluates (tests/conftest.py `run_eval`)."""

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

CONFIGS = sorted((Path(__file__).parents[1] / "configs" / "eval").glob("*.toml"))
RESOLVE = """
import sys
from verifiers.v1.cli.eval.main import main

for config, out in zip(sys.argv[1::2], sys.argv[2::2]):
    url = "http://127.0.0.1:9/v1"
    main(["@", config, "--model", "some/model", "--client.base-url", url, "--dry-run", "-o", out])
"""


def test_there_is_a_config_per_environment():
    ids = {tomllib.loads(p.read_text())["taskset"]["id"] for p in CONFIGS}
    assert {"medfact-bench", "med-halt", "medhallu"} <= ids


@pytest.fixture(scope="module")
def resolved(tmp_path_factory) -> dict[str, Path]:
    """Config stem -> the folder `eval --dry-run` wrote its resolved config.toml into."""
    root = tmp_path_factory.mktemp("resolved")
    outs = {config.stem: root / config.stem for config in CONFIGS}
    argv = [arg for config in CONFIGS for arg in (str(config), str(outs[config.stem]))]
    proc = subprocess.run([sys.executable, "-c", RESOLVE, *argv], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return outs


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.stem)
def test_config_resolves(config, resolved):
    resolved_config = tomllib.loads((resolved[config.stem] / "config.toml").read_text())
    declared = tomllib.loads(config.read_text())
    assert resolved_config["model"] == "some/model"
    for key, value in declared["taskset"].items():
        assert resolved_config["taskset"][key] == value
    for key, value in declared.get("sampling", {}).items():
        assert resolved_config["sampling"][key] == value
    # The environment's own in-process harness is the default.
    assert resolved_config["harness"]["id"] == declared["taskset"]["id"]
