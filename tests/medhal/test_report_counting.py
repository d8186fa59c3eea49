"""What a report counts, counted right (issue 22 items 3, 4 and 6): task ids outside the
selection make a run incomplete, the tables of unreadable replies and errors never show an
upper bound as an exact count, and the provenance a report collects costs the same per
trace however many distinct blocks the traces carry."""

from __future__ import annotations

import json
from pathlib import Path

from medhal.reports.report import Run, TopCounts, build_report, read_run
from medhal.reports.traces import iter_traces
from tests.medhal.test_report import SELECTION, WHOLE_SPEC, _whole_trace


def _write(tmp_path: Path, rows: list[dict], name: str = "traces.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _selection(n: int, **changes: object) -> dict:
    return {**SELECTION, "n_expected": n, **changes}


# ------------------------------------------------------------------ provenance: linear work


class CountingDict(dict):
    """A dict that counts how often it is compared for equality."""

    comparisons = 0

    def __eq__(self, other: object) -> bool:
        CountingDict.comparisons += 1
        return dict.__eq__(self, other)

    __hash__ = None  # type: ignore[assignment]


def test_distinct_provenance_on_every_trace_costs_a_bounded_number_of_comparisons(tmp_path):
    # Each of 600 traces carries its own provenance, selection and sampling block (an
    # adversarial file, or one concatenated from many runs). Collecting the distinct blocks
    # by list membership compares each new block with every one before it: 600 * 599 / 2 =
    # 179,700 comparisons per field. A report's work per trace must not grow with the file:
    # at most a few comparisons per trace, whatever the number of distinct blocks.
    n = 600
    path = _write(tmp_path, [_whole_trace(i, selection=_selection(n)) for i in range(n)])
    run = Run(WHOLE_SPEC, str(path))
    CountingDict.comparisons = 0
    for i, record in enumerate(iter_traces(path)):
        record.data["provenance"] = CountingDict(record.data["provenance"], seed=i)
        record.data["selection"] = CountingDict(record.data["selection"], seed=i)
        record.sampling = CountingDict(temperature=0.5, seed=i)
        run.add(record)
    report = build_report(run)
    assert CountingDict.comparisons <= 10 * n, CountingDict.comparisons
    assert report["mixed_provenance"] and not report["complete"]


def test_a_run_of_many_provenances_lists_a_few_and_counts_them_all(tmp_path):
    # 300 distinct provenance blocks: the report names the first ones, says how many there
    # are, and stays a readable size (not 300 blocks of options and hashes).
    n = 300
    rows = [_whole_trace(i, selection=_selection(n)) for i in range(n)]
    for i, row in enumerate(rows):
        row["task"]["data"]["provenance"] = {**row["task"]["data"]["provenance"], "seed": i}
        row["agent"]["sampling"] = {"temperature": 0.5, "seed": i}
    report = build_report(read_run(_write(tmp_path, rows), WHOLE_SPEC))
    assert report["mixed_provenance"]
    assert report["provenance_distinct"] == {"data": {"": 300}, "selection": 1, "sampling": 300}
    assert len(report["provenance"]["data"]) == len(report["provenance"]["sampling"]) == 20
    assert report["provenance"]["data"][0]["seed"] == 0 and report["provenance"]["data"][19]["seed"] == 19


# ------------------------------------------------ unreadable replies and errors: true counts


def test_a_count_inherited_from_an_evicted_key_is_shown_as_at_least_its_own():
    # Capacity 2. a, a, b, then c: b (the rarest) is evicted and c inherits b's 1. c was
    # seen once; all a report may say of it is "at least 1" (its own sightings since it came
    # in), never 2. a was never evicted: exactly 2.
    top = TopCounts(capacity=2)
    for key, example in (("a", 10), ("a", 11), ("b", 12), ("c", 13)):
        top.add(key, example)
    assert top.top(5) == [("a", 2, 10, True), ("c", 1, 13, False)]


def _unreadable_trace(i: int, reply: str) -> dict:
    row = _whole_trace(i, right={"medhal": 0, "authors": 0, "strict": 0}, selection=_selection(2000))
    row["metrics"] = dict.fromkeys(row["metrics"], 0.0)
    row["info"] = {"readings": {"medhal": None, "authors": None, "strict": None}}
    row["nodes"][0]["message"]["content"] = reply
    return row


def _letters(i: int) -> str:
    """i written in letters (numbers are masked in error messages)."""
    out = ""
    while True:
        out = "abcdefghijklmnopqrstuvwxyz"[i % 26] + out
        i //= 26
        if not i:
            return out


def test_two_thousand_distinct_unreadable_replies_and_errors_show_no_made_up_count(tmp_path):
    # 1,500 distinct unreadable replies and 500 distinct error messages, each seen exactly
    # once: more than the tables keep (1,000 shapes, 200 messages). Every count shown is
    # either exact (1) or marked as a lower bound; none says 2.
    rows = [_unreadable_trace(i, f"shape {_letters(i)}") for i in range(1500)]
    for i in range(1500, 2000):
        row = _whole_trace(i, selection=_selection(2000))
        row.update(nodes=[], metrics={}, info={}, errors=[{"type": "E", "message": f"failure {_letters(i)}"}])
        rows.append(row)
    report = build_report(read_run(_write(tmp_path, rows), WHOLE_SPEC))
    assert report["n_unreadable"] == 1500 and report["n_errors"] == 500
    assert report["unreadable"] and all(u["count"] == 1 for u in report["unreadable"])
    assert all(u["exact"] for u in report["unreadable"][:10])  # the exact ones rank first on ties
    assert report["errors"] and set(report["errors"].values()) == {1}
    assert set(report["errors_at_least"]) <= set(report["errors"])


def test_tables_say_at_least_where_a_count_is_a_lower_bound(tmp_path):
    from medhal.reports.html import report_html
    from medhal.reports.markdown import to_markdown

    # Capacity 1,000 shapes: 1,000 distinct replies once each, then "late" four times. late
    # evicts a shape seen once and inherits its 1: it is known to have been seen at least 4
    # times, the table says so, and the total stays exact.
    rows = [_unreadable_trace(i, f"shape {_letters(i)}") for i in range(1000)]
    rows += [_unreadable_trace(1000 + i, "late") for i in range(4)]
    for row in rows:
        row["task"]["data"]["selection"] = _selection(1004)
    report = build_report(read_run(_write(tmp_path, rows), WHOLE_SPEC))
    assert report["unreadable"][0] == {"shape": "late", "count": 4, "idx": 1000, "exact": False}
    assert report["n_unreadable"] == 1004
    markdown = to_markdown(report, ("accuracy",))
    assert "| at least 4 | `late` | 1000 |" in markdown
    assert "at least 4" in report_html(report, {})


# ------------------------------------------------------- completeness compares sets of ids


def test_task_ids_outside_the_selection_make_the_run_incomplete(tmp_path):
    from medhal.reports.markdown import completeness_problems, to_markdown

    # The run selected tasks 0..3; the file holds 0..5 (traces from a larger run appended).
    rows = [_whole_trace(i, selection=_selection(4)) for i in range(6)]
    report = build_report(read_run(_write(tmp_path, rows), WHOLE_SPEC))
    assert (report["n_expected"], report["n_outside"], report["outside_idx"], report["n_missing"]) == (
        4,
        2,
        [4, 5],
        0,
    )
    assert not report["complete"] and not report["paper_comparable"]
    assert "Complete:" not in to_markdown(report, ("accuracy",))
    assert any(
        "2 task ids are outside the run's selection (first: 4, 5)" in p for p in completeness_problems(report)
    )


def test_a_run_missing_task_0_but_holding_task_4_is_not_complete(tmp_path):
    rows = [_whole_trace(i, selection=_selection(4)) for i in (1, 2, 3, 4)]
    report = build_report(read_run(_write(tmp_path, rows), WHOLE_SPEC))
    assert (report["n_missing"], report["missing_idx"], report["n_outside"], report["outside_idx"]) == (
        1,
        [0],
        1,
        [4],
    )
    assert not report["complete"]


def test_a_shard_holding_another_shards_task_is_not_complete(tmp_path):
    # Shard 1/2 of six tasks owns 1, 3, 5; task 2 belongs to shard 0/2.
    selection = _selection(6, shard="1/2", n_shard=3)
    rows = [_whole_trace(i, selection=selection) for i in (1, 2, 3, 5)]
    report = build_report(read_run(_write(tmp_path, rows), WHOLE_SPEC))
    assert (report["n_expected"], report["n_missing"], report["n_outside"], report["outside_idx"]) == (
        3,
        0,
        1,
        [2],
    )
    assert not report["complete"]


def test_a_shuffled_selection_is_checked_by_the_hash_of_its_ids(tmp_path):
    import hashlib

    def selection(ids: list[int]) -> dict:
        listed = ",".join(map(str, sorted(ids)))
        return _selection(
            len(ids),
            contiguous=False,
            shuffle=True,
            num_tasks=len(ids),
            idx_sha256=hashlib.sha256(listed.encode()).hexdigest(),
        )

    chosen = [3, 7, 11]
    good = build_report(
        read_run(_write(tmp_path, [_whole_trace(i, selection=selection(chosen)) for i in chosen]), WHOLE_SPEC)
    )
    assert good["complete"] and good["ids_match_selection"] is True
    # Same count, other ids: 3, 7, 12.
    rows = [_whole_trace(i, selection=selection(chosen)) for i in (3, 7, 12)]
    bad = build_report(read_run(_write(tmp_path, rows, "other.jsonl"), WHOLE_SPEC))
    assert bad["ids_match_selection"] is False and not bad["complete"]


def test_report_exits_1_on_ids_outside_the_selection(tmp_path):
    # Through the command, with the MedFact-Bench demo run: one trace's idx moved past the
    # selection (6 tasks: 0..5), so 5 is missing and 6 is outside.
    from tests.medfact_bench.fixtures import score_demo
    from tests.running import medhal_main

    run = score_demo(["<score>2</score>"] * 6, tmp_path / "run", "--no-plots")
    traces = run / "traces.jsonl"
    lines = traces.read_text().splitlines()
    row = json.loads(lines[5])
    row["task"]["data"]["idx"] = 6
    lines[5] = json.dumps(row)
    traces.write_text("\n".join(lines) + "\n")
    proc = medhal_main("report", str(run), "--no-plots")
    assert proc.returncode == 1
    assert (
        "1 task ids are outside the run's selection" in proc.stderr
        and "1 of 6 tasks have no trace" in proc.stderr
    )


def test_an_examples_idx_does_not_depend_on_the_order_rollouts_were_written():
    """Concurrent rollouts finish, and are written, in any order: the example shown for a key is
    the smallest idx seen, so the same rollouts give the same report."""
    forward, backward = TopCounts(), TopCounts()
    for idx in (14, 2, 9):
        forward.add("(empty reply)", idx)
    for idx in (9, 2, 14):
        backward.add("(empty reply)", idx)
    assert forward.top(1) == backward.top(1) == [("(empty reply)", 3, 2, True)]
