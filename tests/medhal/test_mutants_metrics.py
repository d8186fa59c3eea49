"""Tests written to kill mutants of `medhal/reports/metrics.py` that `make mutants` found alive
(reports/test-quality.md lists each one, killed or explained).

Every expected value is worked out by hand in the comments; fixtures are built so the figure
under test is forced: constant columns give a bootstrap distribution with a single value, and
one resample gives an interval that is a single point.
"""

from __future__ import annotations

import numpy as np
import pytest

from medhal.reports import metrics as m
from tests.medhal import metrics_helpers as h


def _table(right: int, n: int) -> np.ndarray:
    """n cluster-less items, the first `right` of them right: rows (correct, 1)."""
    return np.array([[1.0 if i < right else 0.0, 1.0] for i in range(n)])


ACCURACY = m.ratio(0, 1)


# ---------------------------------------------------------------------------- unpaired


def test_unpaired_difference_is_b_minus_a():
    # Run A is right on all 10 items, run B on none: every resample of A has accuracy 1 and
    # every resample of B accuracy 0, so B - A is -1 in every draw: the interval is (-1, -1).
    assert m.unpaired_difference_ci(_table(10, 10), _table(0, 10), ACCURACY) == (-1.0, -1.0)


def test_unpaired_difference_is_seeded():
    # 5/10 against 7/10: the resampled differences vary, so only a fixed seed makes two calls
    # agree, and a different seed gives a different interval.
    a, b = _table(5, 10), _table(7, 10)
    first = m.unpaired_difference_ci(a, b, ACCURACY, samples=200, seed=3)
    assert m.unpaired_difference_ci(a, b, ACCURACY, samples=200, seed=3) == first
    assert any(m.unpaired_difference_ci(a, b, ACCURACY, samples=200, seed=s) != first for s in (4, 5, 6))


def test_each_unpaired_run_draws_from_the_seed():
    # One run constant (every resample the same), the other varying: the interval moves with
    # the seed only if the varying run's draws come from it, whichever run that is.
    constant, varying = _table(10, 10), _table(5, 10)
    for a, b in ((constant, varying), (varying, constant)):
        first = m.unpaired_difference_ci(a, b, ACCURACY, samples=200, seed=3)
        assert any(m.unpaired_difference_ci(a, b, ACCURACY, samples=200, seed=s) != first for s in (4, 5, 6))


def test_unpaired_difference_passes_samples_and_confidence_on():
    a, b = _table(5, 10), _table(7, 10)
    # One resample: one difference, so both ends of the interval are that value.
    lo, hi = m.unpaired_difference_ci(a, b, ACCURACY, samples=1)
    assert lo == hi
    # A 50% interval lies inside the 99% one of the same draws, and is shorter.
    lo50, hi50 = m.unpaired_difference_ci(a, b, ACCURACY, confidence=0.5)
    lo99, hi99 = m.unpaired_difference_ci(a, b, ACCURACY, confidence=0.99)
    assert lo99 <= lo50 <= hi50 <= hi99 and hi50 - lo50 < hi99 - lo99


# ---------------------------------------------------------------------------- paired


def _paired_sums() -> tuple[np.ndarray, np.ndarray]:
    # 20 items, each its own cluster. A right on 0..9, B right on 5..16: B - A is +1 on
    # 10..16 (7 items), -1 on 0..4 (5 items), 0 on the other 8: the differences vary.
    a = np.array([[1.0 if i < 10 else 0.0, 1.0] for i in range(20)])
    b = np.array([[1.0 if 5 <= i <= 16 else 0.0, 1.0] for i in range(20)])
    return a, b


def test_paired_difference_is_seeded():
    a, b = _paired_sums()
    first = h.paired_difference_ci(a, b, ACCURACY, samples=200, seed=3)
    assert h.paired_difference_ci(a, b, ACCURACY, samples=200, seed=3) == first
    assert m.paired_difference_cis(a, b, {"acc": ACCURACY}, samples=200, seed=3) == {"acc": first}
    assert any(h.paired_difference_ci(a, b, ACCURACY, samples=200, seed=s) != first for s in (4, 5, 6))


