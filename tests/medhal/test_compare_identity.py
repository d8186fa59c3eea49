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


# ------------------------------------------------------- the same items on two verifiers lines

LINE_04_TASK_FIELDS = {
    "artifact_max_bytes": 33554432,
    "artifacts": [],
    "network_allow": ["*"],
    "network_block": [],
    "skills": [],
}
"""verifiers 0.4.0's own TaskData fields, as its vf-eval writes them on every task (0.2.1's
`timeout` and `resources` are not among them)."""


def as_episode(trace: dict) -> dict:
    """A verifiers 0.2 trace as verifiers 0.4's vf-eval writes the same rollout: an episode
    with the trace inside, the task data with 0.4's own fields instead of 0.2's, rewards as
    `{score, weight}`, and every sampling setting listed (null when unset)."""
    data = {k: v for k, v in trace["task"]["data"].items() if k not in ("timeout", "resources")}
    data.update(LINE_04_TASK_FIELDS, paper_exists=None)
    task = {"type": trace["task"]["type"], "data": data, "key": None, "hash": None}
    sampling = {"temperature": None, "top_p": None, "reasoning_effort": None, "max_tokens": None}
    sampling.update(trace["agent"].get("sampling") or {})
    inner = {
        **trace,
        "task": task,
        "agent": {"config": {"model": trace["agent"]["model"], "sampling": sampling}},
        "rewards": {name: {"score": value, "weight": 1.0} for name, value in trace["rewards"].items()},
        "verifiers": {"version": "0.4.0"},
    }
    return {"id": trace["id"], "task": task, "ok": True, "errors": [], "traces": [inner]}


def test_the_same_items_on_two_verifiers_lines_are_paired_and_the_same_setting(tmp_path):
    # Issue 33 item 4: the same six MedFact-Bench demo items, scored on the 0.2 line and
    # (rewritten as) the 0.4 line. Only verifiers' own task fields and the spelling of unset
    # sampling settings differ: the runs are paired, differ in nothing, and --strict-compare
    # passes. A 0.2 trace may list an unset setting as null too; null and absent are one.
    from tests.medfact_bench.fixtures import score_demo
    from tests.running import medhal_main

    replies = ["<score>2</score>", "<score>-2</score>", "no score"] * 2
    a = score_demo(replies, tmp_path / "a", "--no-plots")
    rows = [json.loads(line) for line in (a / "traces.jsonl").read_text().splitlines()]
    for row in rows:
        row["agent"]["sampling"] = {"temperature": 0.0, "max_tokens": 64, "top_p": None}
    (a / "traces.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    b = tmp_path / "b"
    b.mkdir()
    for row in rows:
        row["agent"]["sampling"] = {"temperature": 0.0, "max_tokens": 64}
    (b / "traces.jsonl").write_text("".join(json.dumps(as_episode(r)) + "\n" for r in rows))
    out = tmp_path / "cmp"
    proc = medhal_main("report", str(a), str(b), "--no-plots", "-o", str(out), "--strict-compare")
    assert proc.returncode == 0, proc.stderr
    (comparison,) = json.loads((out / "comparison.json").read_text())
    second = comparison["runs"][1]
    assert second["paired"] is True, second.get("why_unpaired")
    assert (second["differs_in"], second["differences"]) == ([], [])
    assert second["difference"]["accuracy"] == 0.0


def test_every_environment_digests_the_fields_it_declares():
    # What says which item a task is: the fields BenchmarkData and the environment's TaskData
    # subclass declare (the report cannot import them: it stays free of verifiers), never
    # verifiers' own, which differ by line.
    import importlib
    import inspect

    import verifiers.v1 as vf

    from medhal.kit.task import BenchmarkData
    from medhal.reports.registry import installed, package, report_spec
    from medhal.reports.report import BENCHMARK_FIELDS, RUN_FIELDS

    base = set(vf.TaskData.model_fields)
    assert set(BenchmarkData.model_fields) - base == set(BENCHMARK_FIELDS) | RUN_FIELDS
    for env_id in installed():
        module = importlib.import_module(f"{package(env_id)}.taskset")
        (data_type,) = [
            c
            for _, c in inspect.getmembers(module, inspect.isclass)
            if issubclass(c, BenchmarkData) and c is not BenchmarkData
        ]
        own = set(data_type.model_fields) - set(BenchmarkData.model_fields)
        assert set(report_spec(env_id).content_fields or ()) == own, env_id
