"""Speed and memory of the statistics core (`medhal.reports.metrics`) at report scale.

What a report does per run: stream items into `ClusterSums` (and, for a comparison,
`ItemTable`), then bootstrap (1,000 resamples) accuracy and F1 intervals, a paired
difference and McNemar's test. Timed in-process (best of `--repeat`); memory is the
tracemalloc peak of Python allocations (numpy's included) while a step runs, so the
accumulator's footprint can be compared at 10x the items.

    uv run python bench/metrics_speed.py             # 100,000 items, bootstrap up to 10^6 clusters
    uv run python bench/metrics_speed.py --quick     # 20,000 items, up to 10^5 clusters
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import out_dir, table, write_json

from medhal.reports import metrics as m


def measure(fn: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    """(best wall seconds, tracemalloc peak MiB of one run, the result)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return best, peak, result


def items(n: int, seed: int = 0) -> list[tuple[str | None, tuple[float, float, float, float]]]:
    """MedHallu-like items: pairs from one source, F1 columns (tp, predicted, gold, kept)."""
    rng = np.random.default_rng(seed)
    gold = rng.random(n) < 0.5
    pred = np.where(rng.random(n) < 0.8, gold, ~gold)
    return [
        (f"src-{i // 2}", (float(g and p), float(p), float(g), 1.0))
        for i, (g, p) in enumerate(zip(gold.tolist(), pred.tolist(), strict=True))
    ]


def fill(rows: list, clustered: bool) -> m.ClusterSums:
    acc = m.ClusterSums(4)
    for key, row in rows:
        acc.add(key if clustered else None, row)
    return acc


Record = Callable[..., Any]
"""`record(step, fn, note="")`: time `fn`, keep the row, return what `fn` returned."""


def statistics() -> dict[str, m.Statistic]:
    """The figures a report draws intervals for: an F1 and an accuracy."""
    return {"f1": m.f1_ratio(0, 1, 2), "accuracy": m.ratio(0, 3)}


def cluster_steps(record: Record, rows: list, n: int, big: int) -> None:
    """Streaming items into `ClusterSums`, and the bootstrap intervals over them."""
    clustered = record(f"ClusterSums.add x {n:,} (clusters of 2)", lambda: fill(rows, True))
    loose = record(f"ClusterSums.add x {n:,} (no clusters)", lambda: fill(rows, False))
    more = items(10 * n, seed=1)
    record(f"ClusterSums.add x {10 * n:,} (no clusters)", lambda: fill(more, False), "peak flat in items")
    stats = statistics()
    record(
        f"bootstrap F1 + acc, {len(clustered):,} clusters",
        lambda: m.bootstrap_cis(clustered, stats),
        f"{clustered.stored_rows:,} rows stored",
    )
    record(
        f"bootstrap F1 + acc, {len(loose):,} singletons",
        lambda: m.bootstrap_cis(loose, stats),
        f"{loose.stored_rows:,} rows stored",
    )
    rng = np.random.default_rng(2)
    for k in sorted({n, big}):
        continuous = np.column_stack([rng.random(k), np.ones(k)])  # every row distinct: index draws
        record(
            f"bootstrap mean, {k:,} distinct clusters", lambda c=continuous: m.bootstrap_ci(c, m.ratio(0, 1))
        )


def paired_steps(record: Record, rows: list, n: int) -> None:
    """Pairing two runs item by item, their paired differences and McNemar's test."""
    other = items(n, seed=3)

    def fill_pair() -> m.Pairing:
        table_a, table_b = m.ItemTable(4), m.ItemTable(4)
        for i, ((key, row), (_, row_b)) in enumerate(zip(rows, other, strict=True)):
            table_a.add(i, key, row)
            table_b.add(i, key, row_b)
        return m.pair_runs(table_a, table_b)

    pairing = record(f"ItemTable.add x 2 x {n:,} + pair_runs", fill_pair)
    sums_a, sums_b = pairing.cluster_sums()
    record(
        f"paired diff F1 + acc, {pairing.n_clusters:,} clusters",
        lambda: m.paired_difference_cis(sums_a, sums_b, statistics()),
    )
    record("mcnemar_exact(499,000, 501,000)", lambda: m.mcnemar_exact(499_000, 501_000))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="smaller sizes (smoke test)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None, help="directory for the JSON")
    args = parser.parse_args()
    n = 20_000 if args.quick else 100_000
    big = 100_000 if args.quick else 1_000_000
    rows = items(n)
    results: list[list[Any]] = []

    def record(step: str, fn: Callable[[], Any], note: str = "") -> Any:
        wall, peak, result = measure(fn, args.repeat)
        results.append([step, wall, peak, note])
        return result

    cluster_steps(record, rows, n, big)
    paired_steps(record, rows, n)
    print(table(["step", "best wall s", "peak MiB (tracemalloc)", "note"], results))
    path = write_json(
        out_dir(args.out, args.quick),
        "metrics_speed",
        {
            "items": n,
            "repeat": args.repeat,
            "steps": [dict(zip(["step", "wall_s", "peak_mib", "note"], r, strict=True)) for r in results],
        },
    )
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
