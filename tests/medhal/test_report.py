"""The shared report on a toy benchmark defined here (as verifiers tests its framework on
echo environments): figures under every convention by hand count, completeness checks,
unreadable replies, errors, and the files written all or nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import pytest

from medhal.reports.report import Columns, ItemView, ReportSpec, build_report, read_run
from medhal.reports.traces import TraceFileError


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
    assert report["unreadable"][0] == {"shape": "I cannot tell", "count": 3, "idx": 0}
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

    from medhal.reports.published import Published

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
