"""When two runs measure the same thing (issue 22 item 2): a run's identity holds every
taskset option but `shard`, so a change of scoring rule (Med-HALT IR's `ir_matching`) is
flagged and fails `--strict-compare`; and runs are paired only when each task's content
agrees, not merely its idx (MedHallu with `pairing = one` and two seeds gives the same
idx another item)."""

from __future__ import annotations

import json
from pathlib import Path

from medhal.reports.compare import compare_runs, identity
from medhal.reports.report import build_report, read_run
from tests.medhal.test_report import SPEC
from tests.medhal.test_rollouts import rollout, write_run


def _with(rows: list[dict], **data: object) -> list[dict]:
    out = json.loads(json.dumps(rows))
    for row in out:
        row["task"]["data"].update(data)
    return out


def _compare(tmp_path: Path, rows_a: list[dict], rows_b: list[dict]) -> dict:
    runs = [
        read_run(write_run(tmp_path / name, rows, 1), SPEC, keep_items=True)
        for name, rows in (("a", rows_a), ("b", rows_b))
    ]
    return compare_runs(runs, [build_report(run) for run in runs])["runs"][1]


def test_a_scoring_option_that_differs_is_flagged(tmp_path):
    # The same replies scored with IR matching normalized, then exact: the items agree (they
    # are paired), but the runs differ in an option, and the comparison says so.
    rows = [rollout(i, 0, True) for i in range(4)]
    a = _with(
        rows, provenance={"dataset": "toy", "options": {"ir_matching": "normalized", "parser": "medhal"}}
    )
    b = _with(rows, provenance={"dataset": "toy", "options": {"ir_matching": "exact", "parser": "medhal"}})
    second = _compare(tmp_path, a, b)
    assert second["paired"] is True
    assert "options" in second["differs_in"]


def test_options_compare_without_the_shard():
    report = {"provenance": {"data": {"options": {"ir_matching": "exact"}}}}
    other = {"provenance": {"data": {"options": {"ir_matching": "exact", "shard": "1/2"}}}}
    assert identity(report)["options"] == identity(other)["options"]


def test_the_same_idx_with_other_content_is_not_paired(tmp_path):
    # Same task ids, other items (another seed chose another answer to show): unpaired.
    rows = [rollout(i, 0, True) for i in range(4)]
    other = _with(rows)
    other[2]["task"]["data"]["gold"] = "no"
    other[2]["info"]["readings"] = {"medhal": "no", "authors": "no", "strict": "no"}
    second = _compare(tmp_path, rows, other)
    assert second["paired"] is False and second["mcnemar"] is None
    assert "content" in second["why_unpaired"] and "item 2" in second["why_unpaired"]


def test_strict_compare_fails_when_an_option_differs(tmp_path):
    from tests.medfact_bench.fixtures import score_demo
    from tests.running import medhal_main

    a = score_demo(["<score>2</score>"] * 6, tmp_path / "a", "--no-plots")
    b = score_demo(["<score>2</score>"] * 6, tmp_path / "b", "--no-plots")
    traces = b / "traces.jsonl"
    rows = [json.loads(line) for line in traces.read_text().splitlines()]
    for row in rows:
        row["task"]["data"]["provenance"]["options"]["scoring_rule"] = "other"
    traces.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "cmp"
    proc = medhal_main("report", str(a), str(b), "--no-plots", "-o", str(out), "--strict-compare")
    assert proc.returncode == 1, proc.stderr
    assert "--strict-compare" in proc.stderr
    assert "options" in (out / "comparison.md").read_text()
    same = medhal_main(
        "report", str(a), str(a), "--no-plots", "-o", str(tmp_path / "same"), "--strict-compare"
    )
    assert same.returncode == 0, same.stderr
