"""medhal.reports.run_sums: a run's per-cluster sums as interned states give the tables that
summing every cluster on its own gives (`ClusterSums`, one trace at a time, the reference),
row for row and bit for bit, so the bootstrap draws the same intervals; whether clusters are
small (interned), large (summed on their own) or the interned tables overflow; and a run of
one rollout per task holds a few bytes per task."""

from __future__ import annotations

import random
import tracemalloc
from collections.abc import Hashable

import numpy as np
import pytest

from medhal.kit.outcomes import CONVENTIONS
from medhal.kit.report_spec import BASE_COLUMNS
from medhal.reports import metrics as m
from medhal.reports import run_sums as rs

WIDTH = 6  # n, correct, parsed, error and two counts of the benchmark's own, per convention
MACRO = ("a", "b", "c")
FIELDS = ("set", "family")
Trace = tuple[Hashable, tuple[str, ...], tuple[float, ...], int]


def _row(rng: random.Random, fractional: bool) -> tuple[float, ...]:
    """A trace's row under every convention: n = 1, then 0/1 values (or tenths)."""
    out: list[float] = []
    for _ in CONVENTIONS:
        out.append(1.0)
        for _ in range(WIDTH - 1):
            out.append(rng.randrange(11) / 10 if fractional else float(rng.random() < 0.4))
    return tuple(out)


def _traces(seed: int, n: int, *, tasks: bool, fractional: bool = False) -> list[Trace]:
    """Clusters of one to a few hundred traces, shuffled: small ones (a task's rollouts)
    and large ones (a source question shared by many items)."""
    rng = random.Random(seed)
    out: list[Trace] = []
    for c in range(n):
        size = rng.choice([1, 1, 1, 2, 4, 9]) if c % 10 else rng.randrange(10, 300)
        cluster: Hashable = c if tasks else f"source {c}"
        macro = rng.randrange(-1 if c % 7 == 0 else 0, len(MACRO))
        for _ in range(size):
            groups = (MACRO[macro] if macro >= 0 else "none", rng.choice(["x", "y"]))
            out.append((cluster, groups, _row(rng, fractional), macro))
    rng.shuffle(out)
    return out


def _reference(traces: list[Trace]) -> tuple[m.ClusterSums, dict[str, dict[str, m.ClusterSums]]]:
    """Every cluster summed on its own, one trace at a time, the row laid out by hand: the
    row under every convention, then each convention's base columns in its macro group's block."""
    block = len(BASE_COLUMNS)
    overall = m.ClusterSums((WIDTH + block * len(MACRO)) * len(CONVENTIONS))
    groups: dict[str, dict[str, m.ClusterSums]] = {f: {} for f in FIELDS}
    for cluster, values, every, macro in traces:
        columns = [0.0] * (block * len(MACRO) * len(CONVENTIONS))
        if macro >= 0:
            for c in range(len(CONVENTIONS)):
                start = (c * len(MACRO) + macro) * block
                columns[start : start + block] = every[c * WIDTH : c * WIDTH + block]
        overall.add(cluster, [*every, *columns])
        for fld, value in zip(FIELDS, values, strict=True):
            groups[fld].setdefault(value, m.ClusterSums(len(every))).add(cluster, every)
    return overall, groups


def _run_sums(traces: list[Trace], *, tasks: bool) -> rs.RunSums:
    sums = rs.RunSums(WIDTH, len(MACRO), FIELDS, task_clusters=tasks)
    for trace in traces:
        sums.add(*trace)
    return sums


def _canonical(sums: m.ClusterSums) -> tuple[list[tuple[float, ...]], int, int]:
    """A table as the multiset of its cluster rows (each row repeated by its weight), its
    number of clusters and of items."""
    rows, weights = sums.table()
    pairs = zip(rows.tolist(), weights.tolist(), strict=True)
    expanded = sorted(tuple(r) for r, w in pairs for _ in range(w))
    return expanded, len(sums), sums.n_items


def _assert_same(traces: list[Trace], *, tasks: bool) -> None:
    want_overall, want_groups = _reference(traces)
    got_overall, got_groups = _run_sums(traces, tasks=tasks).tables()
    assert _canonical(got_overall) == _canonical(want_overall)
    assert {f: sorted(v) for f, v in got_groups.items()} == {f: sorted(v) for f, v in want_groups.items()}
    for fld, values in want_groups.items():
        for value, table in values.items():
            assert _canonical(got_groups[fld][value]) == _canonical(table), (fld, value)
    accuracy = m.ratio(1, 0)
    assert m.bootstrap_ci(got_overall, accuracy) == m.bootstrap_ci(want_overall, accuracy)


@pytest.mark.parametrize("tasks", [True, False])
@pytest.mark.parametrize("fractional", [False, True])
def test_interned_states_give_the_tables_of_clusters_summed_one_by_one(tasks: bool, fractional: bool) -> None:
    # Tenths are not exact in binary, so the rows match bit for bit only when every cluster's
    # rows are added in the order they came, as the reference adds them.
    _assert_same(_traces(1, 300, tasks=tasks, fractional=fractional), tasks=tasks)


@pytest.mark.parametrize(("max_states", "small"), [(5, rs.SMALL), (40, 2), (rs.MAX_STATES, 1), (200, 100)])
def test_moved_and_overflowing_clusters_give_the_same_tables(
    monkeypatch: pytest.MonkeyPatch, max_states: int, small: int
) -> None:
    # Tables that overflow after a few traces (every cluster moved to its own sums), clusters
    # moved after two traces, after one, and none moved for size.
    monkeypatch.setattr(rs, "MAX_STATES", max_states)
    monkeypatch.setattr(rs, "SMALL", small)
    for tasks in (True, False):
        _assert_same(_traces(2, 200, tasks=tasks, fractional=True), tasks=tasks)


def test_no_trace_gives_empty_tables() -> None:
    overall, groups = rs.RunSums(WIDTH, len(MACRO), FIELDS, task_clusters=True).tables()
    assert (len(overall), overall.n_items, groups) == (0, 0, {})


def test_tables_can_be_taken_again_after_more_traces() -> None:
    traces = _traces(3, 100, tasks=True)
    sums = _run_sums(traces[:500], tasks=True)
    sums.tables()
    for trace in traces[500:]:
        sums.add(*trace)
    assert _canonical(sums.tables()[0]) == _canonical(_reference(traces)[0])


def test_one_rollout_per_task_holds_a_few_bytes_per_task() -> None:
    # 72 numbers a task for MedFact-Bench's layout before; a state number (4 bytes, in an
    # array that at most doubles) now, and a handful of distinct rows however many tasks.
    rng = random.Random(4)
    sums = rs.RunSums(WIDTH, len(MACRO), FIELDS, task_clusters=True)
    rows = [_row(rng, False) for _ in range(50)]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for idx in range(100_000):
            sums.add(idx, (MACRO[idx % 3], "x"), rows[idx % len(rows)], idx % 3)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 8 * 100_000 + 2 * 2**20
    overall, _ = sums.tables()
    assert (len(overall), overall.n_items) == (100_000, 100_000)
    assert overall.stored_rows <= 150  # (row, macro group) pairs
    every = np.sum([rows[i % 50] for i in range(100_000)], axis=0)
    assert np.array_equal(overall.totals()[: WIDTH * 3], every)