def test_paired_difference_passes_samples_and_confidence_on():
    a, b = _paired_sums()
    for interval in (
        h.paired_difference_ci(a, b, ACCURACY, samples=1),
        m.paired_difference_cis(a, b, {"acc": ACCURACY}, samples=1)["acc"],
    ):
        assert interval[0] == interval[1]  # one resample: a single difference
    for narrow, wide in (
        (
            h.paired_difference_ci(a, b, ACCURACY, confidence=0.5),
            h.paired_difference_ci(a, b, ACCURACY, confidence=0.99),
        ),
        (
            m.paired_difference_cis(a, b, {"acc": ACCURACY}, confidence=0.5)["acc"],
            m.paired_difference_cis(a, b, {"acc": ACCURACY}, confidence=0.99)["acc"],
        ),
    ):
        assert wide[0] <= narrow[0] <= narrow[1] <= wide[1] and narrow[1] - narrow[0] < wide[1] - wide[0]


def test_paired_sums_must_both_be_two_dimensional():
    # One run given as a flat vector (3 values), the other as (3, 2): refused with the
    # function's own message, whichever of the two is the flat one.
    for a, b in ((np.zeros(3), np.zeros((3, 2))), (np.zeros((3, 2)), np.zeros(3))):
        with pytest.raises(ValueError, match="paired cluster sums must be aligned 2-D arrays"):
            m.paired_difference_cis(a, b, {"acc": ACCURACY})


# ---------------------------------------------------------------------------- pairing


def test_runs_over_different_items_are_refused_with_the_counts():
    a, b = m.ItemTable(1), m.ItemTable(1)
    for item in (0, 1, 2, 5):
        a.add(item, None, (1,))
    for item in (0, 1, 3, 4, 6):
        b.add(item, None, (1,))
    # Items 2 and 5 only in A (2), items 3, 4 and 6 only in B (3).
    with pytest.raises(
        ValueError, match=r"\(4 and 5 rows; 2 item ids only in the first, 3 only in the second"
    ):
        m.pair_runs(a, b)
    b = m.ItemTable(1)
    for item in (0, 1, 3, 4):
        b.add(item, None, (1,))
    # The same number of rows (4), different ids: refused all the same.
    with pytest.raises(
        ValueError, match=r"\(4 and 4 rows; 2 item ids only in the first, 2 only in the second"
    ):
        m.pair_runs(a, b)


def test_a_cluster_the_first_run_lacks_matches_none_of_its_clusters():
    # A puts items 0, 1, 2 in clusters x, y, z (A's codes 0, 1, 2). B puts item 2 in "w", a
    # cluster A never saw: it must not be taken for A's cluster number 2 ("z").
    a, b = m.ItemTable(1), m.ItemTable(1)
    for item, cluster in ((0, "x"), (1, "y"), (2, "z")):
        a.add(item, cluster, (1,))
    for item, cluster in ((0, "x"), (1, "y"), (2, "w")):
        b.add(item, cluster, (1,))
    with pytest.raises(ValueError, match="item 2 is in cluster 'z' in the first run but in cluster 'w'"):
        m.pair_runs(a, b)


def test_repeats_pair_in_the_order_added_whatever_their_number():
    # 40 items with two rollouts each, added as item 39..0 (first rollouts) then 39..0 again.
    # A's first rollout of every item is right and its second wrong; B the other way round.
    # Pairing in the order added gives, for every item, (1, 0) then (0, 1): b = c = 40.
    a, b = m.ItemTable(1), m.ItemTable(1)
    for value in (1, 0):
        for item in reversed(range(40)):
            a.add(item, None, (value,))
            b.add(item, None, (1 - value,))
    pairing = m.pair_runs(a, b)
    assert pairing.rows_a[:, 0].tolist() == [1, 0] * 40
    assert pairing.rows_b[:, 0].tolist() == [0, 1] * 40
    assert pairing.discordant() == (40, 40)


def test_discordant_can_compare_two_different_columns():
    # Two items. Run A column 0: (1, 0). Run B column 0: (1, 0), column 1: (0, 1).
    # Column 0 against column 0: no discordance; column 0 against B's column 1: item 0 is
    # right in A only (b = 1), item 1 in B only (c = 1).
    a, b = m.ItemTable(1), m.ItemTable(2)
    a.add(0, None, (1,))
    a.add(1, None, (0,))
    b.add(0, None, (1, 0))
    b.add(1, None, (0, 1))
    pairing = m.pair_runs(a, b)
    assert pairing.discordant(0) == (0, 0)
    assert pairing.discordant(0, 1) == (1, 1)


