"""Tests written to kill mutants of `medhal/report.py` that `make mutants` found alive
(reports/test-quality.md lists each one, killed or explained). Expected values are worked out
by hand in the comments.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medhal.report import (
    BASE_COLUMNS,
    Columns,
    ItemView,
    ReportSpec,
    SeenIds,
    TopCounts,
    build_report,
    normalize_error,
    read_run,
    reply_shape,
)
from medhal.traces import TraceFileError

# ---------------------------------------------------------------------------- unreadable shapes


def test_reply_shape_keeps_120_characters_and_cuts_121():
    assert reply_shape("a" * 120) == "a" * 120
    assert reply_shape("a" * 121) == "a" * 117 + "..."  # 117 + 3 = 120 characters


def test_an_empty_or_missing_reply_has_a_named_shape():
    assert reply_shape(None) == "(empty reply)"
    assert reply_shape("") == "(empty reply)"
    assert reply_shape(" \n\t ") == "(empty reply)"
    assert reply_shape(" a \n b ") == "a b"


def test_errors_are_grouped_with_their_numbers_masked():
    assert normalize_error("timeout after 30 s on item 1234") == "timeout after # s on item #"
    assert len(normalize_error("x" * 400)) == 300


# ---------------------------------------------------------------------------- bounded counters


def test_top_counts_evicts_the_rarest_and_the_newcomer_inherits_its_count():
    # Capacity 2. a, a, b: counts a 2, b 1. c arrives full: b (the rarest, 1) is dropped and
    # c gets 1 + 1 = 2 (an upper bound: c may have been among b's). Then c again: 3.
    top = TopCounts(capacity=2)
    for key, example in (("a", 10), ("a", 11), ("b", 12), ("c", 13), ("c", 14)):
        top.add(key, example)
    assert top.total == 5
    assert top.counts == {"a": 2, "c": 3}
    # Ranked by count, then key; each key keeps the example it was first seen with.
    assert top.top(5) == [("c", 3, 13), ("a", 2, 10)]
    assert top.top(1) == [("c", 3, 13)]


def test_seen_ids_counts_duplicates_and_lists_gaps():
    seen = SeenIds()
    for idx in (0, 2, 2, 5):
        seen.add(idx)
    # distinct 0, 2, 5; one duplicate (2); of 0..6 missing 1, 3, 4, 6
    assert (seen.n_distinct, seen.n_duplicates, seen.max_id) == (3, 1, 5)
    assert seen.missing(range(7)) == [1, 3, 4, 6]
    assert seen.missing(range(7), limit=2) == [1, 3]
    for bad in (-1, 50_000_001):
        with pytest.raises(ValueError, match="out of range"):
            seen.add(bad)
    seen.add(50_000_000)  # the largest id allowed
    assert seen.n_distinct == 4


# ---------------------------------------------------------------------------- trace outcomes

COLUMNS = Columns(*BASE_COLUMNS)


def _columns(item: ItemView) -> tuple[float, ...]:
    return (1.0, float(item.correct), float(item.parsed), float(item.errored))


SPEC = ReportSpec(
    benchmark="toy",
    title="Toy",
    columns=COLUMNS,
    item_columns=_columns,
    statistics={},
    gold_field="gold",
    classes=("yes", "no"),
)


def _trace(idx: int, correct: object, parsed: object = 1.0, reading: str | None = "yes") -> dict:
    metrics = {}
    for convention in ("medhal", "authors", "strict"):
        metrics[f"correct_{convention}"] = correct
        metrics[f"parsed_{convention}"] = parsed
    return {
        "task": {
            "type": "ToyTask",
            "data": {"idx": idx, "benchmark": "toy", "gold": "yes", "parser": "medhal"},
        },
        "nodes": [{"message": {"role": "assistant", "content": "r"}, "sampled": True}],
        "metrics": metrics,
        "rewards": {},
        "info": {"readings": {"medhal": reading, "authors": reading, "strict": reading}},
        "errors": [],
        "agent": {"model": "m", "sampling": {}},
    }


def _report(tmp_path: Path, rows: list[dict]) -> dict:
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return build_report(read_run(path, SPEC))


def test_outcomes_are_read_from_the_metrics(tmp_path):
    # Items 0, 1 right (1.0 and the integer 1); item 2 wrong (0.0): accuracy 2/3. Item 2's
    # reply was not read (parsed 0): parse rate 2/3 and its prediction is INVALID.
    rows = [_trace(0, 1.0), _trace(1, 1), _trace(2, 0.0, parsed=0.0, reading=None)]
    report = _report(tmp_path, rows)
    assert report["micro_accuracy"] == pytest.approx(2 / 3)
    assert report["parse_rate"] == pytest.approx(2 / 3)
    assert report["confusion"]["yes"] == {"yes": 2, "no": 0, "INVALID": 1, "ERROR": 0}


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (True, r"is not a number \(got bool\)"),  # refused by the trace reader already
        ("1", r"is not a number \(got str\)"),
        (float("nan"), "is nan, not a number"),  # JSON NaN: a float, refused by the report
        (float("inf"), "is inf, not a number"),
        (None, r"is missing \(was it scored\?"),
    ],
)
def test_an_outcome_that_is_not_a_number_is_refused(tmp_path, value, problem):
    rows = [_trace(0, 1.0), _trace(1, value)]
    with pytest.raises(TraceFileError, match=rf"traces.jsonl:2: field 'metrics.correct_medhal' {problem}"):
        _report(tmp_path, rows)
