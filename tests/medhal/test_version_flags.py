"""Scores carry the version of the code that made them, and comparisons say when it differs.

Every trace records the environment's package and version and medhal's and verifiers'
versions; the report keeps them; `medhal report RUN_A RUN_B` marks a run whose
environment version or reading convention differs from the first run's (a column and a
line under the table), and `--strict-compare` turns that into exit status 1.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

from tests.medfact_bench.fixtures import score_demo
from tests.running import medhal_main

ROOT = Path(__file__).parents[2]
REPLIES = [
    "<score>2</score>",
    "<score>-2</score>",
    "<score>0</score>",
    "no score",
    "<score>1</score>",
    "<score>-1</score>",
]


def declared_version(pyproject: Path) -> str:
    return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]


def medhal(*args: str) -> subprocess.CompletedProcess:
    """`medhal ARGS` in this process (its `main`)."""
    return medhal_main(*args)


def score(tmp: Path, name: str, *options: str) -> Path:
    return score_demo(REPLIES, tmp / name, "--no-plots", *options)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """The same six demo items scored three ways: as is, with the `strict` reading, and as
    is but with traces claiming an older environment version."""
    tmp = tmp_path_factory.mktemp("versions")
    base = score(tmp, "base")
    strict = score(tmp, "strict", "--taskset.parser", "strict")
    older = tmp / "older"
    shutil.copytree(base, older)
    rows = [json.loads(line) for line in (older / "traces.jsonl").read_text().splitlines()]
    for row in rows:
        row["task"]["data"]["provenance"]["code"]["environment_version"] = "0.1.0"
    (older / "traces.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (older / "report.json").unlink()
    return {"base": base, "strict": strict, "older": older}


def test_traces_and_report_record_the_code_versions(runs):
    expected = {
        "environment": "medfact-bench",
        "environment_version": declared_version(ROOT / "environments" / "medfact_bench" / "pyproject.toml"),
        "medhal": declared_version(ROOT / "pyproject.toml"),
        "verifiers": version("verifiers"),
    }
    for line in (runs["base"] / "traces.jsonl").read_text().splitlines():
        assert json.loads(line)["task"]["data"]["provenance"]["code"] == expected
    report = json.loads((runs["base"] / "report.json").read_text())
    assert report["provenance"]["data"]["code"] == expected
    assert (
        '"environment_version": "' + expected["environment_version"] + '"'
        in (runs["base"] / "report.md").read_text()
    )


def test_comparison_flags_another_environment_version_and_reading(runs, tmp_path):
    out = tmp_path / "cmp"
    proc = medhal(
        "report", str(runs["base"]), str(runs["older"]), str(runs["strict"]), "-o", str(out), "--no-plots"
    )
    assert proc.returncode == 0, proc.stderr
    rows = json.loads((out / "comparison.json").read_text())[0]["runs"]
    assert [row["differs_in"] for row in rows] == [[], ["environment_version"], ["convention"]]
    table = (out / "comparison.md").read_text()
    assert "differs from run 1 in" in table
    assert "run 2 differs from run 1 in environment_version" in table
    assert "run 3 differs from run 1 in convention" in table


def test_strict_compare_makes_a_difference_an_error(runs, tmp_path):
    same = medhal(
        "report",
        str(runs["base"]),
        str(runs["base"]),
        "-o",
        str(tmp_path / "same"),
        "--no-plots",
        "--strict-compare",
    )
    assert same.returncode == 0, same.stderr
    differ = medhal(
        "report",
        str(runs["base"]),
        str(runs["older"]),
        "-o",
        str(tmp_path / "differ"),
        "--no-plots",
        "--strict-compare",
    )
    assert differ.returncode == 1
    assert "runs differ in code or setting (--strict-compare)" in differ.stderr
