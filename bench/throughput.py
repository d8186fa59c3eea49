"""Rollout throughput: our in-process harness vs. the stock `null` harness, and the
endpoint's own request rate with a bare HTTP client, all in one run.

Every measurement uses the same MedFact-Bench tasks and the same scripted endpoint (in
its own process, answering instantly with one real model reply), so the ratios are
measured under identical conditions on this machine:

- rollouts/s: rollouts divided by the rollout phase of the run (first rollout start to
  last rollout end, from the timestamps `eval` writes on every trace); process start-up
  is excluded, and reported separately;
- CPU s/rollout: CPU time of the whole `eval` process tree (including the programs `null`
  starts) during that same rollout phase, sampled from /proc while it runs, divided by the
  rollouts; the endpoint's CPU is measured apart (it runs in its own process);
- bare client: the same request body sent straight to the endpoint with aiohttp and with
  httpx (the library both harnesses' SDK uses), at the same concurrency.

    uv run python bench/throughput.py            # full run (a few minutes on 2 cores)
    uv run python bench/throughput.py --quick    # smaller counts, for a smoke test
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import BIN, EndpointProcess, add_out_option, cpu_between, out_dir, run_measured, table, write_json
from data import BENCHES, medfact_rows

MEDFACT = BENCHES["medfact-bench"]

CONCURRENCY = (1, 16, 64)
# Rollouts per (harness, concurrency): enough for a steady state, little enough that the
# stock harness (about 2 CPU-seconds per rollout) finishes in a few minutes on 2 cores.
COUNTS = {"in-process": {1: 400, 16: 1000, 64: 1000}, "null": {1: 6, 16: 32, 64: 64}}
QUICK = {"in-process": {1: 50, 16: 100, 64: 100}, "null": {1: 2, 16: 16, 64: 16}}
EXPERIMENT = "in-process, aiohttp client (experiment)"
"""`--aiohttp-harness`: the same harness sending its request with aiohttp instead of the
OpenAI SDK over httpx (bench/aiohttp_harness.py), to size the harness client's share."""
BARE_REQUESTS = {1: 1000, 16: 3000, 64: 3000}


def eval_argv(harness: str, base_url: str, out: Path, n: int, c: int, dataset: str) -> list[str]:
    argv = [
        str(BIN / "eval"),
        MEDFACT.env_id,
        "--client.base-url",
        base_url,
        "--no-push",
        "--no-rich",
        "-m",
        "scripted",
        "-o",
        str(out),
        "-n",
        str(n),
        "-c",
        str(c),
        "--taskset.dataset-path",
        dataset,
    ]
    if harness == "null":
        argv += ["--harness.id", "null"]
    elif harness == EXPERIMENT:
        argv += ["--harness.id", "aiohttp_harness"]
    return argv


def rollout_window(trace_file: Path) -> tuple[int, int, float, float]:
    """(rows, errored rows, first rollout start, last span end), times from the traces."""
    start, end, rows, errors = float("inf"), 0.0, 0, 0
    with open(trace_file, "rb") as f:
        for line in f:
            row = json.loads(line)
            rows += 1
            errors += bool(row.get("errors"))
            timing = row["timing"]
            start = min(start, timing["start"])
            for span in timing.values():
                if isinstance(span, dict) and span.get("end"):
                    end = max(end, span["end"])
    return rows, errors, start, end


def run_eval(harness: str, endpoint: EndpointProcess, n: int, c: int, dataset: str, tmp: Path) -> dict:
    out = tmp / f"{harness}-c{c}-n{n}-{time.time_ns()}"
    cpu_endpoint = endpoint.cpu_s()
    samples: list[tuple[float, float]] = []
    started = time.time()
    env = {"PYTHONPATH": str(Path(__file__).resolve().parent)} if harness == EXPERIMENT else None
    m = run_measured(eval_argv(harness, endpoint.base_url, out, n, c, dataset), samples=samples, env=env)
    cpu_endpoint = endpoint.cpu_s() - cpu_endpoint
    if m.returncode != 0:
        raise SystemExit(f"eval ({harness}, c={c}) exited {m.returncode}:\n{m.stderr[-3000:]}")
    rows, errors, first, last = rollout_window(out / "traces.jsonl")
    if rows != n or errors:
        raise SystemExit(
            f"eval ({harness}, c={c}): {rows} rows, {errors} errored, expected {n} clean rows; see {out}"
        )
    window_cpu = cpu_between(samples, first, last)
    return {
        "n": n,
        "concurrency": c,
        "wall_s": m.wall_s,
        "startup_s": first - started,
        "window_s": last - first,
        "cpu_s": m.cpu_s,
        "window_cpu_s": window_cpu,
        "rate": n / (last - first),
        "cpu_per_rollout_s": window_cpu / n,
        "endpoint_cpu_per_rollout_s": cpu_endpoint / n,
        "max_rss_mib": m.max_rss_mib,
    }


async def bare_rate(client: str, base_url: str, body: dict, n: int, c: int) -> dict:
    """Send `n` requests at concurrency `c` straight to the endpoint."""
    url = f"{base_url}/chat/completions"
    payload = json.dumps(body).encode()
    headers = {"content-type": "application/json", "authorization": "Bearer x"}
    queue = iter(range(n))

    if client == "aiohttp":
        import aiohttp

        session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=c))

        async def one() -> None:
            async with session.post(url, data=payload, headers=headers) as r:
                await r.read()
                assert r.status == 200, r.status
    else:
        import httpx

        session = httpx.AsyncClient(
            limits=httpx.Limits(max_connections=c, max_keepalive_connections=c), timeout=60
        )

        async def one() -> None:
            r = await session.post(url, content=payload, headers=headers)
            assert r.status_code == 200, r.status_code

    async def worker() -> None:
        for _ in queue:
            await one()

    cpu, start = time.process_time(), time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(c)))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    await (session.close() if client == "aiohttp" else session.aclose())
    return {"n": n, "wall_s": wall, "client_cpu_s": cpu, "rate": n / wall}


