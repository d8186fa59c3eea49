"""Metrics shared by every benchmark report.

Pure functions over plain sequences/arrays. Conventions: a division by zero yields 0.0
(as scikit-learn with `zero_division=0`); INVALID and ERROR are prediction columns of
the confusion matrix, never dropped rows; confidence intervals are percentile bootstrap
intervals, seeded, resampling whole clusters when items share a source (so two items
made from one question move together).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

import numpy as np

INVALID = "INVALID"
"""Prediction column for a reply that could not be parsed."""
ERROR = "ERROR"
"""Prediction column for a rollout that errored before it produced a reply."""

BOOTSTRAP_SAMPLES = 1000
BOOTSTRAP_SEED = 0
CONFIDENCE = 0.95


def safe_div(num: float, den: float) -> float:
    return float(num) / float(den) if den else 0.0


def mean(values: Sequence[float]) -> float:
    return safe_div(sum(values), len(values))


def prf(gold: Sequence[Hashable], pred: Sequence[Hashable], positive: Hashable) -> dict[str, float]:
    """Precision, recall and F1 of one class, with its support (gold count)."""
    tp = sum(1 for g, p in zip(gold, pred) if g == positive and p == positive)
    predicted = sum(1 for p in pred if p == positive)
    support = sum(1 for g in gold if g == positive)
    precision = safe_div(tp, predicted)
    recall = safe_div(tp, support)
    f1 = safe_div(2 * precision * recall, precision + recall)
    return {"precision": precision, "recall": recall, "f1": f1, "support": support}


def per_class_prf(
    gold: Sequence[Hashable], pred: Sequence[Hashable], classes: Sequence[Hashable]
) -> dict[Hashable, dict[str, float]]:
    return {c: prf(gold, pred, c) for c in classes}


def macro_f1(gold: Sequence[Hashable], pred: Sequence[Hashable], classes: Sequence[Hashable]) -> float:
    return mean([prf(gold, pred, c)["f1"] for c in classes])


def confusion(
    gold: Sequence[Hashable],
    pred: Sequence[Hashable],
    classes: Sequence[Hashable],
    extra_columns: Sequence[Hashable] = (INVALID, ERROR),
) -> dict[Hashable, dict[Hashable, int]]:
    """Rows are gold classes, columns the classes plus `extra_columns`. A prediction
    outside every column raises, so nothing is silently lost from the matrix."""
    columns = [*classes, *extra_columns]
    matrix = {g: {c: 0 for c in columns} for g in classes}
    for g, p in zip(gold, pred):
        if g not in matrix:
            raise ValueError(f"gold label {g!r} is not one of {list(classes)}")
        if p not in matrix[g]:
            raise ValueError(f"prediction {p!r} is not one of {columns}")
        matrix[g][p] += 1
    return matrix


def _cluster_index(n: int, clusters: Sequence[Hashable] | None) -> list[np.ndarray]:
    if clusters is None:
        return [np.array([i]) for i in range(n)]
    groups: dict[Hashable, list[int]] = {}
    for i, key in enumerate(clusters):
        groups.setdefault(key, []).append(i)
    return [np.array(members) for members in groups.values()]


def bootstrap_mean_ci(
    values: Sequence[float],
    clusters: Sequence[Hashable] | None = None,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """Percentile CI of the mean. Resamples clusters (ratio estimator: sum over drawn
    clusters / items in them), vectorised in chunks so 10^5 items stay cheap."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return (0.0, 0.0)
    if clusters is None:
        sums, counts = x, np.ones_like(x)
    else:
        _, inverse = np.unique(np.asarray(clusters, dtype=object).astype(str), return_inverse=True)
        sums = np.bincount(inverse, weights=x)
        counts = np.bincount(inverse).astype(float)
    k = sums.size
    rng = np.random.default_rng(seed)
    stats = np.empty(samples)
    chunk = max(1, min(samples, 2_000_000 // max(k, 1)))
    for start in range(0, samples, chunk):
        stop = min(samples, start + chunk)
        draw = rng.integers(0, k, size=(stop - start, k))
        stats[start:stop] = sums[draw].sum(axis=1) / counts[draw].sum(axis=1)
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(stats, [tail, 100 - tail])
    return (float(lo), float(hi))


def bootstrap_ci(
    statistic: Callable[[np.ndarray], float],
    n: int,
    clusters: Sequence[Hashable] | None = None,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """Percentile CI of any statistic of an index array (e.g. an F1), resampling clusters."""
    if n == 0:
        return (0.0, 0.0)
    members = _cluster_index(n, clusters)
    rng = np.random.default_rng(seed)
    stats = []
    for _ in range(samples):
        drawn = rng.integers(0, len(members), size=len(members))
        stats.append(statistic(np.concatenate([members[i] for i in drawn])))
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(stats, [tail, 100 - tail])
    return (float(lo), float(hi))