# ---------------------------------------------------------------------------- McNemar


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        # n = 3 (isqrt 1, the smallest step bound): 2 * (C(3,0) + C(3,1)) / 8 = 1.0
        (1, 2, 1.0),
        # n = 2: 2 * (C(2,0) + C(2,1)) / 4 = 1.5 -> capped at 1
        (1, 1, 1.0),
        # n = 3, b = 0: 2 * C(3,0) / 8 = 0.25
        (0, 3, 0.25),
    ],
)
def test_mcnemar_exact_small_counts(b: int, c: int, p: float):
    assert m.mcnemar_exact(b, c) == pytest.approx(p, rel=1e-12)


# ---------------------------------------------------------------------------- wrappers


def test_bootstrap_mean_ci_passes_samples_on():
    # Values 0, 1, 0, 1, ...: one resample gives one mean, so the interval is a point.
    lo, hi = h.bootstrap_mean_ci([i % 2 for i in range(20)], samples=1)
    assert lo == hi


def test_confusion_uses_the_extra_columns_given():
    # gold a, a, b; predicted a, "abstain", b: one extra column, "abstain", and no INVALID
    # or ERROR column when they are not asked for.
    matrix = h.confusion(["a", "a", "b"], ["a", "abstain", "b"], ["a", "b"], extra_columns=("abstain",))
    assert matrix == {"a": {"a": 1, "b": 0, "abstain": 1}, "b": {"a": 0, "b": 1, "abstain": 0}}


def test_a_row_that_is_not_numbers_is_refused_where_it_is_added():
    # Nothing is flushed yet (one row queued of 2,048): the check happens in `add` itself.
    sums = m.ClusterSums(2)
    with pytest.raises(ValueError):
        sums.add("c", ["x", 1.0])
    assert sums.n_items == 0


def test_a_class_never_predicted_right_has_zero_precision_recall_and_f1():
    # gold a, b; predicted b, a: no true positive for either class.
    assert h.per_class_prf(["a", "b"], ["b", "a"], ["a", "b"]) == {
        "a": {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1},
        "b": {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1},
    }


def test_add_rows_refuses_bad_shapes_and_values_with_its_own_messages():
    sums = m.ClusterSums(2)
    expected = r"rows must be \({}, 2\) to match the clusters and the width, got \({}\)"
    with pytest.raises(ValueError, match=expected.format(1, "1, 3")):
        sums.add_rows(["c"], np.zeros((1, 3)))
    with pytest.raises(ValueError, match=expected.format(1, "2,")):
        sums.add_rows(["c"], np.zeros(2))
    with pytest.raises(ValueError, match=expected.format(2, "1, 2")):
        sums.add_rows(["c", "d"], np.zeros((1, 2)))
    with pytest.raises(ValueError, match=r"cluster 'd': value nan in column 1 is not a finite number"):
        sums.add_rows(["c", "d"], np.array([[1.0, 1.0], [1.0, np.nan]]))
    assert sums.n_items == 0  # nothing was added


def test_refusals_name_the_run_or_count_at_fault():
    a, b = m.ItemTable(1), m.ItemTable(1)
    a.add(0, None, (0.5,))
    b.add(0, None, (1,))
    with pytest.raises(ValueError, match="run A: McNemar needs a 0/1 column"):
        m.pair_runs(a, b).discordant()
    with pytest.raises(ValueError, match="run B: McNemar needs a 0/1 column"):
        m.pair_runs(b, a).discordant()
    with pytest.raises(ValueError, match="McNemar count b must be a non-negative integer, got -1"):
        m.mcnemar_exact(-1, 3)
    with pytest.raises(ValueError, match="McNemar count c must be a non-negative integer, got -1"):
        m.mcnemar_exact(3, -1)


# ---------------------------------------------------------------------------- cluster sums


def test_a_one_column_table_is_accepted():
    # Width 1 is the smallest allowed: one count per item. Cluster "a" gets 1 + 2 = 3,
    # cluster "b" 4, and one cluster-less item 5: totals 3 + 4 + 5 = 12 over 3 clusters.
    sums = m.ClusterSums(1)
    for cluster, value in (("a", 1), ("b", 4), ("a", 2), (None, 5)):
        sums.add(cluster, (value,))
    assert len(sums) == 3
    assert m.column_totals(sums).tolist() == [12.0]


