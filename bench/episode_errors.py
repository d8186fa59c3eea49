"""Reading a verifiers 0.4 episode is linear in its errors: an episode whose trace and
episode both list N errors (all distinct, half of the trace's listed again by the episode),
read by the trace reader at N and at 4N, reported as the ratio 4N / N (4 for linear time,
16 for quadratic; the reader compared every episode error with every trace error before
issue 33 item 13: 20,000 errors took 21 s). Writes reports/bench/episode_errors.json (or
--out).

    uv run python bench/episode_errors.py [--quick] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from medhal.reports.traces import parse_trace_line

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import out_dir, table, write_json


def episode(n: int) -> bytes:
    """One episode line with n errors on its trace and n (plus n / 2 repeated) around it."""
    own = [{"type": "ProviderError", "message": f"trace error {i}"} for i in range(n)]
    around = [{"type": "EnvError", "message": f"episode error {i}"} for i in range(n)] + own[::2]
    task = {"type": "MedFactTask", "data": {"idx": 0, "benchmark": "medfact-bench", "prompt": "q"}}
    trace = {"task": task, "nodes": [], "errors": own, "rewards": {}, "metrics": {}, "agent": {}}
    return json.dumps({"task": task, "traces": [trace], "errors": around}).encode() + b"\n"


def seconds(line: bytes) -> float:
    """Seconds per read of `line`, the best of three."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        record = parse_trace_line(line, "traces.jsonl", 1)
        best = min(best, time.perf_counter() - start)
    assert record.errors, "the episode's errors were read"
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="5,000 and 20,000 errors instead of 20,000 and 80,000"
    )
    parser.add_argument(
        "--out", type=Path, help="output directory (default reports/bench, --quick: outputs/bench)"
    )
    ns = parser.parse_args()
    small = 5_000 if ns.quick else 20_000
    rows = []
    for n in (small, 4 * small):
        rows.append({"errors": n, "seconds": seconds(episode(n))})
    ratio = rows[1]["seconds"] / max(rows[0]["seconds"], 1e-9)
    print(table(["errors per list", "seconds"], [[f"{r['errors']:,}", f"{r['seconds']:.3f}"] for r in rows]))
    print(f"\nratio 4N / N: {ratio:.1f} (linear = 4, quadratic = 16)")
    path = write_json(
        out_dir(ns.out, ns.quick), "episode_errors", {"rows": rows, "ratio": ratio, "linear_ratio": 4}
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
