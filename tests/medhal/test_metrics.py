"""medhal.reports.metrics: every expected value is a number worked out by hand (arithmetic in the
comments), or comes from an independent computation (scikit-learn, scipy, an exact
enumeration with itertools); never from the code under test."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from scipy.stats import binomtest
from sklearn.metrics import confusion_matrix, precision_recall_fscore_support

from medhal.reports import metrics as m
from tests.medhal import metrics_helpers as h

# ---------------------------------------------------------------------------- counts

# Gold rows x predicted columns. Every class has predicted count != gold count (so P != R),
# every off-diagonal pair is asymmetric (A->B 1 vs B->A 2, A->C 1 vs C->A 0, B->C 2 vs
# C->B 1, so transposing changes every such cell), and the classes' P, R and F1 all differ.
#            A  B  C  INVALID ERROR     gold total
MATRIX = {
    "A": [4, 1, 1, 1, 0],  # 4+1+1+1   = 7
    "B": [2, 3, 2, 0, 1],  # 2+3+2+0+1 = 8
    "C": [0, 1, 2, 1, 0],  # 0+1+2+1   = 4
}
COLUMNS = ["A", "B", "C", m.INVALID, m.ERROR]
# Predicted totals (column sums): A 4+2+0 = 6, B 1+3+1 = 5, C 1+2+2 = 5, INVALID 2, ERROR 1.


def _fixture() -> tuple[list[str], list[str]]:
    gold, pred = [], []
    for g, row in MATRIX.items():
        for col, n in zip(COLUMNS, row, strict=True):
            gold += [g] * n
            pred += [col] * n
    # Interleave so nothing depends on the rows arriving grouped.
    order = sorted(range(len(gold)), key=lambda i: (i * 7) % len(gold))
    return [gold[i] for i in order], [pred[i] for i in order]


def test_fixture_matrix_is_what_the_comments_say():
    gold, pred = _fixture()
    assert len(gold) == 19  # 7 + 8 + 4 = 6 + 5 + 5 + 2 + 1
    assert sorted(set(zip(gold, pred, strict=True))) == sorted(
        (g, c) for g, row in MATRIX.items() for c, n in zip(COLUMNS, row, strict=True) if n
    )


def test_per_class_prf_hand_counts():
    gold, pred = _fixture()
    got = h.per_class_prf(gold, pred, ["A", "B", "C"])
    # A: TP 4, predicted 6, gold 7: P 4/6 = 0.667, R 4/7 = 0.571, F1 2*4/(6+7) = 8/13 = 0.615
    # B: TP 3, predicted 5, gold 8: P 3/5 = 0.600, R 3/8 = 0.375, F1 2*3/(5+8) = 6/13 = 0.462
    # C: TP 2, predicted 5, gold 4: P 2/5 = 0.400, R 2/4 = 0.500, F1 2*2/(5+4) = 4/9  = 0.444
    assert got["A"] == pytest.approx({"precision": 4 / 6, "recall": 4 / 7, "f1": 8 / 13, "support": 7})
    assert got["B"] == pytest.approx({"precision": 3 / 5, "recall": 3 / 8, "f1": 6 / 13, "support": 8})
    assert got["C"] == pytest.approx({"precision": 2 / 5, "recall": 2 / 4, "f1": 4 / 9, "support": 4})
    assert m.per_class_prf_from_pairs(Counter(zip(gold, pred, strict=True)), ["A", "B", "C"]) == got


def test_swapping_gold_and_prediction_changes_precision_recall_and_support():
    # Pins which sequence is gold. Swapped, precision and recall trade places and the
    # support becomes the predicted count. (F1 = 2TP/(pred+gold) is symmetric: only P, R
    # and support can catch a swap.)
    gold, pred = _fixture()
    swapped = h.prf(pred, gold, "A")
    # A: TP 4, "predicted" = gold count 7, "support" = predicted count 6
    assert swapped == pytest.approx({"precision": 4 / 7, "recall": 4 / 6, "f1": 8 / 13, "support": 6})
    assert h.prf(gold, pred, "A")["support"] == 7


def test_prf_from_pairs_and_counts():
    pairs = {("A", "A"): 4, ("A", "B"): 1, ("B", "A"): 2, ("B", "B"): 3, ("B", m.ERROR): 1}
    # A: TP 4, predicted 4+2 = 6, gold 4+1 = 5. B: TP 3, predicted 1+3 = 4, gold 2+3+1 = 6.
    got = m.per_class_prf_from_pairs(pairs, ["A", "B"])
    assert got["A"] == pytest.approx({"precision": 4 / 6, "recall": 4 / 5, "f1": 8 / 11, "support": 5})
    assert got["B"] == pytest.approx({"precision": 3 / 4, "recall": 3 / 6, "f1": 6 / 10, "support": 6})
    assert m.prf_from_counts(0, 0, 0) == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 0}


def test_prf_matches_sklearn():
    rng = np.random.default_rng(3)
    classes = ["A", "B", "C"]
    gold = list(rng.choice(classes, 200))
    pred = list(rng.choice([*classes, m.INVALID], 200))
    p, r, f, s = precision_recall_fscore_support(gold, pred, labels=classes, zero_division=0)
    ours = h.per_class_prf(gold, pred, classes)
    for i, c in enumerate(classes):
        assert ours[c]["precision"] == pytest.approx(p[i])
        assert ours[c]["recall"] == pytest.approx(r[i])
        assert ours[c]["f1"] == pytest.approx(f[i])
        assert ours[c]["support"] == s[i]


def test_zero_division_is_zero():
    assert h.prf(["A"], ["B"], "C") == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 0}
    assert m.safe_div(3, 0) == 0.0
    assert m.safe_div(3, 4) == 0.75
    assert h.mean([]) == 0.0
    assert h.mean(iter([1.0, 0.0, 0.5])) == 0.5  # 1.5 / 3


def test_confusion_hand_counts():
    gold, pred = _fixture()
    expected = {g: dict(zip(COLUMNS, row, strict=True)) for g, row in MATRIX.items()}
    assert h.confusion(gold, pred, ["A", "B", "C"]) == expected
    # Swapping gold and prediction makes INVALID/ERROR gold labels, which raises ...
    with pytest.raises(ValueError, match=r"gold label '(INVALID|ERROR)'"):
        h.confusion(pred, gold, ["A", "B", "C"])
    # ... and on the items predicted as a class it transposes the block, changing every
    # off-diagonal cell: rows are now the predicted class.
    kept = [(g, p) for g, p in zip(gold, pred, strict=True) if p in ("A", "B", "C")]
    swapped = h.confusion([p for _, p in kept], [g for g, _ in kept], ["A", "B", "C"])
    assert swapped == {
        "A": {"A": 4, "B": 2, "C": 0, m.INVALID: 0, m.ERROR: 0},
        "B": {"A": 1, "B": 3, "C": 1, m.INVALID: 0, m.ERROR: 0},
        "C": {"A": 1, "B": 2, "C": 2, m.INVALID: 0, m.ERROR: 0},
    }
    assert all(swapped[r][c] != expected[r][c] for r in "ABC" for c in "ABC" if r != c)
    pairs = {("A", "A"): 2, ("A", "NOT_SURE"): 1, ("B", m.INVALID): 3}
    assert m.confusion_from_pairs(pairs, ["A", "B"], ("NOT_SURE", m.INVALID, m.ERROR)) == {
        "A": {"A": 2, "B": 0, "NOT_SURE": 1, m.INVALID: 0, m.ERROR: 0},
        "B": {"A": 0, "B": 0, "NOT_SURE": 0, m.INVALID: 3, m.ERROR: 0},
    }


def test_confusion_keeps_invalid_and_error_columns():
    gold = ["A", "A", "B", "B", "B"]
    pred = ["A", m.INVALID, "B", m.ERROR, "A"]
    cm = h.confusion(gold, pred, ["A", "B"])
    assert cm == {
        "A": {"A": 1, "B": 0, m.INVALID: 1, m.ERROR: 0},
        "B": {"A": 1, "B": 1, m.INVALID: 0, m.ERROR: 1},
    }
    sk = confusion_matrix(gold, pred, labels=["A", "B", m.INVALID, m.ERROR])
    assert [list(r.values()) for r in cm.values()] == sk[:2].tolist()


def test_confusion_rejects_unknown_labels_and_ragged_input():
    with pytest.raises(ValueError, match="prediction 'Z'"):
        h.confusion(["A"], ["Z"], ["A"])
    with pytest.raises(ValueError, match="gold label 'Q'"):
        h.confusion(["Q"], ["A"], ["A"])
    with pytest.raises(ValueError, match="2 gold labels but 1 predictions"):
        h.per_class_prf(["A", "A"], ["A"], ["A"])


# ---------------------------------------------------------------------------- cluster sums


def test_cluster_sums_hand_totals():
    acc = m.ClusterSums(2)
    for cluster, row in [
        ("q1", (1, 1)),
        ("q2", (0, 1)),
        ("q1", (1, 1)),
        (None, (1, 1)),
        (None, (0, 1)),
        (None, (1, 1)),
        ("q2", (1, 1)),
    ]:
        acc.add(cluster, row)
    assert acc.n_items == 7
    assert len(acc) == 5  # q1, q2 and three cluster-less items
    rows, weights = acc.table()
    # q1 = (1+1, 1+1), q2 = (0+1, 1+1); cluster-less: (1, 1) twice, (0, 1) once
    got = sorted(zip(map(tuple, rows.tolist()), weights.tolist(), strict=True))
    assert got == [((0.0, 1.0), 1), ((1.0, 1.0), 2), ((1.0, 2.0), 1), ((2.0, 2.0), 1)]
    assert acc.totals().tolist() == [5.0, 7.0]  # 2+1+1+0+1 correct, 7 items
    assert h.estimate(acc, m.ratio(0, 1)) == pytest.approx(5 / 7)


def test_cluster_sums_memory_grows_with_clusters_not_items():
    acc = m.ClusterSums(2)
    for i in range(10_000):
        acc.add(f"source-{i % 10}", (i % 3 == 0, 1))
    for i in range(10_000):
        acc.add(None, (i % 2, 1))
    assert acc.n_items == 20_000
    assert len(acc) == 10 + 10_000  # ten keyed clusters, every cluster-less item is its own
    # Stored: 10 keyed rows + 2 distinct cluster-less rows, (0, 1) and (1, 1).
    assert acc.stored_rows == 12
    rows, weights = acc.table()
    assert rows.shape == (12, 2) and weights.shape == (12,)
    assert weights.sum() == 10_010
    # 1 + 10,000 // 3 = 3,334 multiples of 3 below 10,000, plus 5,000 odd numbers
    assert acc.totals().tolist() == [3_334 + 5_000, 20_000]


def test_distinct_singleton_rows_overflow_into_rows_and_give_the_same_interval():
    capped = m.ClusterSums(2, max_singleton_kinds=2)
    free = m.ClusterSums(2)
    values = [0.0, 0.25, 0.5, 0.75, 1.0] * 8
    for v in values:
        capped.add(None, (v, 1))
        free.add(None, (v, 1))
    # Capped: the first two distinct rows counted, the other 3 values x 8 repeats = 24 rows.
    assert capped.stored_rows == 2 + 24
    assert free.stored_rows == 5
    assert len(capped) == len(free) == 40
    assert m.bootstrap_ci(capped, m.ratio(0, 1)) == m.bootstrap_ci(free, m.ratio(0, 1))


def test_rows_are_validated():
    acc = m.ClusterSums(2)
    with pytest.raises(ValueError, match="row has 3 values, expected 2"):
        acc.add("q", (1, 1, 1))
    with pytest.raises(ValueError, match="value nan in column 0 is not a finite number"):
        acc.add("q", (float("nan"), 1))
    with pytest.raises(ValueError, match="width must be at least 1"):
        m.ClusterSums(0)
    assert acc.n_items == 0 and len(acc) == 0


def test_tables_in_every_form_give_the_same_totals_and_intervals():
    # Five clusters: (2, 2), (0, 1), and (1, 1) three times. Totals: 2+0+3 = 5, 2+1+3 = 6.
    plain = np.array([[2, 2], [0, 1], [1, 1], [1, 1], [1, 1]], dtype=float)
    weighted = (np.array([[2, 2], [0, 1], [1, 1]], dtype=float), np.array([1, 1, 3]))
    acc = m.ClusterSums(2)
    for key, row in [("q", (1, 1)), ("q", (1, 1)), ("r", (0, 1))] + [(None, (1, 1))] * 3:
        acc.add(key, row)
    for table in (plain, weighted, acc):
        assert m.column_totals(table).tolist() == [5.0, 6.0]
        assert h.estimate(table, m.ratio(0, 1)) == pytest.approx(5 / 6)
    intervals = {m.bootstrap_ci(t, m.ratio(0, 1), samples=200) for t in (plain, weighted, acc)}
    assert len(intervals) == 1  # the same distinct rows and multiplicities: the same draws
    with pytest.raises(ValueError, match="2-D array"):
        m.as_table(np.zeros(3))
    with pytest.raises(ValueError, match="one weight per row"):
        m.as_table((np.zeros((3, 2)), np.ones(2)))
    empty = m.ClusterSums(3)
    assert m.column_totals(empty).tolist() == [0.0, 0.0, 0.0]
    assert h.estimate(empty, m.f1_ratio(0, 1, 2)) == 0.0
    assert m.bootstrap_ci(empty, m.f1_ratio(0, 1, 2)) == (0.0, 0.0)


def test_safe_ratio_and_ready_made_statistics():
    assert m.safe_ratio(np.array([1.0, 2.0, 0.0]), np.array([4.0, 0.0, 0.0])).tolist() == [0.25, 0.0, 0.0]
    totals = np.array([[3.0, 4.0, 6.0], [0.0, 0.0, 0.0]])
    assert m.ratio(0, 1)(totals).tolist() == [0.75, 0.0]
    # F1 = 2*3 / (4 + 6) = 0.6; all zero -> 0
    assert m.f1_ratio(0, 1, 2)(totals).tolist() == pytest.approx([0.6, 0.0])


# ---------------------------------------------------------------------------- bootstrap


def _exact_percentile(outcomes: list[float], q: float) -> float:
    """The q-quantile of equally likely outcomes: the smallest value whose cumulative
    share reaches q (the limit of the percentile bootstrap as samples grow, when no share
    sits exactly on q)."""
    ordered = sorted(outcomes)
    return ordered[math.ceil(q * len(ordered)) - 1]


def test_interval_matches_an_exact_enumeration_of_all_resamples():
    # Three singleton items with values 0, 1 and 3. Drawing 3 of 3 with replacement gives
    # 3^3 = 27 equally likely sequences; their sums (multiset: sum, sequences):
    #   000:0 x1, 001:1 x3, 011:2 x3, 003:3 x3, 111:3 x1, 013:4 x6, 113:5 x3, 033:6 x3, 133:7 x3, 333:9 x1
    # so the sum's cumulative counts are 0:1, 1:4, 2:7, 3:11, 4:17, 5:20, 6:23, 7:26, 9:27.
    #   95%: 2.5% point: 1/27 = 0.037 >= 0.025 -> sum 0;  97.5% point: 26/27 = 0.963 < 0.975 -> 9
    #   90%: 5% point: 1/27 < 0.05, 4/27 >= 0.05 -> sum 1;  95% point: 26/27 >= 0.95 -> 7
    # Mean = sum / 3: 95% CI [0, 3] (width 3), 90% CI [1/3, 7/3] (width 2).
    enumerated = [sum(draw) / 3 for draw in itertools.product([0.0, 1.0, 3.0], repeat=3)]
    assert len(enumerated) == 27
    assert (_exact_percentile(enumerated, 0.025), _exact_percentile(enumerated, 0.975)) == (0.0, 3.0)
    assert (_exact_percentile(enumerated, 0.05), _exact_percentile(enumerated, 0.95)) == (1 / 3, 7 / 3)

    acc = m.ClusterSums(2)
    for v in (0, 1, 3):
        acc.add(None, (v, 1))
    # The nearest cumulative share to a percentile point is 0.012 away (0.037 vs 0.025 and
    # 0.05; 0.963 vs 0.975 and 0.95); with 20,000 samples a share's standard error is
    # sqrt(0.037 * 0.963 / 20000) = 0.0013, so each end is 9 errors from changing atom.
    ci95 = m.bootstrap_ci(acc, m.ratio(0, 1), samples=20_000)  # default confidence: 0.95
    ci90 = m.bootstrap_ci(acc, m.ratio(0, 1), samples=20_000, confidence=0.90)
    assert ci95 == pytest.approx((0.0, 3.0), abs=1e-12)
    assert ci90 == pytest.approx((1 / 3, 7 / 3), abs=1e-12)
    assert ci95[1] - ci95[0] == pytest.approx(3.0) and ci90[1] - ci90[0] == pytest.approx(2.0)


def test_f1_interval_matches_an_exact_enumeration():
    # Three clusters, columns (tp, predicted positive, gold positive): a true positive
    # (1, 1, 1), a false positive (0, 1, 0), a false negative (0, 0, 1). A resample with
    # a TPs and b FPs, c FNs (a + b + c = 3) has F1 = 2a / (2a + b + c) = 2a / (a + 3):
    # 0, 1/2, 4/5, 1 for a = 0..3, a ~ Binomial(3, 1/3): shares 8, 12, 6, 1 of 27,
    # cumulative 8/27 = 0.30, 20/27 = 0.74, 26/27 = 0.963, 1.
    #   95%: low 0 (0.30 >= 0.025); high: 0.963 < 0.975 -> 1.   90%: low 0; high: 0.963 >= 0.95 -> 0.8.
    # Point value: 2*1 / (1 + 3) ... TP 1, predicted 2, gold 2: 2/(2 + 2) = 0.5.
    rows = [(1, 1, 1), (0, 1, 0), (0, 0, 1)]
    enumerated = []
    for draw in itertools.product(rows, repeat=3):
        tp, predicted, gold = (sum(col) for col in zip(*draw, strict=True))
        enumerated.append(2 * tp / (predicted + gold))
    assert (_exact_percentile(enumerated, 0.025), _exact_percentile(enumerated, 0.975)) == (0.0, 1.0)
    assert (_exact_percentile(enumerated, 0.05), _exact_percentile(enumerated, 0.95)) == (0.0, 0.8)

    acc = m.ClusterSums(3)
    for i, row in enumerate(rows):
        acc.add(f"q{i}", row)
    f1 = m.f1_ratio(0, 1, 2)
    assert h.estimate(acc, f1) == 0.5
    # Nearest share to a percentile point: 1/27 = 0.037 vs 0.025 and 0.05 (see above).
    both = m.bootstrap_cis(acc, {"f1": f1, "precision": m.ratio(0, 1)}, samples=20_000)
    assert both["f1"] == pytest.approx((0.0, 1.0), abs=1e-12)
    assert m.bootstrap_ci(acc, f1, samples=20_000, confidence=0.90) == pytest.approx((0.0, 0.8), abs=1e-12)
    # precision = a / (a + b): 0 when a = 0 (share 8/27 >= 0.025), 1 when b = 0 < a: shares
    # (a, b) = (1, 0): 3 (c = 2), (2, 0): 3, (3, 0): 1 of 27 = 7/27 = 0.26 > 0.025 -> high 1.
    assert both["precision"] == pytest.approx((0.0, 1.0), abs=1e-12)


# Bin(n, 1/2) and Bin(100, 0.3) quantiles (scipy.stats.binom, worked once, written here):
#   Bin(100, .5): P(X<=39) = 0.0176, P(X<=40) = 0.0284, P(X<=59) = 0.9716, P(X<=60) = 0.9824 -> 40, 60
#   Bin(200, .5): P(X<=85) = 0.0200, P(X<=86) = 0.0280, P(X<=113) = 0.9720, P(X<=114) = 0.9800 -> 86, 114
#   Bin(100, .3): P(X<=20) = 0.0165, P(X<=21) = 0.0288, P(X<=38) = 0.9660, P(X<=39) = 0.9790 -> 21, 39
# The bootstrap of a 0/1 mean over k clusters is exactly Bin(k, p)/k; with 4,000 samples an
# empirical share's standard error is at most 0.008, so each end lands within one atom
# (1/k) of the exact quantile unless a share is off by over 5 errors (P(X<=38) = 0.0105 vs
# 0.025 for Bin(100, .5) is the closest such margin: 0.0145 / sqrt(.025*.975/4000) = 5.9).
SAMPLES = 4000


def test_clustered_interval_is_wider_and_matches_the_binomial():
    # 100 sources, two items each with the same outcome: 50 right sources, 50 wrong.
    clustered = m.ClusterSums(2)
    unclustered = m.ClusterSums(2)
    for source in range(100):
        for _ in range(2):
            clustered.add(f"s{source}", (source % 2, 1))
            unclustered.add(None, (source % 2, 1))
    acc = m.ratio(0, 1)
    lo_c, hi_c = m.bootstrap_ci(clustered, acc, samples=SAMPLES)
    lo_u, hi_u = m.bootstrap_ci(unclustered, acc, samples=SAMPLES)
    assert abs(lo_c - 0.40) <= 0.01 and abs(hi_c - 0.60) <= 0.01  # Bin(100, .5)/100
    assert abs(lo_u - 0.43) <= 0.005 and abs(hi_u - 0.57) <= 0.005  # Bin(200, .5)/200: 86/200, 114/200
    assert (hi_c - lo_c) > (hi_u - lo_u) + 0.02  # at least 0.18 against at most 0.15
    # The same data as a plain array of cluster sums, with a unique extra column so every
    # row is distinct: the index-drawing path of the bootstrap, same distribution.
    distinct = np.array([[2 * (s % 2), 2, s] for s in range(100)], dtype=float)
    lo_d, hi_d = m.bootstrap_ci(distinct, acc, samples=SAMPLES)
    assert abs(lo_d - 0.40) <= 0.01 and abs(hi_d - 0.60) <= 0.01


def test_interval_agrees_with_wald_and_wilson_for_a_large_sample():
    # 10,000 independent items, 3,000 right. Closed forms (z = 1.959964):
    #   Wald: 0.3 -+ z*sqrt(0.3*0.7/10000) = 0.3 -+ 0.0089817 -> [0.29102, 0.30898]
    #   Wilson: [0.29110, 0.30906]
    # At this size the bootstrap distribution is normal to within the skew term (~1e-5).
    # Tolerance: the Monte Carlo error of a 2.5% end with the report's 1,000 samples is
    # sqrt(0.025*0.975/1000) / (phi(z)/0.0045826) = 0.00039; 0.0016 is four of those.
    acc = m.ClusterSums(2)
    for i in range(10_000):
        acc.add(None, (i % 10 < 3, 1))
    lo, hi = m.bootstrap_ci(acc, m.ratio(0, 1))
    assert lo == pytest.approx(0.29102, abs=0.0016) and hi == pytest.approx(0.30898, abs=0.0016)
    assert lo == pytest.approx(0.29110, abs=0.0016) and hi == pytest.approx(0.30906, abs=0.0016)
    lo90, hi90 = m.bootstrap_ci(acc, m.ratio(0, 1), confidence=0.90)
    # 90% Wald half-width: 1.644854 * 0.0045826 = 0.0075377 (vs 0.0089817 at 95%)
    assert (hi90 - lo90) == pytest.approx(2 * 0.0075377, abs=0.0016)
    assert (hi90 - lo90) < (hi - lo)


def test_bootstrap_is_seeded_order_free_and_independent_of_chunking():
    rng = np.random.default_rng(5)
    sources = [f"s{int(x)}" for x in rng.integers(0, 300, 2000)]
    scores = rng.integers(0, 5, 2000) / 4  # quarters: sums are exact in any order
    acc, shuffled = m.ClusterSums(2), m.ClusterSums(2)
    for s, v in zip(sources, scores, strict=True):
        acc.add(s, (v, 1))
    for i in rng.permutation(2000):
        shuffled.add(sources[i], (scores[i], 1))
    base = m.resample_totals(acc, samples=50, seed=3)
    assert base.shape == (50, 2)
    assert np.allclose(base, m.resample_totals(shuffled, samples=50, seed=3))
    assert np.array_equal(base, m.resample_totals(acc, samples=50, seed=3, draw_budget=1))
    assert not np.allclose(base, m.resample_totals(acc, samples=50, seed=4))
    # Every resample draws as many clusters as there are, so items drawn vary around 2000.
    assert base[:, 1].min() != base[:, 1].max()
    few_kinds = m.ClusterSums(2)
    for i in range(500):
        few_kinds.add(None, (i % 2, 1))
    chunked = m.resample_totals(few_kinds, samples=50, seed=3, draw_budget=1)
    assert np.array_equal(m.resample_totals(few_kinds, samples=50, seed=3), chunked)
    assert np.all(chunked[:, 1] == 500)  # 500 singletons drawn each time


def test_bootstrap_mean_ci_wrapper():
    values = [1.0] * 60 + [0.0] * 40
    a = h.bootstrap_mean_ci(values, seed=7)
    assert a == h.bootstrap_mean_ci(values, seed=7)
    assert a != h.bootstrap_mean_ci(values, seed=8)
    # Bin(100, 0.6)/100: exact 2.5% and 97.5% points 0.50 and 0.69 (one atom of slack each way)
    assert 0.49 <= a[0] <= 0.51 and 0.68 <= a[1] <= 0.70
    pairs = [1.0, 1.0] * 50 + [0.0, 0.0] * 50
    clustered = h.bootstrap_mean_ci(pairs, [i // 2 for i in range(200)], samples=SAMPLES)
    assert abs(clustered[0] - 0.40) <= 0.01 and abs(clustered[1] - 0.60) <= 0.01
    assert h.bootstrap_mean_ci([]) == (0.0, 0.0)
    with pytest.raises(ValueError, match="3 values but 2 cluster keys"):
        h.bootstrap_mean_ci([1, 0, 1], ["a", "b"])
    with pytest.raises(ValueError, match="confidence must be between 0 and 1"):
        h.bootstrap_mean_ci(values, confidence=95)


# ---------------------------------------------------------------------------- two runs


def _runs(a_right: set[int], b_right: set[int], n: int = 100, clusters: bool = False):
    a, b = m.ItemTable(2), m.ItemTable(2)
    for i in range(n):
        a.add(i, f"s{i // 2}" if clusters else None, (i in a_right, 1))
    for i in reversed(range(n)):  # another order: pairing is by item id
        b.add(i, f"s{i // 2}" if clusters else None, (i in b_right, 1))
    return m.pair_runs(a, b)


def test_pairing_hand_counts():
    # Items 0..5 in sources s0 = {0, 1}, s1 = {2, 3}, s2 = {4, 5}.
    # A right on 0, 1, 2; B right on 0, 3, 4, 5.
    pairing = _runs({0, 1, 2}, {0, 3, 4, 5}, n=6, clusters=True)
    assert pairing.n_clusters == 3
    sums_a, sums_b = pairing.cluster_sums()
    assert sums_a.tolist() == [[2, 2], [1, 2], [0, 2]]
    assert sums_b.tolist() == [[1, 2], [1, 2], [2, 2]]
    # b: right in A only: items 1, 2; c: right in B only: items 3, 4, 5
    assert pairing.discordant() == (2, 3)


def test_paired_interval_excludes_zero_when_one_run_dominates():
    # A right on items 0..49; B right on those and 50..79: B - A per item is 1 on 30 items
    # and 0 on 70, so the paired bootstrap of the difference is exactly Bin(100, .3)/100:
    # 2.5% and 97.5% points 0.21 and 0.39 (see the quantile table above).
    pairing = _runs(set(range(50)), set(range(80)))
    sums_a, sums_b = pairing.cluster_sums()
    acc = m.ratio(0, 1)
    assert h.estimate(sums_b, acc) - h.estimate(sums_a, acc) == pytest.approx(0.3)
    lo, hi = h.paired_difference_ci(sums_a, sums_b, acc, samples=SAMPLES)
    assert abs(lo - 0.21) <= 0.01 and abs(hi - 0.39) <= 0.01
    assert lo > 0
    # Unpaired, each run varies on its own: sd sqrt(.5*.5/100 + .8*.2/100) = 0.064, a 95%
    # width near 3.92 * 0.064 = 0.25 against the paired ~0.18.
    ulo, uhi = m.unpaired_difference_ci(sums_a, sums_b, acc, samples=SAMPLES)
    assert (uhi - ulo) > (hi - lo) + 0.03
    assert abs((uhi - ulo) - 0.25) <= 0.03
    # McNemar: b = 0, c = 30: p = 2 * P(X <= 0) = 2 / 2^30 = 1.862645e-9
    assert pairing.discordant() == (0, 30)
    assert m.mcnemar_exact(0, 30) == pytest.approx(2 / 2**30, rel=1e-12)


def test_paired_interval_contains_zero_when_runs_agree():
    # A right on 0..59, B on 10..69: they disagree on 10 items each way.
    pairing = _runs(set(range(60)), set(range(10, 70)))
    sums_a, sums_b = pairing.cluster_sums()
    acc = m.ratio(0, 1)
    lo, hi = h.paired_difference_ci(sums_a, sums_b, acc, samples=SAMPLES)
    assert lo < 0 < hi
    assert pairing.discordant() == (10, 10)
    assert m.mcnemar_exact(10, 10) == 1.0
    # The same run twice: identical draws for both, so every resampled difference is 0.
    same = _runs(set(range(60)), set(range(60)))
    assert m.paired_difference_cis(*same.cluster_sums(), {"acc": acc}) == {"acc": (0.0, 0.0)}


def test_pair_runs_repeats_and_loose_items():
    a, b = m.ItemTable(1), m.ItemTable(1)
    # Item 7 has two rollouts in each run (they pair in order), item 8 one; no clusters,
    # so item 7's rollouts form one cluster and item 8 another.
    for item, v in [(7, 1), (8, 0), (7, 0)]:
        a.add(item, None, (v,))
    for item, v in [(8, 1), (7, 0), (7, 0)]:
        b.add(item, None, (v,))
    pairing = m.pair_runs(a, b)
    assert pairing.n_clusters == 2
    assert pairing.rows_a[:, 0].tolist() == [1, 0, 0] and pairing.rows_b[:, 0].tolist() == [0, 0, 1]
    sums_a, sums_b = pairing.cluster_sums()
    assert sums_a.tolist() == [[1], [0]] and sums_b.tolist() == [[0], [1]]
    assert pairing.discordant() == (1, 1)


def test_pair_runs_rejects_runs_that_do_not_match():
    a, b = m.ItemTable(1), m.ItemTable(1)
    a.add(1, "s1", (1,))
    a.add(2, "s1", (1,))
    b.add(1, "s1", (1,))
    with pytest.raises(ValueError, match="different items"):
        m.pair_runs(a, b)
    b.add(2, "s2", (1,))
    with pytest.raises(ValueError, match="item 2 is in cluster 's1' in the first run but in cluster 's2'"):
        m.pair_runs(a, b)
    c = m.ItemTable(1)
    c.add(1, "s1", (1,))
    c.add(2, None, (0.5,))
    with pytest.raises(ValueError, match="item 2 is in cluster 's1' in the first run but in no cluster"):
        m.pair_runs(a, c)
    d = m.ItemTable(1)
    d.add(1, "s1", (1,))
    d.add(2, "s1", (0.5,))
    with pytest.raises(ValueError, match=r"McNemar needs a 0/1 column; found 0\.5"):
        m.pair_runs(a, d).discordant()
    with pytest.raises(TypeError, match="not an integer"):
        d.add("3", None, (1,))
    with pytest.raises(ValueError, match="aligned 2-D arrays"):
        h.paired_difference_ci(np.zeros((3, 2)), np.zeros((2, 2)), m.ratio(0, 1))


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        (1, 5, 2 * (1 + 6) / 64),  # n 6: P(X<=1) = (C(6,0) + C(6,1)) / 2^6 = 7/64 -> 0.21875
        (5, 1, 0.21875),  # symmetric in b and c
        (0, 5, 2 / 32),  # P(X<=0) = 1/32 -> 0.0625
        (2, 8, 2 * (1 + 10 + 45) / 1024),  # n 10: 56/1024 -> 0.109375
        (0, 10, 2 / 1024),  # 0.001953125
        (3, 3, 1.0),  # b = c: 2 * P(X<=3) for n 6 = 2 * 42/64 > 1 -> capped at 1
        (0, 1, 1.0),  # 2 * 1/2 = 1
        (0, 0, 1.0),  # no discordant items: no evidence either way
        (500_000, 500_000, 1.0),
    ],
)
def test_mcnemar_exact_hand_values(b: int, c: int, p: float):
    assert m.mcnemar_exact(b, c) == pytest.approx(p, rel=1e-12)


@pytest.mark.parametrize(("b", "c"), [(499_000, 501_000), (490_000, 510_000), (4_999, 5_200), (20, 30)])
def test_mcnemar_exact_large_counts_match_scipy(b: int, c: int):
    # Independent: scipy's exact binomial test (incomplete beta). Ours sums in log space
    # after lgamma(10^6), whose rounding (1.3e7 * 2.2e-16 = 3e-9) bounds the agreement.
    assert m.mcnemar_exact(b, c) == pytest.approx(binomtest(min(b, c), b + c, 0.5).pvalue, rel=1e-7)
    assert 0 < m.mcnemar_exact(b, c) < 1
    assert m.mcnemar_exact(0, 1_000_000) == 0.0  # 2^-999999 underflows: honestly 0


def test_mcnemar_rejects_bad_counts():
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="non-negative integer"):
            m.mcnemar_exact(bad, 3)
