"""Every paper config (configs/eval, and a test environment's own) loads with `eval --dry-run`,
so none can rot.

All are resolved in one process that calls the `eval` command's entry point
(`verifiers.v1.cli.eval.main:main`, what the `eval` script runs) once per config: the same
argument parsing and validation as one `eval @ CONFIG --dry-run` command each, with
verifiers imported once instead of once per config."""

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from medhal.kit import contract

ROOT = Path(__file__).parents[1]
CONFIGS = [path for folder in contract.settings_dirs(ROOT) for path in sorted(folder.glob("*.toml"))]
"""configs/eval/ and each test environment's own settings."""
DRY_RUNS = """
import sys
from verifiers.v1.cli.eval.main import main

for config, out in zip(sys.argv[1::2], sys.argv[2::2]):
    try:
        main(["@", config, "--model", "some/model", "--client.base-url", "http://127.0.0.1:9/v1",
              "--dry-run", "-o", out])
    except SystemExit as e:  # a rejected config: report it, resolve the others
        print(f"DRY-RUN FAILED {config}: exit {e.code}", file=sys.stderr)
"""


def test_there_is_a_config_per_environment():
    ids = {tomllib.loads(p.read_text())["taskset"]["id"] for p in CONFIGS}
    assert {env.env_id for env in contract.environments(ROOT, tests=True)} <= ids


@pytest.fixture(scope="module")
def resolved(tmp_path_factory) -> tuple[Path, str]:
    """(folder with one `<stem>/config.toml` per config, the dry runs' stderr). One more dry run
    is of a config with an `[[eval]]` table added (prime's format), which `eval` must refuse."""
    out = tmp_path_factory.mktemp("dry-runs")
    with_eval_table = out / "with_eval_table.toml"
    with_eval_table.write_text(CONFIGS[0].read_text() + '\n[[eval]]\nenv_id = "med-halt"\n')
    argv = [str(arg) for config in [*CONFIGS, with_eval_table] for arg in (config, out / config.stem)]
    proc = subprocess.run(
        [sys.executable, "-c", DRY_RUNS, *argv], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, proc.stderr


def test_an_eval_table_is_refused(resolved):
    """`eval @` validates the whole file and forbids keys it does not know, so one file cannot
    serve it and prime's `[[eval]]` loader (configs/prime/ is rendered instead)."""
    out, log = resolved
    assert not (out / "with_eval_table" / "config.toml").exists()
    assert f"DRY-RUN FAILED {out / 'with_eval_table.toml'}" in log and "eval" in log


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.stem)
def test_config_resolves(config, resolved):
    out, log = resolved
    written = out / config.stem / "config.toml"
    assert written.is_file(), log[-3000:]
    resolved_config = tomllib.loads(written.read_text())
    declared = tomllib.loads(config.read_text())
    assert resolved_config["model"] == "some/model"
    for key, value in declared["taskset"].items():
        assert resolved_config["taskset"][key] == value
    for key, value in declared.get("sampling", {}).items():
        assert resolved_config["sampling"][key] == value
    assert resolved_config["num_rollouts"] == declared["num_rollouts"]
    assert resolved_config["timeout"]["rollout"] == declared["timeout"]["rollout"]
    # The environment's own in-process harness is the default.
    assert resolved_config["harness"]["id"] == declared["taskset"]["id"]
