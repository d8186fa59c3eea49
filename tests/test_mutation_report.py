"""The mutation-testing record: `tests/mutation_verdicts.toml` (why each surviving mutant may
live) and `scripts/mutation_report.py`, which joins it with mutmut's results into
reports/test-quality.md and fails while a survivor is unexplained or its reason is stale."""

from __future__ import annotations

import importlib.util
import json
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("mutation_report", ROOT / "scripts" / "mutation_report.py")
assert spec and spec.loader
mutation_report = importlib.util.module_from_spec(spec)
sys.modules["mutation_report"] = mutation_report  # dataclasses look their module up there
spec.loader.exec_module(mutation_report)
Mutant = mutation_report.Mutant

MUTATED = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mutmut"]["only_mutate"]
MODULES = {path.removesuffix(".py").replace("/", ".") for path in MUTATED}


def test_every_verdict_names_a_mutated_module_a_category_and_its_line():
    data = tomllib.loads((ROOT / "tests" / "mutation_verdicts.toml").read_text())
    categories = data["categories"]
    assert set(categories) == {"message", "speed", "equivalent", "unreachable", "order", "known"}
    for name, verdict in data["verdicts"].items():
        module = name.rsplit(".", 1)[0]
        assert module in MODULES, name
        assert "__mutmut_" in name, name
        assert verdict["why"] in categories, name
        assert verdict["line"], name
        if verdict["why"] in ("equivalent", "unreachable"):
            assert verdict.get("note"), f"{name}: an {verdict['why']} verdict must say why"


def _mutants():
    return [
        Mutant(
            "medhal.reports.metrics.x_ratio__mutmut_1",
            "medhal.reports.metrics",
            1,
            "medhal/reports/metrics.py",
        ),  # killed
        Mutant(
            "medhal.reports.metrics.x_ratio__mutmut_2",
            "medhal.reports.metrics",
            -24,
            "medhal/reports/metrics.py",
        ),  # timeout
        Mutant(
            "medhal.reports.metrics.x_ratio__mutmut_3",
            "medhal.reports.metrics",
            0,
            "medhal/reports/metrics.py",
        ),  # explained
        Mutant(
            "medhal.reports.metrics.x_ratio__mutmut_4",
            "medhal.reports.metrics",
            0,
            "medhal/reports/metrics.py",
        ),  # unexplained
        Mutant(
            "medhal.reports.metrics.x_ratio__mutmut_5",
            "medhal.reports.metrics",
            0,
            "medhal/reports/metrics.py",
        ),  # stale
        Mutant(
            "medhal.reports.report.x_top__mutmut_1", "medhal.reports.report", 33, "medhal/reports/report.py"
        ),  # no tests
    ]


LINES = {
    "medhal.reports.metrics.x_ratio__mutmut_3": 'raise ValueError("XXbadXX")',
    "medhal.reports.metrics.x_ratio__mutmut_4": "return a / (b + 1)",
    "medhal.reports.metrics.x_ratio__mutmut_5": "return a * b",
    "medhal.reports.report.x_top__mutmut_1": "return []",
}
CATEGORIES = {"message": "Only a message changes.", "order": "Only order changes."}
VERDICTS = {
    "medhal.reports.metrics.x_ratio__mutmut_3": {"why": "message", "line": 'raise ValueError("XXbadXX")'},
    "medhal.reports.metrics.x_ratio__mutmut_5": {
        "why": "order",
        "line": "return b * a",
    },  # written for another line
}


def test_unexplained_and_stale_survivors_are_listed_and_fail_the_report():
    text, problems = mutation_report.render(_mutants(), LINES, CATEGORIES, VERDICTS)
    # mutmut_4 (no verdict), mutmut_5 (verdict for another line), x_top (no tests, no verdict)
    assert problems == 3
    section = text.split("## Survivors without a reason")[1].split("##")[0]
    assert "x_ratio__mutmut_4" in section and "x_ratio__mutmut_5" in section and "x_top__mutmut_1" in section
    assert "stale verdict" in section
    assert "x_ratio__mutmut_3" not in section


def test_scores_count_explained_survivors_out_of_the_denominator():
    text, _ = mutation_report.render(_mutants(), LINES, CATEGORIES, VERDICTS)
    rows = {line.split(" | ")[0].lstrip("| "): line.split(" | ") for line in text.splitlines()}
    # medhal.reports.metrics: killed 1, timeout 1, explained 1, survived 2 (one stale) of 5:
    # score = (1 + 1) / (5 - 1) = 50.0%
    metrics = rows["medhal.reports.metrics"]
    assert metrics[1:7] == ["1", "1", "1", "2", "0", "0"]
    assert metrics[-1].rstrip(" |") == "50.0%"
    # medhal.reports.report: one mutant without tests, unexplained: (0 + 0) / (1 - 0) = 0.0%
    assert rows["medhal.reports.report"][-1].rstrip(" |") == "0.0%"
    # all: (2) / (6 - 1) = 40.0%
    assert rows["**all**"][-1].rstrip(" |") == "40.0%"
    assert "### message (1)" in text and "x_ratio__mutmut_3" in text.split("### message (1)")[1]


def test_mutants_are_read_from_mutmut_meta_files(tmp_path):
    meta = tmp_path / "mutants" / "medhal" / "reports" / "metrics.py.meta"
    meta.parent.mkdir(parents=True)
    codes = {
        "medhal.reports.metrics.x_f__mutmut_2": 0,
        "medhal.reports.metrics.x_f__mutmut_1": 1,
        "medhal.reports.metrics.x_f__mutmut_3": None,
    }
    meta.write_text(json.dumps({"exit_code_by_key": codes}))
    mutants = mutation_report.load_mutants(tmp_path)
    assert [(m.name.rsplit("_", 1)[1], m.module, m.status, m.path) for m in mutants] == [
        ("1", "medhal.reports.metrics", "killed", "medhal/reports/metrics.py"),
        ("2", "medhal.reports.metrics", "survived", "medhal/reports/metrics.py"),
        ("3", "medhal.reports.metrics", "not checked", "medhal/reports/metrics.py"),
    ]


def test_a_verdict_with_an_unknown_category_is_refused(tmp_path):
    path = tmp_path / "v.toml"
    path.write_text(
        '[categories]\nmessage = "m"\n[verdicts]\n"a.b.x__mutmut_1" = { why = "typo", line = "x" }\n'
    )
    with pytest.raises(SystemExit, match="is not a category"):
        mutation_report.load_verdicts(path)


def test_prune_drops_only_the_verdicts_of_mutants_no_longer_alive(tmp_path):
    path = tmp_path / "v.toml"
    path.write_text(
        '# why\n[categories]\nmessage = "m"\n\n[verdicts]\n'
        '"a.b.x__mutmut_1" = { why = "message", line = "x" }\n'
        '"a.b.xǁCǁf__mutmut_2" = { why = "message", line = "y = \\" = \\"" }\n'
        '"a.b.x__mutmut_3" = { why = "message", line = "z" }\n'
    )
    assert mutation_report.prune(path, {"a.b.xǁCǁf__mutmut_2"}) == 2
    text = path.read_text()
    assert text.startswith('# why\n[categories]\nmessage = "m"\n\n[verdicts]\n')
    assert list(tomllib.loads(text)["verdicts"]) == ["a.b.xǁCǁf__mutmut_2"]
