"""Label lists and plain tables as the tests write them, turned into the forms
`medhal.reports.metrics` takes (reports stream (gold, predicted) counts and cluster sums), and
the library called on them: nothing here computes a figure itself."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np

from medhal.reports import metrics as m


def pairs(gold: Sequence[Hashable], pred: Sequence[Hashable]) -> Counter[tuple[Hashable, Hashable]]:
    """(gold, predicted) counts of two label lists of the same length."""
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold labels but {len(pred)} predictions")
    return Counter(zip(gold, pred, strict=True))


def per_class_prf(
    gold: Sequence[Hashable], pred: Sequence[Hashable], classes: Sequence[Hashable]
) -> dict[Hashable, dict[str, float]]:
    return m.per_class_prf_from_pairs(pairs(gold, pred), classes)


def prf(gold: Sequence[Hashable], pred: Sequence[Hashable], positive: Hashable) -> dict[str, float]:
    return per_class_prf(gold, pred, [positive])[positive]


def confusion(
    gold: Sequence[Hashable],
    pred: Sequence[Hashable],
    classes: Sequence[Hashable],
    extra_columns: Sequence[Hashable] = (m.INVALID, m.ERROR),
) -> dict[Hashable, dict[Hashable, int]]:
    return m.confusion_from_pairs(pairs(gold, pred), classes, extra_columns)


def mean(values: Iterable[float]) -> float:
    items = list(values)
    return m.safe_div(sum(items), len(items))


def estimate(table: m.Table, statistic: m.Statistic) -> float:
    """The statistic on all the data (the point value an interval goes with)."""
    return float(statistic(m.column_totals(table)[None, :])[0])


def bootstrap_mean_ci(
    values: Sequence[float], clusters: Sequence[Hashable | None] | None = None, **options: Any
) -> tuple[float, float]:
    """The interval of the mean of per-item values: each item a row (value, 1) of its cluster."""
    if clusters is not None and len(clusters) != len(values):
        raise ValueError(f"{len(values)} values but {len(clusters)} cluster keys")
    sums = m.ClusterSums(2)
    for i, v in enumerate(values):
        sums.add(clusters[i] if clusters is not None else None, (v, 1.0))
    return m.bootstrap_ci(sums, m.ratio(0, 1), **options)


def paired_difference_ci(
    sums_a: np.ndarray, sums_b: np.ndarray, statistic: m.Statistic, **options: Any
) -> tuple[float, float]:
    return m.paired_difference_cis(sums_a, sums_b, {"ci": statistic}, **options)["ci"]
