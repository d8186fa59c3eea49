"""Statistics shared by every benchmark report: counts, intervals and paired comparisons.

Conventions: a division by zero yields 0.0 (as scikit-learn with `zero_division=0`);
INVALID and ERROR are prediction columns of the confusion matrix, never dropped rows;
intervals are seeded percentile bootstrap intervals that resample whole clusters (items
made from one source question move together), because items from one source are not
independent and treating them so makes intervals too narrow.

Why sufficient statistics: every figure a report gives an interval for (an accuracy, a
rate, an F1) is a function of a few column totals (correct / items; 2·TP / (predicted
positives + gold positives)). A cluster bootstrap only needs each cluster's column sums,
so a report streams its items into a `ClusterSums` and keeps memory proportional to the
number of clusters, never to the number of rows. Items without a cluster are their own
cluster; since such singletons are exchangeable, identical ones are stored once with a
count, so an unclustered 0/1 metric costs a handful of rows however many items it has.

Public API
----------
Counts (a `Counter` of (gold, predicted) pairs, as a report keeps them while streaming):
  safe_div(num, den)                     x/y, 0.0 when y == 0.
  prf_from_counts(tp, predicted, support) Precision, recall, F1 and support of one class.
  per_class_prf_from_pairs(pairs, classes)  `prf_from_counts` for each class.
  confusion_from_pairs(pairs, classes, extra_columns=(INVALID, ERROR))  Gold x predicted
                                         counts; an unknown gold label or prediction raises.

Streaming cluster sums and the bootstrap (one implementation: `resample_totals`):
  ClusterSums(width)                     Accumulator: `add(cluster, row)` per item; `len()`
                                         is the number of clusters, `table()` the weighted
                                         rows the bootstrap reads.
  Statistic                              A vectorised function of column totals: takes an
                                         (n, width) array, returns (n,).
  ratio(num, den), f1_ratio(tp, predicted, gold), safe_ratio(num, den)
                                         Ready-made statistics / their arithmetic.
  as_table(table), column_totals(table)  A table as (rows, weights); its column totals.
  resample_totals(table, samples=, seed=)  The core: column totals of `samples` cluster
                                         bootstrap resamples, shape (samples, width). Every
                                         interval below is computed from it, so statistics
                                         computed from one call share their draws.
  percentile_interval(values, confidence)  Percentile interval of a bootstrap distribution.
  bootstrap_ci(table, statistic, ...)    Percentile CI of one statistic.
  bootstrap_cis(table, {name: statistic}, ...)  Several statistics on the same draws.

Comparing two runs:
  ItemTable(width)                       Per-item rows of one run, kept compactly (about
                                         8·(2 + width) bytes per item) so two runs can be
                                         joined item by item; `add(item, cluster, row)`.
  pair_runs(a, b) -> Pairing             Joins two runs over the same items (same clusters).
  Pairing.cluster_sums()                 Aligned per-cluster sums (row i = same cluster).
  Pairing.discordant(column)             McNemar's (b, c) from a 0/1 column.
  Pairing.signs(column)                  (items A above B, items A below B): a sign test's counts.
  ItemTable.means()                      One row per item, the mean of its rollouts' rows.
  paired_difference_cis(sums_a, sums_b, {name: statistic}, ...)  CIs of statistic(B) -
                                         statistic(A) with identical cluster draws for both runs.
  unpaired_difference_ci(table_a, table_b, statistic, ...)  Independent draws, for runs
                                         over different items.
  mcnemar_exact(b, c)                    Exact two-sided McNemar p-value (binomial, p = 1/2),
                                         numerically stable for b + c up to 10^6 and beyond.

numpy and the standard library only (no scipy at run time); the statistics an environment
declares (`ratio`, `f1_ratio`, `safe_ratio`, `Statistic`) are the kit's (`medhal.kit.report_spec`).
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from medhal.kit.report_spec import Statistic as Statistic
from medhal.kit.report_spec import f1_ratio as f1_ratio
from medhal.kit.report_spec import ratio as ratio
from medhal.kit.report_spec import safe_ratio as safe_ratio

INVALID = "INVALID"
"""Prediction column for a reply that could not be parsed."""
ERROR = "ERROR"
"""Prediction column for a rollout that errored before it produced a reply."""

BOOTSTRAP_SAMPLES = 1000
BOOTSTRAP_SEED = 0
CONFIDENCE = 0.95
DRAW_BUDGET = 1 << 20
"""Most cluster draws (or multinomial cells) held at once: bounds the bootstrap's scratch
memory to a few tens of MiB whatever the number of clusters."""
MAX_SINGLETON_KINDS = 4096
"""Distinct rows of cluster-less items stored once with a count; further distinct rows
(e.g. a continuous score) are stored one row per item, so a dict never outgrows an array."""


# ---------------------------------------------------------------------------- counts


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The unbiased estimator of pass^k (all k of k samples right; Yao et al. 2024's
    tau-bench) from n samples of which c are right: C(c, k) / C(n, k), the chance that k
    samples drawn without replacement are all right. pass^1 is c / n, as pass@1; pass^k
    falls with k where pass@k rises, so the two together say how reliably a model gets a
    task right, not only whether it can."""
    return math.comb(c, k) / math.comb(n, k)


