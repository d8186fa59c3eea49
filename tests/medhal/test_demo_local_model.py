"""The demo path with the real embedded model: every installed environment, a handful of
items each, small max_tokens; every rollout must come back as a scored trace and every
report must count them all."""

import json
import os
import re
from pathlib import Path

import pytest

from medhal.kit import contract
from medhal.reports.registry import installed
from medhal.serving.local_model import missing_packages
from tests.conftest import run_medhal

pytestmark = pytest.mark.slow(reason="the demo end to end with the real local model, generating on the CPU")

ITEMS = 2
ROOT = Path(__file__).resolve().parents[2]


def test_demo_with_the_local_model(offline_assets, tmp_path):
    if missing_packages():
        message = f"the `local` extra is not installed ({', '.join(missing_packages())})"
        if os.environ.get("CI"):
            pytest.fail(message + "; `uv sync` installs it with the dev group")
        pytest.skip(message)
    out = tmp_path / "demo"
    proc = run_medhal("demo", "-n", str(ITEMS), "--max-tokens", "16", "-c", "2", "-o", str(out), timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    envs = installed()
    assert set(envs) == {env.env_id for env in contract.environments(ROOT, tests=True)}  # test ones staged
    for env_id in envs:
        rows = [json.loads(x) for x in (out / env_id / "traces.jsonl").read_text().splitlines() if x.strip()]
        assert len(rows) == ITEMS, env_id
        for row in rows:
            assert not row["errors"], (env_id, row["errors"])
            assert row["agent"]["model"] == "smollm2-135m-instruct"
            assert any(n.get("sampled") for n in row["nodes"]), env_id  # the model answered
            assert row["rewards"] and row["metrics"], env_id  # and the answer was scored
        report = json.loads((out / env_id / "report.json").read_text())
        assert report["n"] == ITEMS and report["n_errors"] == 0
        assert all((out / env_id / plot).is_file() for plot in report["plots"])
    combined = json.loads((out / "report.json").read_text())
    assert [r["benchmark"] for r in combined] == list(envs)
    page = (out / "report.html").read_text()
    links = re.findall(r'href="([\w-]+/report\.html)"', page)
    assert sorted(links) == sorted(f"{env}/report.html" for env in envs)
    assert all((out / link).is_file() for link in links)
    summary = (out / "report.md").read_text()
    # The table leads with each benchmark's headline, as its paper names it (issue 34 item 2).
    header = "| benchmark | headline (as the paper names it) | value (95% CI) | items | errors |"
    assert header in summary and header in proc.stdout
    # The terminal shows progress and a summary; eval's own logs went to files.
    assert "eval config" not in proc.stdout and (out / "medfact-bench" / "eval.log").is_file()