def test_refusals_name_the_cluster_item_or_argument_at_fault():
    with pytest.raises(ValueError, match=r"^cluster 'c7': value nan in column 1 is not a finite number$"):
        m.ClusterSums(2).add("c7", (1.0, float("nan")))
    with pytest.raises(ValueError, match=r"^item 5: value inf in column 0 is not a finite number$"):
        m.ItemTable(2).add(5, None, (float("inf"), 1.0))
    with pytest.raises(ValueError, match=r"^width must be at least 1, got 0$"):
        m.ItemTable(0)
    with pytest.raises(ValueError, match=r"^samples must be at least 1, got 0$"):
        m.resample_totals(_table(1, 2), samples=0)


def test_clusters_added_over_several_batches_are_each_one_row_of_the_table():
    # Batch 1: cluster "a" (1, 1). Batch 2: clusters "b" and "c", (1, 1) each, and "a"
    # again (1, 1). The table holds 3 clusters: a = (2, 2), b = (1, 1), c = (1, 1), each of
    # weight 1, and nothing else (no empty rows left over from growing the store).
    sums = m.ClusterSums(2)
    sums.add_rows(["a"], np.array([[1.0, 1.0]]))
    sums.add_rows(["b", "c", "a"], np.array([[1.0, 1.0]] * 3))
    rows, weights = sums.table()
    assert rows.tolist() == [[2.0, 2.0], [1.0, 1.0], [1.0, 1.0]]
    assert weights.tolist() == [1, 1, 1]
    # A resample draws 3 clusters out of these 3; every cluster has as many right as items,
    # so every resample's accuracy is 1 and the interval is (1, 1).
    assert m.bootstrap_ci(sums, ACCURACY) == (1.0, 1.0)


def test_single_precision_rows_are_summed_as_doubles():
    # Numbers given as float32 (e.g. a score from a numpy array): 0.5 and 0.25 are exact
    # in both precisions. Two cluster-less items (0.5, 1) and (0.25, 1), one added by `add`,
    # one by `add_rows`: totals 0.75 and 2.
    sums = m.ClusterSums(2)
    sums.add(None, np.array([0.5, 1.0], dtype=np.float32))
    sums.add_rows([None], np.array([[0.25, 1.0]], dtype=np.float32))
    assert m.column_totals(sums).tolist() == [0.75, 2.0]
    assert len(sums) == 2


# ---------------------------------------------------------------------------- bootstrap


def test_every_resample_draws_all_clusters_whatever_the_draw_budget():
    # 8 identical clusters (1, 1): the few-distinct-rows path (1 kind, 8 clusters). Every
    # resample draws 8 clusters of (1, 1): totals (8, 8), in every one of the 5 resamples,
    # also when at most 3 draws may be held at once (chunks of 3 and 2 resamples).
    eight = np.ones((8, 2))
    for budget in (m.DRAW_BUDGET, 3):
        assert m.resample_totals(eight, samples=5, draw_budget=budget).tolist() == [[8.0, 8.0]] * 5
    # 3 identical clusters (1, 1): the index-drawing path (1 kind, fewer than 8 clusters per
    # kind). Totals (3, 3) in every resample, the first included; a budget of 4 draws holds
    # one resample of 3 draws at a time.
    three = np.ones((3, 2))
    for budget in (m.DRAW_BUDGET, 4):
        assert m.resample_totals(three, samples=5, draw_budget=budget).tolist() == [[3.0, 3.0]] * 5


def test_confidence_must_lie_strictly_between_zero_and_one():
    values = np.array([0.0, 0.5, 1.0])
    # 0 would give the median twice, 1 the extremes: neither is an interval of that level.
    for confidence in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="confidence must be between 0 and 1"):
            m.percentile_interval(values, confidence)
    # 50%: the 25th and 75th percentiles of 0, 0.5, 1 (linear): 0.25 and 0.75.
    assert m.percentile_interval(values, 0.5) == (0.25, 0.75)


def test_safe_ratio_divides_a_column_by_a_constant_and_a_constant_by_a_column():
    # [1, 2, 3] / 2 = [0.5, 1, 1.5]; 6 / [2, 3, 0] = [3, 2, 0] (the last by the zero rule).
    assert m.safe_ratio(np.array([1.0, 2.0, 3.0]), 2.0).tolist() == [0.5, 1.0, 1.5]
    assert m.safe_ratio(6.0, np.array([2.0, 3.0, 0.0])).tolist() == [3.0, 2.0, 0.0]
