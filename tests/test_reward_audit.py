"""The reward audit (`bench/reward_audit.py`) on the demo rows: the table's structure, chance
and the oracle computed as defined, and the invariant under the default reward where it must
hold. `reports/reward_audit.md` is the same script on the real shared data."""

from __future__ import annotations

import ast
import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from med_halt.benchmark import SETS

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "bench" / "reward_audit.py"
CONVENTIONS = ("medhal", "authors", "strict")
READER_KINDS = {"abstain", "hedge", "all options", "empty", "echo", "negated", "conditional", "retracted"}
EVERY_SETTING_KINDS = {"constant", "errored", *READER_KINDS}
"""Kinds every setting audits; MedHallu adds its surface cue, MedFact-Bench its published prior."""

NOT_SURE, BINARY = "MedHallu, not sure offered", "MedHallu, binary (`not_sure = false`)"
IR_SETS = tuple(name for name in SETS if name.startswith("IR_"))

KNOWN_GAPS: set[tuple[str, str]] = set()
"""Replies naming several answers (or retracting the gold) that the readers still take as one
answer (`reader`), a scoring rule scores right without one answer (`scoring`), or a failed
rollout that earns more than a wrong answer, on the demo rows: none since issue 31. When a
change opens one, the test below names it; list it here only with the issue that will close it,
and re-run the audit (`uv run python bench/reward_audit.py`) for reports/reward_audit.md."""


