"""Tests written to kill mutants of `medhal/reports/report.py` that `make mutants` found alive, in the
parts that say whether a run is whole and what it is compared with: the completeness checks
(expected tasks, shards, gaps), provenance and code versions, the published comparison and
`build_report`'s assembly of them (reports/test-quality.md lists each mutant, killed or
explained). Expected values are worked out by hand in the comments.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from medhal.reports.report import (
    Columns,
    ItemView,
    ReportSpec,
    Run,
    TopCounts,
    build_report,
    read_run,
)
from medhal.reports.traces import iter_traces
from tests.medhal.test_mutants_report import SPEC as TOY_SPEC

SPEC = replace(TOY_SPEC, group_fields=("part",), macro_field="part", macro_groups=("a", "b"))
"""The toy spec of test_mutants_report, grouped and macro-averaged by part."""

PROVENANCE = {"dataset": "toy", "options": {"parser": "medhal"}, "code": {"medhal": "9.9.9"}}


def _trace(idx: int, *, right: dict | None = None, selection: dict | None = None) -> dict:
    """One trace of part a: gold "yes", read as "yes" when right and "no" when wrong."""
    right = right if right is not None else {"medhal": 1, "authors": 1, "strict": 1}
    metrics = {}
    for convention, ok in right.items():
        metrics[f"correct_{convention}"] = float(ok)
        metrics[f"parsed_{convention}"] = 1.0
    data = {"idx": idx, "benchmark": "toy", "part": "a", "gold": "yes", "parser": "medhal"}
    if selection is not None:
        data["selection"] = selection
    data["provenance"] = PROVENANCE
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


def _write(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _report(tmp_path: Path, rows: list[dict], spec: ReportSpec = SPEC) -> dict:
    path = _write(tmp_path, rows)
    run = Run(spec, str(path))
    for record in iter_traces(path):
        run.add(record)
    return build_report(run)


# ---------------------------------------------------------------------------- reading a run


def test_unreadable_shapes_are_counted_in_a_thousand_slots_by_default():
    # 1,000 distinct shapes fill the default capacity, each counted once. The 1,001st evicts
    # the rarest (all tie at 1: the first, "s0000") and inherits its count: 1 + 1 = 2, an
    # upper bound, and it now ranks first. With room for 1,001 it would be counted 1.
    top = TopCounts()
    for i in range(1001):
        top.add(f"s{i:04d}", i)
    assert len(top.counts) == 1000 and "s0000" not in top.counts
    assert top.top(2) == [("s1000", 2, 1000), ("s0001", 1, 1)]


def test_a_run_read_from_a_file_names_it_and_keeps_items_only_when_asked(tmp_path):
    path = _write(tmp_path, [_trace(0), _trace(1, right={"medhal": 0, "authors": 0, "strict": 0})])
    run = read_run(path, SPEC, keep_items=True)
    assert build_report(run)["source"] == str(path)
    assert run.items is not None and len(run.items) == 2  # one row per item, for paired tests


# ---------------------------------------------------------------------------- complete groups


def test_a_macro_field_that_is_not_broken_down_has_no_complete_groups(tmp_path):
    # The macro field `part` is read for the macro figures but is not a group field, so the
    # report has no `part` groups to check against group_sizes: the whole, complete run of
    # part a's one task lists no complete group (and raises nothing).
    spec = replace(SPEC, group_fields=(), group_sizes={"a": 1})
    report = _report(tmp_path, [_trace(0, selection={"n_expected": 1, "contiguous": True})], spec)
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
    """SPEC with a column `extra` of its own, `value` under `convention` and 1.0 under the
    others (a spec's own arithmetic gone wrong: trace metrics that are not finite never get
    this far, the reader refuses them)."""

    def counts(item: ItemView) -> Extra:
        return Extra(extra=value if item.convention == convention else 1.0)  # type: ignore[arg-type]

    return replace(
        SPEC, columns=EXTRA, item_counts=counts, statistics={"extra_rate": EXTRA.ratio("extra", "n")}
    )


def _add_all(path: Path, spec: ReportSpec) -> None:
    run = Run(spec, str(path))
    for record in iter_traces(path):
        run.add(record)


def test_a_column_that_is_not_a_finite_number_names_the_trace_column_and_reading(tmp_path):
    import pytest

    from medhal.reports.traces import TraceFileError

    path = _write(tmp_path, [_trace(0)])
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

    path = _write(tmp_path, [_trace(0)])
    with pytest.raises(TraceFileError) as e:
        _add_all(path, _spec_computing("yes", "medhal"))
    assert str(e.value).startswith(
        f"{path}:1: column 'extra' under the medhal reading is 'yes', not a finite"
    )
    with pytest.raises(TraceFileError, match="under the medhal reading is None, not a finite"):
        _add_all(path, _spec_computing(None, "medhal"))


def test_finite_columns_given_as_integers_are_summed_as_floats(tmp_path):
    # A spec may compute its columns as ints (1 rather than 1.0): they are accepted.
    path = _write(tmp_path, [_trace(0), _trace(1)])
    run = Run(_spec_computing(1, "authors"), str(path))
    for record in iter_traces(path):
        run.add(record)
    report = build_report(run)
    assert report["n"] == 2


def test_a_column_given_as_numeric_text_counts_as_its_number(tmp_path):
    # The fast check (one sum) fails on text, the careful one converts it: "0" is 0.0, so
    # the extra rate is 0 / 2 = 0.0 under the medhal reading (1.0 under the others).
    path = _write(tmp_path, [_trace(0), _trace(1)])
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

    path = _write(tmp_path, [_trace(0)])
    spec = replace(SPEC, columns=EXTRA, item_counts=lambda item: (1.0,))
    with pytest.raises(ValueError) as e:
        _add_all(path, spec)
    assert str(e.value) == "toy: item_counts gave tuple, not Extra"
