"""The shared report on a toy benchmark defined here (as verifiers tests its framework on
echo environments): figures under every convention by hand count, completeness checks,
unreadable replies, errors, and the files written all or nothing."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

import pytest

from medhal.kit.report_spec import Columns, ItemView, ReportSpec
from medhal.reports.markdown import to_markdown
from medhal.reports.report import (
    Run,
    SeenIds,
    TopCounts,
    build_report,
    normalize_error,
    read_run,
    reply_shape,
)
from medhal.reports.traces import TraceFileError, iter_traces


class Counts(NamedTuple):
    said_yes: float


def toy_counts(item: ItemView) -> Counts:
    return Counts(said_yes=float(item.pred == "yes"))


COLUMNS = Columns(Counts)


TOY = ReportSpec(
    benchmark="toy",
    title="Toy",
    columns=COLUMNS,
    item_counts=toy_counts,
    statistics={"yes_rate": COLUMNS.ratio("said_yes", "n")},
    headline=("accuracy", "yes_rate"),
    group_fields=("part",),
    macro_field="part",
    macro_groups=("a", "b"),
    cluster_field="src",
    gold_field="gold",
    classes=("yes", "no"),
    full_size=5,
)

SELECTION = {"n_expected": 5, "contiguous": True, "num_tasks": None, "shuffle": False, "idx_sha256": "x"}
PROVENANCE = {"dataset": "toy", "options": {"parser": "medhal"}}


def trace(
    idx: int,
    part: str,
    gold: str,
    readings: dict,
    correct: dict,
    *,
    src: str | None = None,
    reply: str = "r",
    error: str | None = None,
    selection: dict = SELECTION,
    provenance: dict = PROVENANCE,
) -> dict:
    """A verifiers trace line as eval writes it, reduced to what reports read."""
    metrics = {}
    for convention in ("medhal", "authors", "strict"):
        metrics[f"correct_{convention}"] = float(correct[convention])
        metrics[f"parsed_{convention}"] = float(readings[convention] is not None)
    return {
        "task": {
            "type": "ToyTask",
            "data": {
                "idx": idx,
                "benchmark": "toy",
                "part": part,
                "gold": gold,
                "src": src or f"s{idx}",
                "parser": "medhal",
                "selection": selection,
                "provenance": provenance,
                "prompt": "q",
            },
        },
        "nodes": [] if error else [{"message": {"role": "assistant", "content": reply}, "sampled": True}],
        "metrics": {} if error else metrics,
        "rewards": {},
        "info": {} if error else {"readings": readings},
        "errors": [{"type": "ProviderError", "message": error}] if error else [],
        "agent": {"model": "toy-model", "sampling": {"temperature": 0.0}},
    }


def both(label):
    return {"medhal": label, "authors": label, "strict": label}


# Five items. medhal: a = right, right, wrong; b = right, wrong.
# authors reads item 2 as "yes" (right) and item 3 as "yes" (wrong).
ROWS = [
    trace(0, "a", "yes", both("yes"), {"medhal": 1, "authors": 1, "strict": 1}, src="q1"),
    trace(1, "a", "no", both("no"), {"medhal": 1, "authors": 1, "strict": 1}, src="q1"),
    trace(
        2,
        "a",
        "yes",
        {"medhal": "no", "authors": "yes", "strict": None},
        {"medhal": 0, "authors": 1, "strict": 0},
    ),
    trace(
        3,
        "b",
        "no",
        {"medhal": "no", "authors": "yes", "strict": "no"},
        {"medhal": 1, "authors": 0, "strict": 1},
    ),
    trace(
        4,
        "b",
        "yes",
        {"medhal": None, "authors": "no", "strict": None},
        {"medhal": 0, "authors": 0, "strict": 0},
        reply="I cannot tell",
    ),
]


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def report_of(tmp_path: Path, rows: list[dict]) -> dict:
    return build_report(read_run(write(tmp_path / "traces.jsonl", rows), TOY))


def test_figures_by_hand_under_every_convention(tmp_path):
    report = report_of(tmp_path, ROWS)
    medhal, authors, strict = (report["conventions"][c] for c in ("medhal", "authors", "strict"))
    # medhal: right 0, 1, 3 -> 3/5; part a 2/3, part b 1/2 -> macro (2/3 + 1/2) / 2 = 7/12
    assert medhal["accuracy"] == pytest.approx(0.6)
    assert medhal["macro_accuracy"] == pytest.approx(7 / 12)
    # authors: right 0, 1, 2 -> 3/5 too, but part a 3/3 and part b 0/2 -> macro 1/2
    assert authors["accuracy"] == pytest.approx(0.6)
    assert authors["macro_accuracy"] == pytest.approx(0.5)
    # strict: right 0, 1, 3 -> 3/5; read 0, 1, 3 -> parse rate 3/5
    assert strict["parse_rate"] == pytest.approx(0.6)
    # yes_rate: medhal said yes once (item 0) -> 1/5; authors 0, 2, 3 -> 3/5
    assert medhal["yes_rate"] == pytest.approx(0.2)
    assert authors["yes_rate"] == pytest.approx(0.6)
    assert report["micro_accuracy"] == pytest.approx(0.6) and report["macro_accuracy"] == pytest.approx(
        7 / 12
    )
    assert report["groups"]["part"]["a"]["n"] == 3 and report["groups"]["part"]["a"][
        "accuracy"
    ] == pytest.approx(2 / 3)
    assert report["groups"]["part"]["b"]["conventions"]["authors"]["accuracy"] == 0.0


def test_confusion_and_classes_use_the_runs_convention(tmp_path):
    report = report_of(tmp_path, ROWS)
    # gold yes: items 0 (yes), 2 (no), 4 (INVALID); gold no: items 1 (no), 3 (no)
    assert report["confusion"] == {
        "yes": {"yes": 1, "no": 1, "INVALID": 1, "ERROR": 0},
        "no": {"yes": 0, "no": 2, "INVALID": 0, "ERROR": 0},
    }
    # yes: tp 1, predicted 1, support 3 -> P 1, R 1/3, F1 2*1*(1/3)/(4/3) = 0.5
    assert report["classes"]["yes"] == pytest.approx(
        {"precision": 1.0, "recall": 1 / 3, "f1": 0.5, "support": 3}
    )
    # no: tp 2, predicted 3, support 2 -> P 2/3, R 1, F1 0.8
    assert report["classes"]["no"] == pytest.approx(
        {"precision": 2 / 3, "recall": 1.0, "f1": 0.8, "support": 2}
    )


def test_intervals_resample_clusters(tmp_path):
    """Items 0 and 1 share a source: the clustered interval of accuracy cannot put them
    apart, so it differs from an unclustered one."""
    clustered = report_of(tmp_path, ROWS)["micro_accuracy_ci"]
    loose = [
        dict(r, task={**r["task"], "data": {**r["task"]["data"], "src": f"own{i}"}})
        for i, r in enumerate(ROWS)
    ]
    unclustered = report_of(tmp_path, loose)["micro_accuracy_ci"]
    assert clustered != unclustered
    assert 0.0 <= clustered[0] <= 0.6 <= clustered[1] <= 1.0


def test_a_complete_run_is_paper_comparable(tmp_path):
    report = report_of(tmp_path, ROWS)
    assert report["complete"] and report["paper_comparable"]
    assert (report["n_expected"], report["n_missing"], report["n_duplicates"]) == (5, 0, 0)


def test_gaps_duplicates_and_mixed_provenance(tmp_path):
    gap = report_of(tmp_path, [r for r in ROWS if r["task"]["data"]["idx"] != 3])
    assert (gap["n_missing"], gap["missing_idx"], gap["complete"], gap["paper_comparable"]) == (
        1,
        [3],
        False,
        False,
    )
    doubled = report_of(tmp_path, ROWS + ROWS)
    assert (doubled["n"], doubled["n_distinct"], doubled["n_duplicates"], doubled["complete"]) == (
        10,
        5,
        5,
        False,
    )
    edited = dict(
        ROWS[4],
        task={**ROWS[4]["task"], "data": {**ROWS[4]["task"]["data"], "provenance": {"dataset": "edited"}}},
    )
    mixed = report_of(tmp_path, [*ROWS[:4], edited])
    assert mixed["mixed_provenance"] and not mixed["complete"]
    old = [
        dict(r, task={**r["task"], "data": {k: v for k, v in r["task"]["data"].items() if k != "selection"}})
        for r in ROWS
    ]
    unknown = report_of(tmp_path, old)
    assert unknown["n_expected"] is None and not unknown["complete"]


def test_errors_stay_in_every_denominator_grouped_by_message(tmp_path):
    rows = [*ROWS[:4], trace(4, "b", "yes", both(None), both(0), error="connection reset after 512 bytes")]
    report = report_of(tmp_path, rows)
    assert report["n"] == 5 and report["n_errors"] == 1 and report["error_rate"] == pytest.approx(0.2)
    assert report["confusion"]["yes"]["ERROR"] == 1
    assert report["errors"] == {"ProviderError: connection reset after # bytes": 1}
    assert not report["paper_comparable"]  # complete, but a rollout failed


def test_unreadable_replies_are_listed_by_shape(tmp_path):
    rows = [
        trace(i, "a", "yes", both(None), both(0), reply=reply)
        for i, reply in enumerate(["I  cannot\n tell", "I cannot tell", "x" * 300, "I cannot tell"])
    ]
    report = report_of(tmp_path, rows)
    assert report["n_unreadable"] == 4
    assert report["unreadable"][0] == {"shape": "I cannot tell", "count": 3, "idx": 0, "exact": True}
    assert (
        report["unreadable"][1]["shape"] == "x" * 117 + "..." and len(report["unreadable"][1]["shape"]) == 120
    )


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda r: r["task"]["data"].update(benchmark="other"), "task.data.benchmark"),
        (lambda r: r["task"]["data"].update(idx="7"), "task.data.idx"),
        (lambda r: r["task"]["data"].update(gold="maybe"), "task.data.gold"),
        (lambda r: r["task"]["data"].pop("part"), "task.data.part"),
        (lambda r: r["metrics"].pop("correct_authors"), "metrics.correct_authors"),
        (lambda r: r["metrics"].update(correct_medhal="yes"), "metrics.correct_medhal"),
        (lambda r: r["info"]["readings"].update(medhal="perhaps"), "info.readings.medhal"),
        (lambda r: r["task"]["data"].update(parser="mine"), "task.data.parser"),
    ],
)
def test_a_bad_trace_names_file_line_and_field(tmp_path, edit, field):
    rows = json.loads(json.dumps(ROWS))
    edit(rows[2])
    with pytest.raises(TraceFileError) as error:
        report_of(tmp_path, rows)
    message = str(error.value)
    assert f"traces.jsonl:3: field '{field}'" in message and "\n" not in message


def test_published_figures_of_a_complete_group_are_shown_without_the_whole_benchmark(tmp_path):
    """A run of one whole test set is comparable with that set's published figures even
    when the benchmark has more sets (e.g. `medhal reproduce` runs the sets one by one)."""
    from dataclasses import replace

    from medhal.kit.published import Published

    spec = replace(
        TOY,
        group_sizes={"a": 3, "b": 2},
        published=(
            Published("Paper", (), "accuracy", "a", 0.5, "Toy, Table 1"),
            Published("Paper", (), "accuracy", "b", 0.5, "Toy, Table 1"),
            Published("Paper", (), "macro_accuracy", "", 0.5, "Toy, Table 1"),
        ),
    )
    only_a = [
        {
            **r,
            "task": {**r["task"], "data": {**r["task"]["data"], "selection": {**SELECTION, "n_expected": 3}}},
        }
        for r in ROWS[:3]
    ]
    report = build_report(read_run(write(tmp_path / "traces.jsonl", only_a), spec))
    assert report["complete"] and not report["paper_comparable"]
    assert report["complete_groups"] == ["a"]
    # group a under the authors' reading: items 0, 1, 2 right -> 3/3
    assert [(r["group"], r["run"]) for r in report["published"]] == [("a", 1.0)]


# ================================================================== the parts, one by one
# Each case pins one rule of the report on a toy spec with only the base columns (expected
# values worked out by hand in the comments): unreadable shapes, bounded counters, trace
# outcomes, a whole report, shards, reading traces, provenance.


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
    # c gets 1 + 1 = 2 (an upper bound: c may have been among b's). Then c again: 3, of which
    # c's own sightings, 2, are what `top` shows, as a lower bound.
    top = TopCounts(capacity=2)
    for key, example in (("a", 10), ("a", 11), ("b", 12), ("c", 13), ("c", 14)):
        top.add(key, example)
    assert top.total == 5
    assert top.counts == {"a": 2, "c": 3}
    # Ranked by the count shown (own sightings), exact ones first on a tie, then key; each
    # key keeps the example it was first seen with.
    assert top.top(5) == [("a", 2, 10, True), ("c", 2, 13, False)]
    assert top.top(1) == [("a", 2, 10, True)]


def test_seen_ids_counts_duplicates_and_lists_gaps():
    seen = SeenIds()
    for idx in (0, 2, 2, 5):
        seen.add(idx)
    # distinct 0, 2, 5; one duplicate (2); of 0..6 missing 1, 3, 4, 6
    assert (seen.n_distinct, seen.n_duplicates) == (3, 1)
    assert seen.missing(range(7)) == [1, 3, 4, 6]
    assert seen.missing(range(7), limit=2) == [1, 3]
    for bad in (-1, 50_000_001):
        with pytest.raises(ValueError, match="out of range"):
            seen.add(bad)
    seen.add(50_000_000)  # the largest id allowed
    assert seen.n_distinct == 4


# ---------------------------------------------------------------------------- trace outcomes

BASE_ONLY = Columns()


SPEC = ReportSpec(
    benchmark="toy",
    title="Toy",
    columns=BASE_ONLY,
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
        (float("nan"), "is nan, not a finite number"),  # JSON NaN: a float, refused by the trace reader
        (float("inf"), "is inf, not a finite number"),
        (None, r"is missing \(was it scored\?"),
    ],
)
def test_an_outcome_that_is_not_a_number_is_refused(tmp_path, value, problem):
    rows = [_trace(0, 1.0), _trace(1, value)]
    with pytest.raises(TraceFileError, match=rf"traces.jsonl:2: field 'metrics.correct_medhal' {problem}"):
        _report(tmp_path, rows)


def test_top_counts_breaks_ties_by_key_and_seen_ids_lists_twenty_gaps_by_default():
    top = TopCounts()
    top.add("b", 1)
    top.add("a", 2)
    assert top.top(2) == [
        ("a", 1, 2, True),
        ("b", 1, 1, True),
    ]  # equal counts: alphabetical, not arrival order
    assert SeenIds().missing(range(30)) == list(range(20))


# ---------------------------------------------------------------------------- a whole report
#
# PARTS: six items in two parts of three, each part one source cluster (a: X, b: Y); a second
# grouping field, `kind`, whose values are named like the parts on purpose (its groups must be
# ordered alphabetically, the macro field's in the spec's order, b before a).
#   medhal : a right, right, wrong; b right, wrong, wrong -> accuracy 3/6
#   authors: a all right; b all wrong                      -> accuracy 3/6, part a 3/3
# Under the authors reading a bootstrap resample draws two clusters out of {X, Y}: accuracy 1
# (X, X), 1/2 (X, Y or Y, X) or 0 (Y, Y), with probabilities 1/4, 1/2, 1/4; in 1,000 draws
# both ends appear, so the 95% interval is exactly [0, 1]. Part a alone: every resample is
# all right, so its interval is [1, 1].

PART_SPEC_KW: dict = {}


def _part_spec(**changes):
    from dataclasses import replace

    from medhal.kit.published import Published

    def figure(model: str, value: float, group: str = "", setting: tuple = ()) -> Published:
        return Published(model, setting, "accuracy", group, value, f"source of {model}")

    spec = ReportSpec(
        benchmark="toy",
        title="Toy parts",
        columns=BASE_ONLY,
        group_fields=("part", "kind"),
        macro_field="part",
        macro_groups=("b", "a"),
        cluster_field="src",
        gold_field="gold",
        classes=("yes", "no"),
        full_size=6,
        group_sizes={"a": 3, "b": 3},
        notes=("first note", "second note"),
        published=(
            figure("other setting", 0.5, setting=(("parser", "strict"),)),  # not this run's setting
            figure("part c", 0.5, group="c"),  # a part this run does not have
            figure("zero", 0.0),
            figure("half", 0.5),
            figure("one", 1.0),
            figure("too high", 1.5),
            figure("part a", 1.0, group="a"),
        ),
    )
    return replace(spec, **changes)


SELECTION6 = {"n_expected": 6, "contiguous": True}
PROVENANCE6 = {
    "dataset": "toy",
    "options": {"parser": "medhal"},
    "code": {"medhal": "9.9.9", "verifiers": "0.2.1"},
}
MEDHAL6 = [1, 1, 0, 1, 0, 0]
AUTHORS6 = [1, 1, 1, 0, 0, 0]


def _part_trace(idx: int, *, selection=SELECTION6, provenance=PROVENANCE6, error: str | None = None) -> dict:
    part = "a" if idx < 3 else "b"
    correct = {"medhal": MEDHAL6[idx % 6], "authors": AUTHORS6[idx % 6], "strict": MEDHAL6[idx % 6]}
    metrics = {}
    for convention, right in correct.items():
        metrics[f"correct_{convention}"] = float(right)
        metrics[f"parsed_{convention}"] = 1.0
    data = {
        "idx": idx,
        "benchmark": "toy",
        "part": part,
        "kind": "b" if idx == 0 else "a",
        "gold": "yes",
        "src": "X" if part == "a" else "Y",
        "parser": "medhal",
        "selection": selection,
        "provenance": provenance,
    }
    readings = {c: ("yes" if right else "no") for c, right in correct.items()}
    return {
        "task": {"type": "ToyTask", "data": data},
        "nodes": [] if error else [{"message": {"role": "assistant", "content": "r"}, "sampled": True}],
        "metrics": {} if error else metrics,
        "rewards": {},
        "info": {} if error else {"readings": readings},
        "errors": [{"type": "ProviderError", "message": error}] if error else [],
        "agent": {"model": "toy-model", "sampling": {"temperature": 0.0}},
    }


def _spec_report(tmp_path: Path, rows: list[dict], spec=None, *, merged: bool = False) -> dict:
    from medhal.reports.report import Run
    from medhal.reports.traces import iter_traces

    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = Run(spec or _part_spec(), str(path), merged=merged)
    for record in iter_traces(path):
        run.add(record)
    return build_report(run)


def test_published_figures_of_a_complete_run(tmp_path):
    report = _spec_report(tmp_path, [_part_trace(i) for i in range(6)])
    assert report["paper_comparable"] and report["complete_groups"] == ["a", "b"]  # group_sizes order
    assert report["conventions"]["authors"]["accuracy"] == 0.5
    assert report["conventions"]["authors"]["accuracy_ci"] == [0.0, 1.0]

    def row(model: str, group: str, published: float, run: float, interval: list, inside: bool) -> dict:
        return {
            "kind": "paper",
            "model": model,
            "statistic": "accuracy",
            "group": group,
            "reading": "authors",
            "published": published,
            "run": run,
            "run_ci": interval,
            "inside_ci": inside,
            "equal": None,
            "source": f"source of {model}",
        }

    # The other setting and part c are left out; 0, 0.5 and 1 lie inside [0, 1] (its ends
    # included), 1.5 does not; part a's authors accuracy is 1 with interval [1, 1].
    assert report["published"] == [
        row("zero", "", 0.0, 0.5, [0.0, 1.0], True),
        row("half", "", 0.5, 0.5, [0.0, 1.0], True),
        row("one", "", 1.0, 0.5, [0.0, 1.0], True),
        row("too high", "", 1.5, 0.5, [0.0, 1.0], False),
        row("part a", "a", 1.0, 1.0, [1.0, 1.0], True),
    ]


def test_a_complete_part_is_compared_without_the_whole_benchmark(tmp_path):
    # Only part a's three tasks were selected (n_expected 3): the run is complete but not
    # the whole benchmark, so only part a's own figure is shown.
    rows = [_part_trace(i, selection={"n_expected": 3, "contiguous": True}) for i in range(3)]
    report = _spec_report(tmp_path, rows)
    assert report["complete"] and not report["paper_comparable"]
    assert report["complete_groups"] == ["a"]
    assert [(r["model"], r["run"], r["run_ci"], r["inside_ci"]) for r in report["published"]] == [
        ("part a", 1.0, [1.0, 1.0], True)
    ]


def test_an_incomplete_run_compares_nothing_even_when_a_part_is_whole(tmp_path):
    # Item 5 (part b) is missing: part a is whole, but the run is not.
    report = _spec_report(tmp_path, [_part_trace(i) for i in range(5)])
    assert report["n_missing"] == 1 and not report["complete"]
    assert report["complete_groups"] == [] and report["published"] == []


def test_a_part_with_a_failed_rollout_is_not_comparable(tmp_path):
    # Item 4 (part b) failed: part b has n 3 but one error, so only part a is comparable
    # (and, with a failed rollout, not the whole run).
    rows = [_part_trace(i, error="timeout" if i == 4 else None) for i in range(6)]
    report = _spec_report(tmp_path, rows)
    assert report["groups"]["part"]["b"]["n"] == 3 and report["groups"]["part"]["b"]["n_errors"] == 1
    assert report["groups"]["part"]["a"]["n_errors"] == 0
    assert report["complete_groups"] == ["a"] and not report["paper_comparable"]


def test_demo_prompts_compare_nothing(tmp_path):
    demo = {**PROVENANCE6, "prompts": {"written_by": "medhal"}}
    report = _spec_report(tmp_path, [_part_trace(i, provenance=demo) for i in range(6)])
    assert report["demo_prompts"] and report["published"] == []


def test_groups_are_in_the_specs_order_for_the_macro_field_and_alphabetical_otherwise(tmp_path):
    report = _spec_report(tmp_path, [_part_trace(i) for i in range(6)])
    assert list(report["groups"]["part"]) == ["b", "a"]  # part a's items come first in the file
    assert list(report["groups"]["kind"]) == ["a", "b"]  # kind b is seen first (item 0)
    assert report["macro_groups"] == ["b", "a"]


def test_the_report_names_its_spec_and_keeps_every_documented_key(tmp_path):
    report = _spec_report(tmp_path, [_part_trace(i) for i in range(6)])
    assert (report["benchmark"], report["title"], report["convention"]) == ("toy", "Toy parts", "medhal")
    assert report["source"] == str(tmp_path / "traces.jsonl")
    assert report["notes"] == ["first note", "second note"]
    documented = {
        "benchmark",
        "title",
        "source",
        "convention",
        "n",
        "n_expected",
        "n_distinct",
        "n_duplicates",
        "n_missing",
        "missing_idx",
        "mixed_provenance",
        "complete",
        "n_errors",
        "error_rate",
        "micro_accuracy",
        "micro_accuracy_ci",
        "macro_accuracy",
        "macro_accuracy_ci",
        "macro_over",
        "macro_groups",
        "parse_rate",
        "paper_comparable",
        "overall",
        "conventions",
        "groups",
        "classes",
        "confusion",
        "unreadable",
        "n_unreadable",
        "errors",
        "provenance",
        "demo_prompts",
        "published",
        "notes",
        "shards",
        "complete_groups",
        "n_outside",
        "outside_idx",
        "ids_match_selection",
        "rollouts",
        "errors_at_least",
        "provenance_distinct",
    }
    assert documented <= set(report)


def test_provenance_is_summarised_once_when_shared_and_listed_when_not(tmp_path):
    report = _spec_report(tmp_path, [_part_trace(i) for i in range(6)])
    assert report["provenance"] == {
        "data": PROVENANCE6,
        "selection": SELECTION6,
        "models": {"toy-model": 6},
        "sampling": {"temperature": 0.0},
    }
    other = {"n_expected": 6, "contiguous": True, "shuffle": True}
    mixed = _spec_report(
        tmp_path, [_part_trace(i, selection=other if i == 5 else SELECTION6) for i in range(6)]
    )
    assert mixed["provenance"]["selection"] == [SELECTION6, other]
    assert mixed["mixed_provenance"] and not mixed["complete"]


def test_run_options_and_run_code_are_found_in_every_provenance_shape():
    from medhal.reports.provenance import run_code, run_options

    code = {"medhal": "9.9.9"}
    one = {"provenance": {"data": {"options": {"parser": "strict"}, "code": code}}}
    assert run_options(one) == {"parser": "strict"} and run_code(one) == code
    # One provenance per test set (a dict of records), a set with two (a list): the first found.
    per_set = {
        "provenance": {"data": {"s1": {"options": {"x": 1}, "code": code}, "s2": {"options": {"x": 2}}}}
    }
    assert run_options(per_set) == {"x": 1} and run_code(per_set) == code
    listed = {"provenance": {"data": {"s1": [{"dataset": "d"}, {"code": code}]}}}
    assert run_code(listed) == code
    # Several provenances for the whole run (a list), traces without one (None) among them.
    several = {"provenance": {"data": [None, {"dataset": "d"}, {"options": {"x": 3}, "code": code}]}}
    assert run_options(several) == {"x": 3} and run_code(several) == code
    for nothing in ({}, {"provenance": {"data": None}}, {"provenance": {"data": {"dataset": "d"}}}):
        assert run_options(nothing) == {} and run_code(nothing) == {}


def test_macro_interval_is_the_interval_of_the_macro_figure(tmp_path):
    # 20 items in part a, all right, 20 in part b, all wrong (medhal). Every resample holds
    # both parts (a resample of 40 items missing a part has probability 2 * 2^-40), so the
    # macro accuracy is (1 + 0) / 2 = 0.5 in every draw: interval [0.5, 0.5]. The micro
    # accuracy (right items / items drawn) varies.
    rows = []
    for idx in range(40):
        row = _part_trace(0 if idx < 20 else 4, selection={"n_expected": 40, "contiguous": True})
        row["task"]["data"].update(idx=idx, src=f"s{idx}", part="a" if idx < 20 else "b")
        rows.append(row)
    report = _spec_report(tmp_path, rows, _part_spec(group_sizes={}, published=()))
    assert report["macro_accuracy"] == 0.5 and report["macro_accuracy_ci"] == [0.5, 0.5]
    assert (
        report["micro_accuracy"] == 0.5
        and report["micro_accuracy_ci"][0] < 0.5 < report["micro_accuracy_ci"][1]
    )


def test_without_macro_groups_the_macro_figure_is_the_micro_one(tmp_path):
    # SPEC has no macro field; items 0, 1 right, 2 wrong: both figures 2/3, one interval.
    report = _report(tmp_path, [_trace(0, 1.0), _trace(1, 1.0), _trace(2, 0.0)])
    assert report["macro_accuracy"] == report["micro_accuracy"] == pytest.approx(2 / 3)
    assert report["macro_accuracy_ci"] == report["micro_accuracy_ci"]


def test_an_empty_run_has_no_figures():
    """A rate over no items does not apply: null, not 0 (nor an interval around nothing)."""
    from medhal.reports.report import Run

    report = build_report(Run(SPEC, "nothing"))
    assert (report["n"], report["convention"], report["micro_accuracy"], report["micro_accuracy_ci"]) == (
        0,
        "medhal",
        None,
        None,
    )
    assert report["conventions"]["medhal"] == {"accuracy": None, "parse_rate": None, "error_rate": None}
    assert "| micro accuracy (95% CI) | — |" in to_markdown(report, ("accuracy",))


def test_only_the_most_frequent_shapes_and_errors_are_listed(tmp_path):
    # 11 distinct unreadable replies (10 listed), then 51 distinct error messages (50 listed).
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    rows = [_trace(i, 0.0, parsed=0.0, reading=None) for i in range(11)]
    for i, row in enumerate(rows):
        row["nodes"][0]["message"]["content"] = f"reply {letters[i]}"
    for i in range(51):
        error = _trace(11 + i, 0.0)
        error.update(
            nodes=[], metrics={}, info={}, errors=[{"type": "E", "message": f"failure {letters[i]}"}]
        )
        rows.append(error)
    report = _report(tmp_path, rows)
    assert report["n_unreadable"] == 11 and len(report["unreadable"]) == 10
    assert report["n_errors"] == 51 and len(report["errors"]) == 50


def test_group_sums_add_up_across_batches(tmp_path):
    # 1,030 traces: more than one batch of 1,024 is summed into the same groups.
    rows = [_part_trace(i % 6, selection={"n_expected": 1030, "contiguous": True}) for i in range(1030)]
    for idx, row in enumerate(rows):
        row["task"]["data"]["idx"] = idx
    report = _spec_report(tmp_path, rows, _part_spec(group_sizes={}, published=()))
    # i % 6 < 3 -> part a: 1030 = 6 * 171 + 4, so part a has 3 * 171 + 3 = 516, part b 514.
    assert report["groups"]["part"]["a"]["n"] == 516 and report["groups"]["part"]["b"]["n"] == 514


# ---------------------------------------------------------------------------- shards


def _sharded(tmp_path, idxs, selections, merged=False):
    rows = []
    for idx, selection in zip(idxs, selections, strict=True):
        row = _part_trace(idx % 6, selection=selection)
        row["task"]["data"]["idx"] = idx
        rows.append(row)
    return _spec_report(
        tmp_path, rows, _part_spec(full_size=None, group_sizes={}, published=()), merged=merged
    )


SHARD = {"n_expected": 10, "contiguous": True, "shard": "1/3", "n_shard": 3}
"""Shard 1 of 3 of ten tasks: ids 1, 4, 7."""


def test_a_shard_is_whole_when_its_own_ids_are_there(tmp_path):
    partial = _sharded(tmp_path, [1, 4], [SHARD, SHARD])
    assert (partial["n_expected"], partial["n_missing"], partial["missing_idx"]) == (3, 1, [7])
    assert partial["shards"] == ["1/3"] and not partial["complete"]
    whole = _sharded(tmp_path, [1, 4, 7], [SHARD] * 3)
    assert (whole["n_expected"], whole["n_missing"], whole["complete"]) == (3, 0, True)


def test_merged_shards_are_expected_to_cover_every_task(tmp_path):
    # Read as one merged run, shard 1/3 alone is 3 of the 10 tasks.
    merged = _sharded(tmp_path, [1, 4, 7], [SHARD] * 3, merged=True)
    assert (merged["n_expected"], merged["n_missing"], merged["complete"]) == (10, 7, False)
    assert merged["missing_idx"] == [0, 2, 3, 5, 6, 8, 9]
    # Two shards in one run: the whole selection is expected.
    other = {**SHARD, "shard": "0/3", "n_shard": 4}
    both = _sharded(tmp_path, [0, 1], [other, SHARD])
    assert both["shards"] == ["0/3", "1/3"] and both["n_expected"] == 10 and not both["mixed_provenance"]


def test_a_run_mixing_sharded_and_unsharded_traces_is_reported(tmp_path):
    plain = {"n_expected": 10, "contiguous": True}
    report = _sharded(tmp_path, [0, 1], [plain, SHARD])
    assert report["shards"] == ["1/3"] and report["n_expected"] == 10


def test_missing_ids_are_listed_only_for_a_contiguous_selection(tmp_path):
    # Ids 0 and 2 of 3: one missing. Listed (id 1) only when the selection is contiguous;
    # a shuffled or subsampled selection (no `contiguous`, or false) does not say which.
    for selection, listed in (
        ({"n_expected": 3, "contiguous": True}, [1]),
        ({"n_expected": 3, "contiguous": False}, []),
        ({"n_expected": 3}, []),
    ):
        report = _sharded(tmp_path, [0, 2], [selection, selection])
        assert report["n_missing"] == 1 and report["missing_idx"] == listed


def test_two_different_selections_are_mixed(tmp_path):
    report = _sharded(
        tmp_path, [0, 1], [{"n_expected": 2, "contiguous": True}, {"n_expected": 3, "contiguous": True}]
    )
    assert report["mixed_provenance"] and not report["complete"] and report["n_expected"] is None


# ---------------------------------------------------------------------------- reading traces


def _write(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _failed(row: dict, message: str = "failure") -> dict:
    row.update(nodes=[], metrics={}, info={}, errors=[{"type": "E", "message": message}])
    return row


def test_runs_read_with_their_items_are_compared_item_by_item(tmp_path):
    from medhal.reports.compare import compare_runs

    # Five tasks: the first run is right on 0-3 and wrong on 4, the second wrong on all.
    # McNemar: 4 tasks right only in the first, 0 only in the second:
    # p = 2 * P(X <= 0), X ~ Binomial(4, 1/2) = 2 * (1/2)^4 = 0.125.
    # Difference of accuracy 0/5 - 4/5 = -0.8. Per task the paired difference is -1 (tasks
    # 0-3) or 0 (task 4); a resample of five tasks is all -1 with probability 0.8^5 = 0.33,
    # far above 2.5%, so the interval starts at -1.
    runs = []
    for name, right in (("a", [1.0, 1.0, 1.0, 1.0, 0.0]), ("b", [0.0] * 5)):
        path = _write(tmp_path / name / "traces.jsonl", [_trace(i, r) for i, r in enumerate(right)])
        runs.append(read_run(path, SPEC, keep_items=True))
    second = compare_runs(runs, [build_report(run) for run in runs])["runs"][1]
    assert second["paired"] is True
    assert second["mcnemar"] == {
        "right_only_in_first": 4,
        "right_only_in_this": 0,
        "p_value": 0.125,
        "test": "mcnemar",
    }
    assert second["difference"]["accuracy"] == pytest.approx(-0.8)
    assert second["difference_ci"]["accuracy"][0] == -1.0


def test_runs_that_put_a_task_in_different_sources_are_compared_unpaired(tmp_path):
    from medhal.reports.compare import compare_runs

    # Task 0 comes from source X in the first run and from source Z in the second: the runs
    # cannot be paired task by task, and the comparison says why.
    other = _part_trace(0)
    other["task"]["data"]["src"] = "Z"
    runs = [
        read_run(_write(tmp_path / name / "traces.jsonl", [row]), _part_spec(), keep_items=True)
        for name, row in (("a", _part_trace(0)), ("b", other))
    ]
    second = compare_runs(runs, [build_report(run) for run in runs])["runs"][1]
    assert second["paired"] is False and second["mcnemar"] is None
    assert second["why_unpaired"] == (
        "item 0 is in cluster 'X' in the first run but in cluster 'Z' in the second (1 items differ)"
    )


def test_a_task_id_out_of_range_is_refused_naming_the_line(tmp_path):
    with pytest.raises(
        TraceFileError,
        match=r"traces.jsonl:2: field 'task.data.idx': task idx 50000001 is out of range \(0..50,000,000\)",
    ):
        _report(tmp_path, [_trace(0, 1.0), _trace(50_000_001, 1.0)])


def test_a_trace_without_a_parser_field_is_read_under_the_medhal_convention(tmp_path):
    # Items 0 and 1 right, 2 wrong: accuracy 2/3 under the run's (default) convention.
    rows = [_trace(0, 1.0), _trace(1, 1.0), _trace(2, 0.0)]
    for row in rows:
        del row["task"]["data"]["parser"]
    report = _report(tmp_path, rows)
    assert report["convention"] == "medhal"
    assert report["micro_accuracy"] == pytest.approx(2 / 3)


def _part_rows_with(change) -> list[dict]:
    """Tasks 0 and 1 of PARTS, task 1 (line 2) changed by `change(data)`."""
    rows = [_part_trace(0), _part_trace(1)]
    change(rows[1]["task"]["data"])
    return rows


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda d: d.pop("src"), "field 'task.data.src' is missing"),  # the cluster field
        (lambda d: d.pop("gold"), "field 'task.data.gold' is missing"),
        (lambda d: d.pop("kind"), "field 'task.data.kind' is missing"),  # a grouping field
        (lambda d: d.update(src={"x": 1}), "field 'task.data.src' is a dict, not a value"),
        (lambda d: d.update(kind=[1]), "field 'task.data.kind' is a list, not a value"),
        (lambda d: d.update(part="c"), r"field 'task.data.part' is 'c', not one of \['b', 'a'\]"),
    ],
)
def test_a_missing_or_unusable_task_field_is_refused_naming_the_line(tmp_path, change, problem):
    with pytest.raises(TraceFileError, match=rf"traces.jsonl:2: {problem}"):
        _spec_report(tmp_path, _part_rows_with(change))


def test_a_numeric_task_field_is_read_as_text(tmp_path):
    # Task 0's kind is the number 7: its group is named "7" (sorted before "a").
    rows = [_part_trace(i) for i in range(6)]
    rows[0]["task"]["data"]["kind"] = 7
    report = _spec_report(tmp_path, rows)
    assert list(report["groups"]["kind"]) == ["7", "a"]
    assert (report["groups"]["kind"]["7"]["n"], report["groups"]["kind"]["a"]["n"]) == (1, 5)


def test_the_macro_field_need_not_be_a_grouping_field(tmp_path):
    # Tasks 0-4 (medhal): part a (0, 1, 2) right, right, wrong -> 2/3; part b (3, 4) right,
    # wrong -> 1/2. Macro accuracy (2/3 + 1/2) / 2 = 7/12; micro 3/5.
    spec = _part_spec(group_fields=("kind",))
    report = _spec_report(tmp_path, [_part_trace(i) for i in range(5)], spec)
    assert report["macro_accuracy"] == pytest.approx(7 / 12)
    assert report["micro_accuracy"] == pytest.approx(3 / 5)
    assert report["macro_groups"] == ["b", "a"] and list(report["groups"]) == ["kind"]
    with pytest.raises(TraceFileError, match=r"traces\.jsonl:2: field 'task\.data\.part' is missing"):
        _spec_report(tmp_path, _part_rows_with(lambda d: d.pop("part")), spec)


class Score(NamedTuple):
    score: float


SCORED = Columns(Score)


def _scored_spec() -> ReportSpec:
    from dataclasses import replace

    def counts(item: ItemView) -> Score:
        return Score(score=item.metrics.get("score"))  # type: ignore[arg-type]

    return replace(SPEC, columns=SCORED, item_counts=counts, statistics={"score": SCORED.ratio("score", "n")})


@pytest.mark.parametrize(
    ("score", "problem"),
    [
        # A NaN metric: refused by the trace reader, naming the field.
        (float("nan"), "field 'metrics.score' is nan, not a finite number"),
        # Absent: item_counts gives None, refused by the report, naming the column.
        (None, "column 'score' under the medhal reading is None, not a finite number"),
    ],
)
def test_a_column_that_is_not_a_finite_number_is_refused_naming_the_line(tmp_path, score, problem):
    good, bad = _trace(0, 1.0), _trace(1, 1.0)
    good["metrics"]["score"] = 0.5
    if score is not None:
        bad["metrics"]["score"] = score
    path = _write(tmp_path / "traces.jsonl", [good, bad])
    with pytest.raises(TraceFileError, match=rf"traces.jsonl:2: {problem}"):
        read_run(path, _scored_spec())
    # Finite scores 0.5 and 0.25: mean (0.5 + 0.25) / 2 = 0.375.
    bad["metrics"]["score"] = 0.25
    report = build_report(read_run(_write(tmp_path / "traces.jsonl", [good, bad]), _scored_spec()))
    assert report["overall"]["score"] == 0.375


def test_a_failed_rollout_is_seen_with_its_gold_label_under_every_convention(tmp_path):
    from dataclasses import replace

    seen = []

    class GoldYes(NamedTuple):
        gold_yes: float

    columns = Columns(GoldYes)

    def item_counts(item: ItemView) -> GoldYes:
        seen.append((item.convention, item.gold, item.pred, item.errored))
        return GoldYes(gold_yes=float(item.gold == "yes"))

    spec = replace(
        SPEC,
        columns=columns,
        item_counts=item_counts,
        statistics={"gold_yes": columns.ratio("gold_yes", "n")},
    )
    path = _write(tmp_path / "traces.jsonl", [_failed(_trace(0, 1.0))])
    report = build_report(read_run(path, spec))
    assert seen == [
        ("medhal", "yes", "ERROR", True),
        ("authors", "yes", "ERROR", True),
        ("strict", "yes", "ERROR", True),
    ]
    # The one (failed) item has gold yes: 1/1 under every convention, and it counts as an error.
    assert [report["conventions"][c]["gold_yes"] for c in ("medhal", "authors", "strict")] == [1.0, 1.0, 1.0]
    assert report["n_errors"] == 1 and report["confusion"]["yes"]["ERROR"] == 1


def test_a_label_counts_only_when_the_reply_was_read(tmp_path):
    # Item 0: read as "no". Item 1: no readings recorded at all. Item 2: a reading "no" but
    # parsed 0 (the convention could not read the reply). Only item 0 predicts "no"; the
    # other two are INVALID.
    unrecorded = _trace(1, 0.0)
    unrecorded["info"] = {}
    rows = [_trace(0, 0.0, reading="no"), unrecorded, _trace(2, 0.0, parsed=0.0, reading="no")]
    report = _report(tmp_path, rows)
    assert report["confusion"]["yes"] == {"yes": 0, "no": 1, "INVALID": 2, "ERROR": 0}
    assert report["parse_rate"] == pytest.approx(2 / 3)


def test_a_reading_that_is_not_text_is_refused_naming_the_line(tmp_path):
    row = _trace(1, 1.0)
    row["info"]["readings"]["medhal"] = 3
    with pytest.raises(
        TraceFileError, match=r"traces\.jsonl:2: field 'info\.readings\.medhal' is 3, not text or null"
    ):
        _report(tmp_path, [_trace(0, 1.0), row])


def test_a_missing_parsed_outcome_says_how_to_rescore(tmp_path):
    row = _trace(1, 1.0)
    del row["metrics"]["parsed_medhal"]
    with pytest.raises(TraceFileError) as raised:
        _report(tmp_path, [_trace(0, 1.0), row])
    assert str(raised.value) == (
        f"{tmp_path / 'traces.jsonl'}:2: field 'metrics.parsed_medhal' is missing (was it scored? a trace "
        "written by an older environment version can be re-scored with `medhal score`)"
    )


# ---------------------------------------------------------------------------- provenance

PROVENANCE_B = {**PROVENANCE6, "dataset": "toy-b"}


def test_provenance_is_kept_per_value_of_a_provenance_field_that_is_not_a_group(tmp_path):
    # Source X (part a) and source Y (part b) were loaded from different files: each source
    # has one provenance, so the run is not mixed.
    rows = [_part_trace(i, provenance=PROVENANCE6 if i < 3 else PROVENANCE_B) for i in range(6)]
    report = _spec_report(tmp_path, rows, _part_spec(provenance_field="src"))
    assert report["provenance"]["data"] == {"X": PROVENANCE6, "Y": PROVENANCE_B}
    assert not report["mixed_provenance"] and report["complete"]


def test_two_provenances_within_one_group_are_mixed(tmp_path):
    # Provenance kept per part (a grouping field, as Med-HALT keeps it per test set).
    spec = _part_spec(provenance_field="part")
    rows = [_part_trace(i, provenance=PROVENANCE6 if i < 3 else PROVENANCE_B) for i in range(6)]
    whole = _spec_report(tmp_path, rows, spec)
    assert whole["provenance"]["data"] == {"a": PROVENANCE6, "b": PROVENANCE_B}
    assert not whole["mixed_provenance"] and whole["complete"]
    # Task 1 (part a) has part b's provenance: part a has two, listed in the order seen.
    rows = [_part_trace(i, provenance=PROVENANCE6 if i in (0, 2) else PROVENANCE_B) for i in range(6)]
    mixed = _spec_report(tmp_path, rows, spec)
    assert mixed["provenance"]["data"] == {"a": [PROVENANCE6, PROVENANCE_B], "b": PROVENANCE_B}
    assert mixed["mixed_provenance"] and not mixed["complete"]


def test_a_provenance_that_is_not_an_object_is_recorded_under_its_name(tmp_path):
    row = _trace(0, 1.0)
    row["task"]["data"]["provenance"] = "toy v1"
    del row["agent"]["model"]
    report = _report(tmp_path, [row])
    assert report["provenance"]["data"] == {"provenance": "toy v1"}
    assert report["provenance"]["models"] == {"unknown": 1}  # no model recorded


def test_traces_without_provenance_are_one_provenance_not_a_mix(tmp_path):
    # Three traces with no provenance, or the same non-object one, are one setting: the run
    # is not "mixed" on their account, and the setting is listed once.
    rows = [_trace(i, 1.0) for i in range(3)]
    for row in rows:
        row["task"]["data"].pop("provenance", None)
    report = _report(tmp_path, rows)
    assert report["provenance"]["data"] == {"provenance": None}
    assert report["mixed_provenance"] is False
    rows = [_trace(i, 1.0) for i in range(3)]
    for row in rows:
        row["task"]["data"]["provenance"] = "toy v1"
    report = _report(tmp_path, rows)
    assert report["provenance"]["data"] == {"provenance": "toy v1"}
    assert report["mixed_provenance"] is False


# ================================================================== whole runs, one by one
# Whether a run is whole and what it is compared with, on the toy spec grouped by part: the
# completeness checks (expected tasks, shards, gaps), provenance and code versions, the
# published comparison and bad numbers.


WHOLE_SPEC = replace(SPEC, group_fields=("part",), macro_field="part", macro_groups=("a", "b"))
"""The toy spec above (SPEC), grouped and macro-averaged by part."""

WHOLE_PROVENANCE = {"dataset": "toy", "options": {"parser": "medhal"}, "code": {"medhal": "9.9.9"}}


def _whole_trace(idx: int, *, right: dict | None = None, selection: dict | None = None) -> dict:
    """One trace of part a: gold "yes", read as "yes" when right and "no" when wrong."""
    right = right if right is not None else {"medhal": 1, "authors": 1, "strict": 1}
    metrics = {}
    for convention, ok in right.items():
        metrics[f"correct_{convention}"] = float(ok)
        metrics[f"parsed_{convention}"] = 1.0
    data = {"idx": idx, "benchmark": "toy", "part": "a", "gold": "yes", "parser": "medhal"}
    if selection is not None:
        data["selection"] = selection
    data["provenance"] = WHOLE_PROVENANCE
    readings = {c: ("yes" if ok else "no") for c, ok in right.items()}
    return {
        "task": {"type": "ToyTask", "data": data},
        "nodes": [{"message": {"role": "assistant", "content": "r"}, "sampled": True}],
        "metrics": metrics,
        "rewards": {},
        "info": {"readings": readings},
        "errors": [],
        "agent": {"model": "m", "sampling": {}},
    }


def _write_whole(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _whole_report(tmp_path: Path, rows: list[dict], spec: ReportSpec = WHOLE_SPEC) -> dict:
    path = _write_whole(tmp_path, rows)
    run = Run(spec, str(path))
    for record in iter_traces(path):
        run.add(record)
    return build_report(run)


# ---------------------------------------------------------------------------- reading a run


def test_unreadable_shapes_are_counted_in_a_thousand_slots_by_default():
    # 1,000 distinct shapes fill the default capacity, each counted once. The 1,001st evicts
    # the rarest (all tie at 1: the first, "s0000") and inherits its count: 1 + 1 = 2, an
    # upper bound; `top` shows its own sighting, 1, as a lower bound, after the exact 1s.
    top = TopCounts()
    for i in range(1001):
        top.add(f"s{i:04d}", i)
    assert len(top.counts) == 1000 and "s0000" not in top.counts
    assert top.counts["s1000"] == 2
    assert top.top(2) == [("s0001", 1, 1, True), ("s0002", 1, 2, True)]
    assert top.top(1000)[-1] == ("s1000", 1, 1000, False)


def test_a_run_read_from_a_file_names_it_and_keeps_items_only_when_asked(tmp_path):
    path = _write_whole(
        tmp_path, [_whole_trace(0), _whole_trace(1, right={"medhal": 0, "authors": 0, "strict": 0})]
    )
    run = read_run(path, WHOLE_SPEC, keep_items=True)
    assert build_report(run)["source"] == str(path)
    assert run.items is not None and len(run.items) == 2  # one row per item, for paired tests


# ---------------------------------------------------------------------------- complete groups


def test_a_macro_field_that_is_not_broken_down_has_no_complete_groups(tmp_path):
    # The macro field `part` is read for the macro figures but is not a group field, so the
    # report has no `part` groups to check against group_sizes: the whole, complete run of
    # part a's one task lists no complete group (and raises nothing).
    spec = replace(WHOLE_SPEC, group_fields=(), group_sizes={"a": 1})
    report = _whole_report(tmp_path, [_whole_trace(0, selection={"n_expected": 1, "contiguous": True})], spec)
    assert report["complete"] and report["groups"] == {}
    assert report["complete_groups"] == []


# ---------------------------------------------------------------------------- writing and bad numbers


def test_report_json_is_indented_by_one_keeps_unicode_and_ends_with_a_newline():
    from medhal.reports.report import write_json

    text = write_json({"name": "é", "values": [1, 0.5]})
    assert text == '{\n "name": "é",\n "values": [\n  1,\n  0.5\n ]\n}\n'


def test_report_json_refuses_a_nan_rather_than_write_invalid_json():
    import pytest

    from medhal.reports.report import write_json

    with pytest.raises(ValueError):
        write_json({"accuracy": float("nan")})


class Extra(NamedTuple):
    extra: float


EXTRA = Columns(Extra)


def _spec_computing(value: object, convention: str) -> ReportSpec:
    """WHOLE_SPEC with a column `extra` of its own, `value` under `convention` and 1.0 under the
    others (a spec's own arithmetic gone wrong: trace metrics that are not finite never get
    this far, the reader refuses them)."""

    def counts(item: ItemView) -> Extra:
        return Extra(extra=value if item.convention == convention else 1.0)  # type: ignore[arg-type]

    return replace(
        WHOLE_SPEC, columns=EXTRA, item_counts=counts, statistics={"extra_rate": EXTRA.ratio("extra", "n")}
    )


def _add_all(path: Path, spec: ReportSpec) -> None:
    run = Run(spec, str(path))
    for record in iter_traces(path):
        run.add(record)


def test_a_column_that_is_not_a_finite_number_names_the_trace_column_and_reading(tmp_path):
    import pytest

    from medhal.reports.traces import TraceFileError

    path = _write_whole(tmp_path, [_whole_trace(0)])
    # The columns are n, correct, parsed, errored, extra: extra is the fifth, here NaN under
    # the authors reading.
    with pytest.raises(TraceFileError) as e:
        _add_all(path, _spec_computing(float("nan"), "authors"))
    assert str(e.value) == (
        f"{path}:1: column 'extra' under the authors reading is nan, "
        "not a finite number (from the trace's metrics?)"
    )
    with pytest.raises(TraceFileError) as e:
        _add_all(path, _spec_computing(float("-inf"), "strict"))
    assert str(e.value).startswith(f"{path}:1: column 'extra' under the strict reading is -inf, not a finite")


def test_a_column_that_is_not_a_number_at_all_is_named_too(tmp_path):
    import pytest

    from medhal.reports.traces import TraceFileError

    path = _write_whole(tmp_path, [_whole_trace(0)])
    with pytest.raises(TraceFileError) as e:
        _add_all(path, _spec_computing("yes", "medhal"))
    assert str(e.value).startswith(
        f"{path}:1: column 'extra' under the medhal reading is 'yes', not a finite"
    )
    with pytest.raises(TraceFileError, match="under the medhal reading is None, not a finite"):
        _add_all(path, _spec_computing(None, "medhal"))


def test_finite_columns_given_as_integers_are_summed_as_floats(tmp_path):
    # A spec may compute its columns as ints (1 rather than 1.0): they are accepted.
    path = _write_whole(tmp_path, [_whole_trace(0), _whole_trace(1)])
    run = Run(_spec_computing(1, "authors"), str(path))
    for record in iter_traces(path):
        run.add(record)
    report = build_report(run)
    assert report["n"] == 2


def test_a_column_given_as_numeric_text_counts_as_its_number(tmp_path):
    # The fast check (one sum) fails on text, the careful one converts it: "0" is 0.0, so
    # the extra rate is 0 / 2 = 0.0 under the medhal reading (1.0 under the others).
    path = _write_whole(tmp_path, [_whole_trace(0), _whole_trace(1)])
    run = Run(_spec_computing("0", "medhal"), str(path))
    for record in iter_traces(path):
        run.add(record)
    run.flush()
    report = build_report(run)
    assert (report["n"], report["micro_accuracy"]) == (2, 1.0)
    rates = [report["conventions"][c]["extra_rate"] for c in ("medhal", "authors", "strict")]
    assert rates == [0.0, 1.0, 1.0]


def test_columns_are_the_base_four_then_the_counts_fields():
    assert EXTRA.names == ("n", "correct", "parsed", "error", "extra")
    assert (EXTRA["n"], EXTRA["error"], EXTRA["extra"]) == (0, 3, 4)
    assert Columns().names == ("n", "correct", "parsed", "error")


def test_counts_must_be_a_named_tuple_without_the_base_columns():
    import pytest

    class Parsed(NamedTuple):
        parsed: float
        extra: float

    with pytest.raises(ValueError, match=r"Parsed repeats the base columns \['parsed'\]"):
        Columns(Parsed)
    with pytest.raises(ValueError, match="counts must be a NamedTuple class, got <class 'tuple'>"):
        Columns(tuple)


def test_counts_of_another_type_are_refused_naming_both(tmp_path):
    import pytest

    path = _write_whole(tmp_path, [_whole_trace(0)])
    spec = replace(WHOLE_SPEC, columns=EXTRA, item_counts=lambda item: (1.0,))
    with pytest.raises(ValueError) as e:
        _add_all(path, spec)
    assert str(e.value) == "toy: item_counts gave tuple, not Extra"
