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


# ================================================================== edge cases, one by one
# Each case pins one thing a figure depends on (a seed, a sample count, a confidence level, a
# dtype, a boundary); fixtures are built so the figure under test is forced: constant columns
# give a bootstrap distribution with a single value, one resample an interval that is a point.


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


@pytest.mark.parametrize("seed", range(40))
def test_distinct_rows_are_numpys_unique_rows(seed):
    """The faster distinct rows behind every bootstrap (`distinct_rows`) give exactly
    `np.unique(axis=0)`'s rows and indices: the same draws, so the same intervals. Tables
    of a few row kinds (0/1 outcomes), continuous ones, a negative zero."""
    from medhal.reports.metrics import distinct_rows

    rng = np.random.default_rng(seed)
    n, width = int(rng.integers(1, 3000)), int(rng.integers(1, 40))
    kinds = rng.integers(0, 3, size=(int(rng.integers(1, 8)), width)).astype(float)
    rows = rng.normal(size=(n, width)) if seed % 4 == 0 else kinds[rng.integers(0, len(kinds), size=n)]
    if seed % 3 == 0:
        rows[int(rng.integers(0, n))] *= -0.0
    expected_kinds, expected_inverse = np.unique(rows, axis=0, return_inverse=True)
    found_kinds, found_inverse = distinct_rows(rows)
    assert np.array_equal(found_kinds, expected_kinds)
    assert np.array_equal(found_inverse, expected_inverse.ravel())
