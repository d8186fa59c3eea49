import numpy as np
import pytest
from sklearn.metrics import confusion_matrix, precision_recall_fscore_support

from medhal import metrics as m


def test_prf_matches_sklearn():
    rng = np.random.default_rng(3)
    classes = ["A", "B", "C"]
    gold = list(rng.choice(classes, 200))
    pred = list(rng.choice(classes + [m.INVALID], 200))
    p, r, f, s = precision_recall_fscore_support(gold, pred, labels=classes, zero_division=0)
    ours = m.per_class_prf(gold, pred, classes)
    for i, c in enumerate(classes):
        assert ours[c]["precision"] == pytest.approx(p[i])
        assert ours[c]["recall"] == pytest.approx(r[i])
        assert ours[c]["f1"] == pytest.approx(f[i])
        assert ours[c]["support"] == s[i]


def test_zero_division_is_zero():
    assert m.prf(["A"], ["B"], "C") == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 0}


def test_confusion_keeps_invalid_and_error_columns():
    gold = ["A", "A", "B", "B", "B"]
    pred = ["A", m.INVALID, "B", m.ERROR, "A"]
    cm = m.confusion(gold, pred, ["A", "B"])
    assert cm == {"A": {"A": 1, "B": 0, m.INVALID: 1, m.ERROR: 0}, "B": {"A": 1, "B": 1, m.INVALID: 0, m.ERROR: 1}}
    assert sum(sum(r.values()) for r in cm.values()) == len(gold)
    sk = confusion_matrix(gold, pred, labels=["A", "B", m.INVALID, m.ERROR])
    assert [list(r.values()) for r in cm.values()] == sk[:2].tolist()


def test_confusion_rejects_unknown_labels():
    with pytest.raises(ValueError, match="prediction 'Z'"):
        m.confusion(["A"], ["Z"], ["A"])
    with pytest.raises(ValueError, match="gold label 'Q'"):
        m.confusion(["Q"], ["A"], ["A"])


def test_bootstrap_is_seeded_and_brackets_the_mean():
    values = [1.0] * 60 + [0.0] * 40
    a = m.bootstrap_mean_ci(values, seed=7)
    assert a == m.bootstrap_mean_ci(values, seed=7)
    assert a != m.bootstrap_mean_ci(values, seed=8)
    assert a[0] < 0.6 < a[1]
    assert 0.45 < a[0] and a[1] < 0.75


def test_cluster_bootstrap_moves_clusters_together():
    # Pairs of identical outcomes: resampling pairs as units gives a wider interval than
    # pretending the 200 items are independent.
    values = [1.0, 1.0] * 50 + [0.0, 0.0] * 50
    clusters = [i // 2 for i in range(200)]
    independent = m.bootstrap_mean_ci(values)
    clustered = m.bootstrap_mean_ci(values, clusters)
    assert clustered[1] - clustered[0] > independent[1] - independent[0]


def test_generic_bootstrap_of_a_statistic_with_clusters():
    gold = np.array([1, 0] * 50)
    pred = np.array([1, 0] * 40 + [0, 1] * 10)
    stat = lambda idx: m.prf(gold[idx].tolist(), pred[idx].tolist(), 1)["f1"]
    lo, hi = m.bootstrap_ci(stat, 100, clusters=[i // 2 for i in range(100)], samples=300)
    assert lo < stat(np.arange(100)) < hi
    assert m.bootstrap_ci(stat, 0) == (0.0, 0.0)


def test_empty_inputs():
    assert m.mean([]) == 0.0
    assert m.bootstrap_mean_ci([]) == (0.0, 0.0)
