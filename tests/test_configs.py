"""Every paper config under configs/eval loads with `eval --dry-run`, so none can rot."""

import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.conftest import BIN

CONFIGS = sorted((Path(__file__).parents[1] / "configs" / "eval").glob("*.toml"))


def test_there_is_a_config_per_environment():
    ids = {tomllib.loads(p.read_text())["taskset"]["id"] for p in CONFIGS}
    assert {"medfact-bench", "med-halt", "medhallu"} <= ids


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.stem)
def test_config_resolves(config, tmp_path):
    proc = subprocess.run(
        [
            str(BIN / "eval"),
            "@",
            str(config),
            "--model",
            "some/model",
            "--client.base-url",
            "http://127.0.0.1:9/v1",
            "--dry-run",
            "-o",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    resolved = tomllib.loads((tmp_path / "config.toml").read_text())
    declared = tomllib.loads(config.read_text())
    assert resolved["model"] == "some/model"
    for key, value in declared["taskset"].items():
        assert resolved["taskset"][key] == value
    for key, value in declared.get("sampling", {}).items():
        assert resolved["sampling"][key] == value
    # The environment's own in-process harness is the default.
    assert resolved["harness"]["id"] == declared["taskset"]["id"]