def per_task_estimate(
    tasks: Mapping[tuple[int, int], int], ks: Iterable[int], estimator: Callable[[int, int, int], float]
) -> dict[str, float]:
    """`estimator(n, c, k)` averaged over tasks, for each k, over the tasks with at least k
    samples (`tasks`: how many tasks have n samples of which c are right). A k no task
    reaches has no value."""
    out: dict[str, float] = {}
    for k in ks:
        usable = [(nc, w) for nc, w in tasks.items() if nc[0] >= k]
        weight = sum(w for _, w in usable)
        if weight:
            out[str(k)] = sum(estimator(n, c, k) * w for (n, c), w in usable) / weight
    return out


def safe_div(num: float, den: float) -> float:
    return float(num) / float(den) if den else 0.0


def prf_from_counts(tp: int, predicted: int, support: int) -> dict[str, float]:
    """Precision, recall and F1 of one class from its true positives, predicted count and
    gold count (support). F1 = 2·TP / (predicted + support), the harmonic mean of P and R."""
    return {
        "precision": safe_div(tp, predicted),
        "recall": safe_div(tp, support),
        "f1": safe_div(2 * tp, predicted + support),
        "support": support,
    }


def per_class_prf_from_pairs(
    pairs: Mapping[tuple[Hashable, Hashable], int], classes: Sequence[Hashable]
) -> dict[Hashable, dict[str, float]]:
    """`prf_from_counts` for each class from counts of (gold, predicted) pairs, the form a
    report can keep while streaming (memory: one entry per distinct pair)."""
    predicted: Counter[Hashable] = Counter()
    support: Counter[Hashable] = Counter()
    for (g, p), n in pairs.items():
        predicted[p] += n
        support[g] += n
    return {c: prf_from_counts(pairs.get((c, c), 0), predicted[c], support[c]) for c in classes}


def confusion_from_pairs(
    pairs: Mapping[tuple[Hashable, Hashable], int],
    classes: Sequence[Hashable],
    extra_columns: Sequence[Hashable] = (INVALID, ERROR),
) -> dict[Hashable, dict[Hashable, int]]:
    """Rows are gold classes, columns the classes plus `extra_columns`. A prediction
    outside every column raises, so nothing is silently lost from the matrix."""
    columns = [*classes, *extra_columns]
    matrix = {g: dict.fromkeys(columns, 0) for g in classes}
    for (g, p), n in pairs.items():
        if g not in matrix:
            raise ValueError(f"gold label {g!r} is not one of {list(classes)}")
        if p not in matrix[g]:
            raise ValueError(f"prediction {p!r} is not one of {columns}")
        matrix[g][p] += n
    return matrix


# ---------------------------------------------------------------------------- cluster sums


def _finite_row(row: Sequence[float], width: int, where: object) -> tuple[float, ...]:
    values = tuple(map(float, row))
    if len(values) != width:
        raise ValueError(f"{where}: row has {len(values)} values, expected {width}")
    if not all(map(math.isfinite, values)):
        j = next(j for j, v in enumerate(values) if not math.isfinite(v))
        raise ValueError(f"{where}: value {values[j]!r} in column {j} is not a finite number")
    return values