@pytest.fixture(scope="module")
def audit(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("audit")
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--demo", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    payload = json.loads((out / "reward_audit.json").read_text())
    payload["markdown"] = (out / "reward_audit.md").read_text()
    return payload


def settings(audit: dict) -> dict[str, dict]:
    return {s["setting"]: s for s in audit["settings"]}


def test_every_environment_and_setting_is_audited(audit: dict) -> None:
    """The settings of the environments with an audit of their own, then every other installed
    environment (the test environments, staged by tests/conftest.py) on its demo rows."""
    from med_halt.benchmark import SETS
    from medhal.reports.registry import installed

    own = {"medhallu", "med-halt", "medfact-bench"}
    expected = [
        "MedHallu, not sure offered",
        "MedHallu, binary (`not_sure = false`)",
        *(f"Med-HALT {name}" for name in SETS),
        "MedFact-Bench",
        *(env_id for env_id in installed() if env_id not in own),
    ]
    assert list(settings(audit)) == expected
    for setting in audit["settings"]:
        assert setting["items"] > 0 and setting["gold"]
        for row in (setting["chance"], setting["oracle"], setting["wrong"]):
            assert set(row) == set(CONVENTIONS)
        for policy in setting["policies"]:
            assert set(policy["reward"]) == set(CONVENTIONS)
            assert policy["status"] in ("ok", "intrinsic", "reader", "scoring")
        # Every kind of degenerate reply the issues name is audited (no option list on the IR
        # sets), each environment's data properties too.
        wanted = EVERY_SETTING_KINDS - (
            {"all options"} if setting["setting"].startswith("Med-HALT IR") else set()
        )
        wanted |= {"medhallu": {"surface cue"}, "medfact-bench": {"published prior"}}.get(
            setting["environment"], set()
        )
        assert {p["kind"] for p in setting["policies"]} == wanted, setting["setting"]


def test_the_table_shows_every_row(audit: dict) -> None:
    markdown = audit["markdown"]
    for setting in audit["settings"]:
        assert f"## {setting['setting']}\n" in markdown
        for policy in setting["policies"]:
            assert f"| {policy['policy']} | {policy['kind']} |" in markdown
    assert markdown.count("| **chance** | baseline |") == len(audit["settings"])


def test_the_oracle_earns_the_ceiling(audit: dict) -> None:
    for setting in audit["settings"]:
        assert setting["oracle"]["medhal"] == 1.0, setting["setting"]
        assert setting["oracle"]["strict"] == 1.0, setting["setting"]


def test_chance_is_a_uniform_guess_per_item(audit: dict) -> None:
    """Recomputed here from the demo rows: MedHallu 1/2, MedFact-Bench 1/3; a Med-HALT
    multiple-choice item 1/n_options (+1 right, 0 otherwise: the default reward)."""
    from med_halt.benchmark import DEMO_DIR

    by_name = settings(audit)
    assert by_name["MedHallu, not sure offered"]["chance"]["medhal"] == pytest.approx(0.5)
    assert by_name["MedFact-Bench"]["chance"]["medhal"] == pytest.approx(1 / 3)
    for name in ("reasoning_FCT", "reasoning_nota"):
        with (DEMO_DIR / f"{name}.csv").open() as f:
            counts = [
                len([k for k in ast.literal_eval(r["options"]) if k != "correct answer"])
                for r in csv.DictReader(f)
            ]
        expected = sum(1 / n for n in counts) / len(counts)
        assert by_name[f"Med-HALT {name}"]["chance"]["medhal"] == pytest.approx(expected)


def test_no_constant_answer_beats_chance_on_balanced_medhallu(audit: dict) -> None:
    for name in ("MedHallu, not sure offered", "MedHallu, binary (`not_sure = false`)"):
        setting = settings(audit)[name]
        for policy in setting["policies"]:
            if policy["kind"] == "constant":
                assert policy["reward"]["medhal"] == pytest.approx(setting["chance"]["medhal"])


def test_under_the_default_reward_no_reader_shape_beats_chance_except_the_known_gaps(audit: dict) -> None:
    """Hedges, conditionals, retractions, option lists, echoes, empty replies and abstentions
    never beat chance and are never read as an answer (a retracted gold never as the gold)
    under `medhal`, and an errored rollout never earns more than a wrong answer, except the
    rows listed in KNOWN_GAPS (none); a constant
    answer beats chance only through the data (`intrinsic`)."""
    flagged = set()
    for setting in audit["settings"]:
        for policy in setting["policies"]:
            if policy["kind"] == "constant":
                assert policy["status"] in ("ok", "intrinsic")
            elif policy["status"] in ("reader", "scoring"):
                flagged.add((setting["setting"], policy["policy"]))
    fixed = KNOWN_GAPS - flagged
    new = flagged - KNOWN_GAPS
    assert not new, f"reader shapes that beat chance or read as an answer: {sorted(new)}"
    assert not fixed, f"fixed (remove them from KNOWN_GAPS, re-run the audit): {sorted(fixed)}"


def test_an_errored_rollout_never_earns_more_than_a_wrong_answer(audit: dict) -> None:
    """An errored rollout earns what verifiers records, the empty sum of no rewards (0): in
    every environment that ties a wrong answer (0 by default; Med-HALT's paper points, -0.25,
    are an option and its `paper_points` metric), so failing never pays."""
    for setting in audit["settings"]:
        row = next(p for p in setting["policies"] if p["kind"] == "errored")
        assert row["reward"]["medhal"] == 0.0
        assert row["status"] == "ok" and setting["wrong"]["medhal"] == 0.0, setting["setting"]


def test_the_data_properties_are_stated_beside_chance(audit: dict) -> None:
    """MedHallu's surface cue (no medical knowledge) and MedFact-Bench's published class prior
    are well-formed answers: beating chance is the data's doing (`intrinsic`), never READER."""
    by_name = settings(audit)
    for name in (NOT_SURE, BINARY):
        cue = next(p for p in by_name[name]["policies"] if p["kind"] == "surface cue")
        assert cue["status"] in ("ok", "intrinsic") and cue["answered"]["medhal"] == 1.0
    prior = next(p for p in by_name["MedFact-Bench"]["policies"] if p["kind"] == "published prior")
    assert prior["reward"]["medhal"] == pytest.approx(10_118 / 14_274) and prior["status"] == "intrinsic"


def test_the_committed_report_comes_from_the_script() -> None:
    report = (ROOT / "reports" / "reward_audit.md").read_text()
    assert report.startswith("# Reward audit: degenerate policies against chance\n")
    assert "Written by `bench/reward_audit.py` (real shared data" in report
    assert "| policy | kind | medhal | authors | strict | read as an answer (medhal) | status |" in report
