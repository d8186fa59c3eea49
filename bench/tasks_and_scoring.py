"""Task building and scoring cost, per benchmark.

- Task building: load a local dataset file of the complete benchmark's size and build
  every task, as `eval` does before its first rollout (`Taskset.select()`), in this
  process after imports. The first build also reads and checks the prompt assets; the
  next ones show the steady cost. MedFact-Bench target: 14,274 tasks in under 2 s.
- Scoring cost: microseconds per reply for the benchmark's pure reading + grading
  (`<package>.scoring.score`: the reply read under all three conventions and graded), and
  for the full `Task.score` a rollout runs (the trace built around the reply, the one
  metric and the reward), over realistic replies (real model outputs where shared data
  has them); then, in the same run, the same replies with a reasoning block of about
  2,000 tokens in front (real reasoning prose where shared data has it), as ratios to the
  plain replies, and one reply of 1 MB (reasoning run away before the answer): its
  `Task.score` in milliseconds and per 10 KB of reply, against a 10 KB one (100 for
  linear time).

    uv run python bench/tasks_and_scoring.py [--quick] [--bench medfact-bench ...]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import add_out_option, long_replies_table, out_dir, table, write_json
from data import BENCHES, REASONING_TOKENS, asset_env, usable, with_reasoning


def load_tasks(env_id: str, options: dict) -> list:
    """Every task of the run these options select, built as `eval` builds them: the
    environment's own config model, then `Taskset.select()` (as `medhal score` does)."""
    from medhal.kit.lines import taskset_class
    from medhal.kit.options import taskset_config

    return taskset_class(env_id)(taskset_config(env_id, options)).select()


def build(env_id: str, options: dict) -> tuple[float, int]:
    """Seconds to build every task, after the imports (verifiers, the environment's
    taskset module), which `eval` pays at start-up whatever it builds."""
    from medhal.kit.lines import taskset_class

    taskset_class(env_id)
    start = time.perf_counter()
    tasks = load_tasks(env_id, options)
    return time.perf_counter() - start, len(tasks)


def scoring_cost(bench, tasks: list, replies: list[str], count: int) -> dict:
    from medhal.kit.task import score_reply

    pairs = [(tasks[i % len(tasks)], replies[i % len(replies)]) for i in range(count)]
    for task, reply in pairs[:50]:  # warm up
        bench.parse_score(task.data, reply)
    start = time.perf_counter()
    for task, reply in pairs:
        bench.parse_score(task.data, reply)
    parse_us = (time.perf_counter() - start) / count * 1e6
    per_reply = []
    for task, reply in pairs[: min(count, 500)]:
        t = time.perf_counter()
        bench.parse_score(task.data, reply)
        per_reply.append((time.perf_counter() - t) * 1e6)

    async def full() -> float:
        for task, reply in pairs[:50]:
            await score_reply(task, reply)
        start = time.perf_counter()
        for task, reply in pairs:
            await score_reply(task, reply)
        return (time.perf_counter() - start) / count * 1e6

    full_us = asyncio.run(full())
    return {
        "replies": len(replies),
        "mean_reply_chars": statistics.mean(len(r) for r in replies),
        "scored": count,
        "parse_score_us": parse_us,
        "parse_score_p99_us": sorted(per_reply)[int(len(per_reply) * 0.99) - 1],
        "task_score_us": full_us,
    }


def task_score_us(tasks: list, replies: list[str], count: int) -> tuple[float, float]:
    """(mean, worst) microseconds of `Task.score` per reply over `count` (task, reply) pairs."""
    from medhal.kit.task import score_reply

    pairs = [(tasks[i % len(tasks)], replies[i % len(replies)]) for i in range(count)]

    async def run() -> list[float]:
        for task, reply in pairs[:20]:  # warm up
            await score_reply(task, reply)
        times = []
        for task, reply in pairs:
            start = time.perf_counter()
            await score_reply(task, reply)
            times.append((time.perf_counter() - start) * 1e6)
        return times

    times = asyncio.run(run())
    return statistics.mean(times), max(times)