class ClusterSums:
    """Per-cluster column sums of a stream of items: what a cluster bootstrap needs and
    nothing more, so memory grows with the number of clusters, not of items.

    `add(cluster, row)` once per item, or `add_rows(clusters, rows)` for many at once;
    `row` is a fixed-width vector of numbers (e.g. `[correct, 1]` for an accuracy;
    `[tp, predicted_pos, gold_pos, kept]` for an F1). Items with `cluster=None` are
    clusters of one. Keyed sums live in one flat float array (amortised growth), keys map
    to row numbers; identical cluster-less rows are stored once with a count (up to
    `max_singleton_kinds` distinct ones).

    Why batches: a report adds every item to several of these, with rows of up to a
    hundred columns, and summing them in Python one value at a time was most of its cost.
    `add` checks the row at once (a bad row raises where it is added) and queues it; every
    `PENDING` items, and before anything is read, the queue goes through `add_rows`, which
    sums with numpy in arrival order (`np.add.at`: the same additions in the same order as
    one at a time, so the sums are bit for bit those of unbatched adds)."""

    PENDING = 2048
    """Items `add` queues before summing them (bounds the queue's memory)."""

    def __init__(self, width: int, *, max_singleton_kinds: int = MAX_SINGLETON_KINDS) -> None:
        if width < 1:
            raise ValueError(f"width must be at least 1, got {width}")
        self.width = width
        self._n_items = 0
        self._max_kinds = max_singleton_kinds
        self._index: dict[Hashable, int] = {}
        self._sums = array("d")
        """Row-major (rows, width): keyed clusters, then cluster-less rows past the kinds cap."""
        self._singletons: dict[bytes, int] = {}
        """Distinct cluster-less rows (their float64 bytes) -> how many items had them."""
        self._n_singletons = 0
        self._pending_clusters: list[Hashable | None] = []
        self._pending_rows: list[Sequence[float]] = []

    def add(self, cluster: Hashable | None, row: Sequence[float]) -> None:
        try:
            # One C-level sum tells a finite row from one holding NaN or an infinity (a sum
            # that overflows is checked value by value below, and passes).
            clean = len(row) == self.width and math.isfinite(sum(row))
        except TypeError:
            clean = False
        if not clean:
            row = _finite_row(row, self.width, f"cluster {cluster!r}")
        self._pending_clusters.append(cluster)
        self._pending_rows.append(row)
        if len(self._pending_rows) >= self.PENDING:
            self._flush()

    def _flush(self) -> None:
        if self._pending_rows:
            clusters, rows = self._pending_clusters, self._pending_rows
            self._pending_clusters, self._pending_rows = [], []
            self._add_checked(clusters, np.array(rows, dtype=float).reshape(-1, self.width))

    def add_rows(self, clusters: Sequence[Hashable | None], rows: np.ndarray) -> None:
        """`add(clusters[i], rows[i])` for every i, in order, at numpy speed. Checked
        first: nothing is added when a row is not finite or the shapes do not match."""
        rows = np.asarray(rows, dtype=float)
        if rows.ndim != 2 or rows.shape[1] != self.width or len(rows) != len(clusters):
            raise ValueError(
                f"rows must be ({len(clusters)}, {self.width}) to match the clusters and the width, "
                f"got {rows.shape}"
            )
        bad = ~np.isfinite(rows)
        if bad.any():
            r, j = (int(k) for k in np.argwhere(bad)[0])
            raise ValueError(
                f"cluster {clusters[r]!r}: value {float(rows[r, j])!r} in column {j} is not a finite number"
            )
        self._flush()
        self._add_checked(clusters, rows)

    def _add_checked(self, clusters: Sequence[Hashable | None], rows: np.ndarray) -> None:
        n = len(rows)
        self._n_items += n
        rows = rows + 0.0  # -0.0 becomes 0.0, so equal rows have equal bytes
        loose = np.fromiter((c is None for c in clusters), dtype=bool, count=n)
        keys: list[Any] = []
        if loose.any():
            # A cluster-less row's identity is its bytes: hashed in C, no float objects made.
            as_bytes = np.dtype((np.void, 8 * self.width))
            keys = np.ascontiguousarray(rows[loose]).view(as_bytes).ravel().tolist()
        target = np.empty(n, dtype=np.int64)
        summed = np.ones(n, dtype=bool)
        n_rows = first = len(self._sums) // self.width
        index, singletons, k = self._index, self._singletons, 0
        for r, cluster in enumerate(clusters):
            if cluster is None:
                key = keys[k]
                k += 1
                count = singletons.get(key)
                if count is not None or len(singletons) < self._max_kinds:
                    singletons[key] = (count or 0) + 1
                    summed[r] = False
                    continue
                target[r] = n_rows
                n_rows += 1
                continue
            i = index.get(cluster)
            if i is None:
                i = index[cluster] = n_rows
                n_rows += 1
            target[r] = i
        self._n_singletons += k
        if n_rows > first:
            self._sums.frombytes(bytes(8 * self.width * (n_rows - first)))
        if summed.any():
            # Flat indices: numpy's fast path for `add.at` is one-dimensional (several times
            # faster than row indices into a 2-D array); additions still go in arrival order.
            store = np.frombuffer(self._sums, dtype=float)
            flat = (target[summed][:, None] * self.width + np.arange(self.width)).ravel()
            np.add.at(store, flat, rows[summed].ravel())
            del store  # no live view: the array must stay free to grow

    def add_sums(self, clusters: Sequence[Hashable], rows: np.ndarray, items: int) -> None:
        """`add_rows` for rows that are each a cluster's sums over several items, `items`
        in all (per-cluster sums kept elsewhere, written out)."""
        self.add_rows(clusters, rows)
        self._n_items += items - len(rows)

    def add_table(self, rows: np.ndarray, weights: np.ndarray, items: int) -> None:
        """Distinct cluster rows, row r standing for `weights[r]` clusters, `items` items in
        all: held as rows with a count, as `table()` gives them back (the bootstrap reads
        a table so, whatever the order of its rows)."""
        self._flush()
        rows = np.ascontiguousarray(rows, dtype=float).reshape(-1, self.width) + 0.0
        keys: list[Any] = rows.view(np.dtype((np.void, 8 * self.width))).ravel().tolist()
        for key, weight in zip(keys, np.asarray(weights, dtype=np.int64).tolist(), strict=True):
            self._singletons[key] = self._singletons.get(key, 0) + weight
            self._n_singletons += weight
        self._n_items += items

    @property
    def n_items(self) -> int:
        """Items added."""
        return self._n_items + len(self._pending_rows)

    def __len__(self) -> int:
        """Number of clusters (keyed clusters plus cluster-less items)."""
        self._flush()
        return len(self._index) + self._n_singletons

    @property
    def stored_rows(self) -> int:
        """Rows held in memory: keyed clusters, distinct cluster-less rows and overflow."""
        self._flush()
        return len(self._sums) // self.width + len(self._singletons)

    def table(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows, weights): row r stands for `weights[r]` clusters with these column sums."""
        self._flush()
        # Copies, not views: a live view would stop the array from growing on the next add.
        keyed = np.array(self._sums, dtype=float).reshape(-1, self.width) if self._sums else None
        kinds = np.frombuffer(b"".join(self._singletons), dtype=float).reshape(-1, self.width).copy()
        counts = np.fromiter(self._singletons.values(), dtype=np.int64, count=len(self._singletons))
        if keyed is None:
            return kinds, counts
        return np.vstack([keyed, kinds]), np.concatenate([np.ones(len(keyed), dtype=np.int64), counts])

    def totals(self) -> np.ndarray:
        return column_totals(self)


Table = ClusterSums | np.ndarray | tuple[np.ndarray, np.ndarray]
"""A ClusterSums, an (clusters, width) array of cluster sums, or (rows, weights)."""


def as_table(table: Table) -> tuple[np.ndarray, np.ndarray]:
    """Any `Table` as (rows, weights): rows (r, width) floats, weights (r,) cluster counts."""
    if isinstance(table, ClusterSums):
        return table.table()
    if isinstance(table, tuple):
        rows, weights = table
        rows, weights = np.asarray(rows, dtype=float), np.asarray(weights, dtype=np.int64)
    else:
        rows = np.asarray(table, dtype=float)
        weights = np.ones(len(rows), dtype=np.int64)
    if rows.ndim != 2 or weights.shape != (len(rows),):
        raise ValueError(
            f"cluster sums must be a 2-D array (clusters, columns) with one weight per row, "
            f"got shapes {rows.shape} and {weights.shape}"
        )
    return rows, weights


def column_totals(table: Table) -> np.ndarray:
    """Column totals over all clusters, shape (width,): what point values are computed from."""
    rows, weights = as_table(table)
    totals: np.ndarray = weights @ rows
    return totals


# ---------------------------------------------------------------------------- statistics


def resample_totals(
    table: Table,
    *,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int | np.random.SeedSequence = BOOTSTRAP_SEED,
    draw_budget: int = DRAW_BUDGET,
) -> np.ndarray:
    """Column totals of `samples` cluster bootstrap resamples, shape (samples, width).

    Each resample draws K clusters with replacement out of the K clusters (K = total
    weight). Clusters with identical rows are interchangeable, so the table is first
    reduced to its distinct rows and their multiplicities; a resample is then how many
    of each distinct row it drew, a Multinomial(K, multiplicity / K) vector, and its
    totals are those counts times the rows. Few distinct rows (0/1 metrics): the counts
    are drawn directly. Many (sums of large clusters, continuous scores): K uniform
    indices per resample, tallied. Both are exactly the uniform cluster bootstrap.

    Chunked so at most `draw_budget` draws are held at once; the chunking does not change
    the draws. Seeded: the same table (in any row order) and seed give the same totals.
    (Sums that differ only by float rounding, e.g. the same items added in another order,
    can sort differently and so draw differently; the distribution is the same.)"""
    if samples < 1:
        raise ValueError(f"samples must be at least 1, got {samples}")
    rows, weights = as_table(table)
    width = rows.shape[1]
    out = np.zeros((samples, width))
    k = int(weights.sum())
    if k == 0:
        return out
    kinds, inverse = distinct_rows(rows)
    multiplicity = np.bincount(inverse.ravel(), weights=weights, minlength=len(kinds)).astype(np.int64)
    n_kinds = len(kinds)
    rng = np.random.default_rng(seed)
    if n_kinds * 8 <= k:
        # Multinomial draws cost about one binomial per distinct row; index draws about
        # an eighth of that per cluster.
        chunk = max(1, min(samples, draw_budget // n_kinds))
        p = multiplicity / k
        for start in range(0, samples, chunk):
            stop = min(samples, start + chunk)
            out[start:stop] = rng.multinomial(k, p, size=stop - start) @ kinds
        return out
    lookup = np.repeat(np.arange(n_kinds), multiplicity) if n_kinds < k else None
    chunk = max(1, min(samples, draw_budget // k))
    for start in range(0, samples, chunk):
        stop = min(samples, start + chunk)
        draws = rng.integers(0, k, size=(stop - start, k))
        if lookup is not None:
            draws = lookup[draws]
        draws += (np.arange(stop - start) * n_kinds)[:, None]
        counts = np.bincount(draws.ravel(), minlength=(stop - start) * n_kinds).reshape(stop - start, n_kinds)
        out[start:stop] = counts @ kinds
    return out


_ROW_HASH = np.random.default_rng(0x6D6564).integers(1, 2**63, size=4096, dtype=np.uint64) | np.uint64(1)
"""Odd multipliers, one per column (cycled past 4,096), of `distinct_rows`' row hash."""


def distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(rows, axis=0, return_inverse=True)` for a finite float table: the distinct
    rows in lexicographic order and each row's index among them, the same arrays, found
    faster. numpy sorts the rows as records, comparing them field by field (2 s for 100,000
    rows of 75 columns, a tenth of a 100,000-item report); here each row's bits are hashed to
    one integer (exact integer arithmetic), the integers sorted, every row checked against the
    first row of its hash (a collision, never seen, falls back to numpy), and only the few
    distinct rows put in lexicographic order. -0.0 is made 0.0 first (numpy's record compare
    holds them equal)."""
    rows = np.ascontiguousarray(rows, dtype=np.float64)
    if rows.ndim != 2 or rows.shape[0] == 0 or rows.shape[1] == 0:
        kinds, inverse = np.unique(rows, axis=0, return_inverse=True)
        return kinds, inverse.ravel()
    if (np.signbit(rows) & (rows == 0.0)).any():
        rows = rows + 0.0
    multipliers = np.resize(_ROW_HASH, rows.shape[1])
    step = 8192  # a slice of rows at a time: no second table-sized array
    keys = np.empty(len(rows), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for start in range(0, len(rows), step):
            bits = rows[start : start + step].view(np.uint64)
            keys[start : start + step] = (bits * multipliers).sum(axis=1, dtype=np.uint64)
    _, first, by_key = np.unique(keys, return_index=True, return_inverse=True)
    by_key = by_key.ravel()
    found = rows[first]
    for start in range(0, len(rows), step):
        if not np.array_equal(rows[start : start + step], found[by_key[start : start + step]]):
            kinds, inverse = np.unique(rows, axis=0, return_inverse=True)
            return kinds, inverse.ravel()
    order = np.lexsort(found.T[::-1])
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return found[order], rank[by_key]


def percentile_interval(values: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The central `confidence` interval of a bootstrap distribution (linear interpolation
    between order statistics, numpy's default percentile)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(values, [tail, 100 - tail])
    return (float(lo), float(hi))


def bootstrap_cis(
    table: Table,
    statistics: Mapping[str, Statistic],
    *,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = CONFIDENCE,
) -> dict[str, tuple[float, float]]:
    """Percentile CIs of several statistics of one table, all from the same draws."""
    totals = resample_totals(table, samples=samples, seed=seed)
    return {name: percentile_interval(stat(totals), confidence) for name, stat in statistics.items()}


def bootstrap_ci(
    table: Table,
    statistic: Statistic,
    *,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """Percentile cluster-bootstrap CI of one statistic of column totals."""
    return bootstrap_cis(table, {"ci": statistic}, samples=samples, seed=seed, confidence=confidence)["ci"]


# ---------------------------------------------------------------------------- two runs


class ItemTable:
    """Per-item rows of one run, compact (typed arrays, no per-item objects), for joining
    two runs item by item: McNemar needs item-level agreement, which cluster sums lose.

    `add(item, cluster, row)`: `item` is the item's integer id (its idx); an item may
    appear several times (several rollouts), and repeats pair in the order added."""

    def __init__(self, width: int) -> None:
        if width < 1:
            raise ValueError(f"width must be at least 1, got {width}")
        self.width = width
        self._items = array("q")
        self._clusters = array("q")
        """Index into `_keys`, or -1 for an item without a cluster."""
        self._rows = array("d")
        self._digests = array("q")
        """A digest of each row's item content (0: not known)."""
        self._index: dict[Hashable, int] = {}
        self._keys: list[Hashable] = []

    def add(self, item: int, cluster: Hashable | None, row: Sequence[float], digest: int = 0) -> None:
        """`digest`: a digest of the item's content, which two runs must agree on to be
        paired (0 when not known: then only the item ids are compared)."""
        if isinstance(item, bool) or not isinstance(item, (int, np.integer)):
            raise TypeError(f"item id {item!r} is not an integer")
        values = _finite_row(row, self.width, f"item {item}")
        if cluster is None:
            code = -1
        else:
            code = self._index.get(cluster, -1)
            if code < 0:
                code = self._index[cluster] = len(self._keys)
                self._keys.append(cluster)
        self._items.append(int(item))
        self._clusters.append(code)
        self._rows.extend(values)
        self._digests.append(digest)

    def __len__(self) -> int:
        return len(self._items)

    def means(self) -> ItemTable:
        """One row per item: the mean of its rows (its rollouts), in its first row's cluster.
        Runs with several rollouts per task (or a different number in each run) are paired
        on these."""
        items, codes, rows = self._sorted()
        out = ItemTable(self.width)
        out._index, out._keys = dict(self._index), list(self._keys)
        if not len(items):
            return out
        unique, first, counts = np.unique(items, return_index=True, return_counts=True)
        means = np.add.reduceat(rows, first, axis=0) / counts[:, None]
        out._items = array("q", unique.tolist())
        out._clusters = array("q", codes[first].tolist())
        out._rows = array("d", means.ravel().tolist())
        out._digests = array("q", self._sorted_digests()[first].tolist())
        return out

    def _sorted_digests(self) -> np.ndarray:
        items = np.array(self._items, dtype=np.int64)
        return np.array(self._digests, dtype=np.int64)[np.argsort(items, kind="stable")]

    def _sorted(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        items = np.array(self._items, dtype=np.int64)
        codes = np.array(self._clusters, dtype=np.int64)
        rows = np.array(self._rows, dtype=float)
        order = np.argsort(items, kind="stable")
        return items[order], codes[order], rows.reshape(-1, self.width)[order]


@dataclass(frozen=True)
class Pairing:
    """Two runs joined item by item: row i of `rows_a` and `rows_b` is the same item,
    `clusters[i]` its cluster (0..n_clusters-1; an item without one is its own, shared
    by its repeats)."""

    rows_a: np.ndarray
    rows_b: np.ndarray
    clusters: np.ndarray
    n_clusters: int

    def cluster_sums(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-cluster sums of both runs, aligned: row c of both is cluster c."""

        def sums(rows: np.ndarray) -> np.ndarray:
            out = np.zeros((self.n_clusters, rows.shape[1]))
            np.add.at(out, self.clusters, rows)
            return out

        return sums(self.rows_a), sums(self.rows_b)

    def signs(self, column: int = 0) -> tuple[int, int]:
        """Items where run A's value of a column is above run B's, and below it: the counts
        of a sign test (McNemar's discordant counts when the column is 0/1)."""
        a, b = self.rows_a[:, column], self.rows_b[:, column]
        return int(np.sum(a > b)), int(np.sum(a < b))

    def discordant(self, column_a: int = 0, column_b: int | None = None) -> tuple[int, int]:
        """McNemar's discordant counts from a 0/1 column (e.g. correct): b = items right in
        run A and wrong in run B, c = wrong in A and right in B."""
        a = self.rows_a[:, column_a]
        b = self.rows_b[:, column_a if column_b is None else column_b]
        for name, v in (("A", a), ("B", b)):
            other = v[(v != 0) & (v != 1)]
            if other.size:
                raise ValueError(f"run {name}: McNemar needs a 0/1 column; found {float(other[0])!r}")
        return int(np.sum((a == 1) & (b == 0))), int(np.sum((a == 0) & (b == 1)))


def pair_runs(a: ItemTable, b: ItemTable) -> Pairing:
    """Join two runs over the same items. Raises ValueError when they cover different
    items (or an item a different number of times) or put an item in different clusters:
    then the runs must be compared unpaired."""
    items_a, codes_a, rows_a = a._sorted()
    items_b, codes_b, rows_b = b._sorted()
    if len(items_a) != len(items_b) or not np.array_equal(items_a, items_b):
        only_a = np.setdiff1d(items_a, items_b).size
        only_b = np.setdiff1d(items_b, items_a).size
        raise ValueError(
            f"the runs cover different items ({len(items_a)} and {len(items_b)} rows; {only_a} item ids "
            f"only in the first, {only_b} only in the second, or different repeat counts)"
        )
    # B's cluster codes rewritten as A's, so both are compared in one code space; a key A
    # lacks becomes -2, which matches nothing. The appended -1 keeps "no cluster" as -1.
    b_to_a = np.array([a._index.get(key, -2) for key in b._keys] + [-1], dtype=np.int64)
    mismatch = np.flatnonzero(codes_a != b_to_a[codes_b])
    if mismatch.size:
        i = int(mismatch[0])

        def name(table: ItemTable, code: int) -> str:
            return "no cluster" if code < 0 else f"cluster {table._keys[code]!r}"

        raise ValueError(
            f"item {int(items_a[i])} is in {name(a, int(codes_a[i]))} in the first run but in "
            f"{name(b, int(codes_b[i]))} in the second ({mismatch.size} items differ)"
        )
    digests_a, digests_b = a._sorted_digests(), b._sorted_digests()
    differ = np.flatnonzero((digests_a != digests_b) & (digests_a != 0) & (digests_b != 0))
    if differ.size:
        raise ValueError(
            f"item {int(items_a[differ[0]])} has other content in the second run than in the first "
            f"({differ.size} items differ in content: the same ids, other tasks)"
        )
    # Items without a cluster: their own cluster, after the keyed ones (repeats together).
    labels = codes_a.copy()
    loose = labels < 0
    if loose.any():
        labels[loose] = len(a._keys) + np.unique(items_a[loose], return_inverse=True)[1].ravel()
    used, dense = np.unique(labels, return_inverse=True)
    return Pairing(rows_a, rows_b, dense.ravel(), len(used))


def paired_difference_cis(
    sums_a: np.ndarray,
    sums_b: np.ndarray,
    statistics: Mapping[str, Statistic],
    *,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = CONFIDENCE,
) -> dict[str, tuple[float, float]]:
    """CIs of statistic(run B) - statistic(run A), resampling clusters once for both runs
    (row i of `sums_a` and `sums_b` is the same cluster), so what the runs share cancels."""
    sums_a = np.asarray(sums_a, dtype=float)
    sums_b = np.asarray(sums_b, dtype=float)
    if sums_a.ndim != 2 or sums_b.ndim != 2 or len(sums_a) != len(sums_b):
        raise ValueError(
            f"paired cluster sums must be aligned 2-D arrays, got shapes {sums_a.shape} and {sums_b.shape}"
        )
    width = sums_a.shape[1]
    totals = resample_totals(np.hstack([sums_a, sums_b]), samples=samples, seed=seed)
    return {
        name: percentile_interval(stat(totals[:, width:]) - stat(totals[:, :width]), confidence)
        for name, stat in statistics.items()
    }


def unpaired_difference_ci(
    table_a: Table,
    table_b: Table,
    statistic: Statistic,
    *,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """CI of statistic(B) - statistic(A) for runs over different items: each run is
    resampled on its own, with independent streams spawned from `seed`."""
    seed_a, seed_b = np.random.SeedSequence(seed).spawn(2)
    totals_a = resample_totals(table_a, samples=samples, seed=seed_a)
    totals_b = resample_totals(table_b, samples=samples, seed=seed_b)
    diff = statistic(totals_b) - statistic(totals_a)
    return percentile_interval(diff, confidence)


def mcnemar_exact(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value: 2·P(X <= min(b, c)) for X ~ Binomial(b + c, 1/2),
    capped at 1; 1.0 when there are no discordant items.

    Summed in log space from the largest term (k = min(b, c)) downwards: the terms shrink
    at least geometrically, and past 50·sqrt(n) steps they are below e^-5000 of the
    largest, so the sum costs O(sqrt(n)) and never under- or overflows. Relative error:
    about 1e-15 for small n, 1e-9 at n = 10^6 (the rounding of lgamma(n) ~ 1.3e7); a p-value
    too small for a double (e.g. b = 0, c = 10^6) is 0.0."""
    for name, v in (("b", b), ("c", c)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"McNemar count {name} must be a non-negative integer, got {v!r}")
    n, m = int(b) + int(c), min(int(b), int(c))
    if n == 0:
        return 1.0
    log_top = math.lgamma(n + 1) - math.lgamma(m + 1) - math.lgamma(n - m + 1) - n * math.log(2)
    steps = min(m, 50 * math.isqrt(n) + 50)
    i = np.arange(steps, dtype=float)
    # log(term[k-1] / term[k]) = log(k / (n - k + 1)), for k = m, m-1, ...
    log_rel = np.concatenate([[0.0], np.cumsum(np.log(m - i) - np.log(n - m + i + 1))])
    tail = math.exp(log_top) * float(np.exp(log_rel).sum())
    return min(1.0, 2 * tail)