def measure_bare(endpoint: EndpointProcess, body: dict, bare_n: dict, results: dict) -> None:
    """The endpoint's own request rate with a bare client, per concurrency and client."""
    for c in CONCURRENCY:
        results["bare"][c] = {}
        for client in ("aiohttp", "httpx"):
            cpu = endpoint.cpu_s()
            r = asyncio.run(bare_rate(client, endpoint.base_url, body, bare_n[c], c))
            r["endpoint_cpu_s"] = endpoint.cpu_s() - cpu
            results["bare"][c][client] = r
            print(f"bare {client} c={c}: {r['rate']:.0f} req/s", flush=True)


def measure_harnesses(
    endpoint: EndpointProcess, harnesses: list[str], counts: dict, dataset: str, tmp: Path, results: dict
) -> None:
    """`eval` through each harness, per concurrency."""
    for harness in harnesses:
        results["harness"][harness] = {}
        for c in CONCURRENCY:
            r = run_eval(harness, endpoint, counts[harness][c], c, dataset, tmp)
            results["harness"][harness][c] = r
            print(
                f"{harness} c={c}: {r['rate']:.1f} rollouts/s, {r['cpu_per_rollout_s'] * 1000:.1f} "
                "CPU-ms/rollout",
                flush=True,
            )


def ratio_rows(results: dict) -> list[list]:
    """Per concurrency: the in-process harness against null and the bare clients (the ratios
    are also recorded in `results["ratios"]`)."""
    rows_out = []
    for c in CONCURRENCY:
        inproc = results["harness"]["in-process"][c]
        null = results["harness"].get("null", {}).get(c)
        bare = max(results["bare"][c].values(), key=lambda r: r["rate"])
        results.setdefault("ratios", {})[c] = ratios = {
            "in_process_over_null_rate": inproc["rate"] / null["rate"] if null else None,
            "null_over_in_process_cpu": null["cpu_per_rollout_s"] / inproc["cpu_per_rollout_s"]
            if null
            else None,
            "bare_over_in_process_rate": bare["rate"] / inproc["rate"],
        }
        rows_out.append(
            [
                c,
                inproc["rate"],
                inproc["cpu_per_rollout_s"] * 1000,
                null["rate"] if null else "-",
                null["cpu_per_rollout_s"] * 1000 if null else "-",
                ratios["in_process_over_null_rate"] or "-",
                results["bare"][c]["aiohttp"]["rate"],
                results["bare"][c]["httpx"]["rate"],
                ratios["bare_over_in_process_rate"],
            ]
        )
    return rows_out


RATIO_COLUMNS = [
    "concurrency",
    "in-process rollouts/s",
    "in-process CPU ms/rollout",
    "null rollouts/s",
    "null CPU ms/rollout",
    "in-process / null (rate)",
    "bare aiohttp req/s",
    "bare httpx req/s",
    "bare best / in-process",
]
RUN_COLUMNS = [
    "harness",
    "concurrency",
    "rollouts",
    "eval wall s",
    "start-up s",
    "rollout phase s",
    "endpoint CPU ms/request",
]


def print_tables(results: dict) -> None:
    rows_out = ratio_rows(results)
    print()
    print(table(RATIO_COLUMNS, rows_out))
    runs = [
        [h, c, r["n"], r["wall_s"], r["startup_s"], r["window_s"], r["endpoint_cpu_per_rollout_s"] * 1000]
        for h, per_c in results["harness"].items()
        for c, r in per_c.items()
    ]
    print()
    print(table(RUN_COLUMNS, runs))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small counts (smoke test; figures are noisier)")
    add_out_option(parser)
    parser.add_argument(
        "--skip-null", action="store_true", help="only the in-process harness and the bare client"
    )
    parser.add_argument("--aiohttp-harness", action="store_true", help=f"also measure: {EXPERIMENT}")
    ns = parser.parse_args()
    counts = dict(QUICK if ns.quick else COUNTS)
    if ns.aiohttp_harness:
        counts[EXPERIMENT] = counts["in-process"]
    bare_n = {c: n // 5 for c, n in BARE_REQUESTS.items()} if ns.quick else BARE_REQUESTS
    harnesses = ["in-process"] if ns.skip_null else ["in-process", "null"]
    if ns.aiohttp_harness:
        harnesses.insert(1, EXPERIMENT)
    reply = MEDFACT.replies()[0]
    results: dict = {"counts": counts, "reply_chars": len(reply), "harness": {}, "bare": {}}
    with (
        tempfile.TemporaryDirectory(prefix="medhal-throughput-") as tmpdir,
        EndpointProcess(reply) as endpoint,
    ):
        rows = medfact_rows(max(max(v.values()) for v in counts.values()))
        dataset = MEDFACT.write_dataset(Path(tmpdir), len(rows))["dataset_path"]
        body = {
            "model": "scripted",
            "messages": [
                {"role": "system", "content": rows[0]["system_prompt"]},
                {"role": "user", "content": rows[0]["user_prompt"]},
            ],
        }
        measure_bare(endpoint, body, bare_n, results)
        measure_harnesses(endpoint, harnesses, counts, dataset, Path(tmpdir), results)
    print_tables(results)
    path = write_json(
        out_dir(ns.out, ns.quick), "throughput" if not ns.quick else "throughput-quick", results
    )
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