def long_replies_cost(tasks: list, replies: list[str], count: int) -> dict:
    """Plain replies, the same with a ~2,000-token reasoning block, and replies of 10 KB and
    1 MB (reasoning run away before the answer), in one run: means, worst cases, ratios."""
    plain_us, plain_worst = task_score_us(tasks, replies, count)
    reasoning = with_reasoning(replies)
    reasoning_us, reasoning_worst = task_score_us(tasks, reasoning, count)
    small = with_reasoning(replies[:20], 10_000)
    large = with_reasoning(replies[:5], 1_000_000)
    small_us, _ = task_score_us(tasks, small, 40)
    large_us, large_worst = task_score_us(tasks, large, 5)
    return {
        "reasoning_tokens": REASONING_TOKENS,
        "reasoning_mean_reply_chars": statistics.mean(len(r) for r in reasoning),
        "plain_task_score_us": plain_us,
        "plain_task_score_worst_us": plain_worst,
        "reasoning_task_score_us": reasoning_us,
        "reasoning_task_score_worst_us": reasoning_worst,
        "reasoning_over_plain": reasoning_us / plain_us,
        "task_score_10kb_us": small_us,
        "task_score_1mb_ms": large_us / 1000,
        "task_score_1mb_worst_ms": large_worst / 1000,
        "ratio_1mb_over_10kb": large_us / small_us,
    }


def measure_bench(bench, tmp: Path, quick: bool, repeats: int) -> tuple[dict, dict, dict]:
    """(build figures, scoring figures, long-reply figures) of one benchmark: its tasks built
    `repeats` times from a file of the complete benchmark's size (a tenth with `quick`), then
    scored, then scored on long replies (`long_replies_cost`)."""
    size = max(bench.full_size // 10, 1) if quick else bench.full_size
    options = bench.write_dataset(tmp, size)
    times, n = [], 0
    for _ in range(repeats):
        seconds, n = build(bench.env_id, options)
        times.append(seconds)
    built = {
        "items": n,
        "first_s": times[0],
        "best_s": min(times),
        "median_s": statistics.median(times),
        "per_item_us": min(times) / n * 1e6,
    }
    print(f"{bench.env_id}: built {n:,} tasks in {times[0]:.2f} s (best {min(times):.2f} s)", flush=True)
    tasks = load_tasks(bench.env_id, options)
    r = scoring_cost(bench, tasks, bench.replies(), 2000 if quick else 20000)
    print(
        f"{bench.env_id}: parse+grade {r['parse_score_us']:.1f} us/reply, Task.score "
        f"{r['task_score_us']:.1f} us/reply",
        flush=True,
    )
    long = long_replies_cost(tasks, bench.replies(), 200 if quick else 2000)
    print(
        f"{bench.env_id}: Task.score with a {REASONING_TOKENS:,}-token reasoning block "
        f"{long['reasoning_task_score_us']:.0f} us/reply ({long['reasoning_over_plain']:.1f}x plain, "
        f"worst {long['reasoning_task_score_worst_us']:.0f} us); 1 MB reply "
        f"{long['task_score_1mb_ms']:.0f} ms ({long['ratio_1mb_over_10kb']:.0f}x a 10 KB one)",
        flush=True,
    )
    return built, r, long


SCORING_COLUMNS = [
    "benchmark",
    "replies (distinct)",
    "mean reply chars",
    "parse+grade us/reply",
    "p99 us",
    "Task.score us/reply",
]
SCORING_KEYS = ["replies", "mean_reply_chars", "parse_score_us", "parse_score_p99_us", "task_score_us"]


def print_tables(results: dict) -> None:
    print()
    print(
        table(
            ["benchmark", "items", "first build s", "best build s", "us/item"],
            [
                [k, v["items"], v["first_s"], v["best_s"], v["per_item_us"]]
                for k, v in results["build"].items()
            ],
        )
    )
    print()
    print(
        table(
            SCORING_COLUMNS, [[k, *(v[key] for key in SCORING_KEYS)] for k, v in results["scoring"].items()]
        )
    )
    print()
    print(long_replies_table(results["long_replies"]))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="a tenth of the items (smoke test)")
    parser.add_argument("--bench", action="append", choices=sorted(BENCHES), help="only these benchmarks")
    parser.add_argument("--repeats", type=int, default=3)
    add_out_option(parser)
    ns = parser.parse_args()
    results: dict = {"build": {}, "scoring": {}, "long_replies": {}}
    with tempfile.TemporaryDirectory(prefix="medhal-tasks-") as tmpdir:
        asset_env()
        for bench in usable(ns.bench):
            env_id = bench.env_id
            measured = measure_bench(bench, Path(tmpdir), ns.quick, ns.repeats)
            results["build"][env_id], results["scoring"][env_id], results["long_replies"][env_id] = measured
    print_tables(results)
    path = write_json(
        out_dir(ns.out, ns.quick), "tasks_and_scoring" + ("-quick" if ns.quick else ""), results
    )
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
