"""Report speed and memory: `medhal report` on a large `traces.jsonl` of each benchmark
against the floor of merely reading the file and `json.loads`-ing every line.

The rows are real `eval` rows: the script first runs `eval` against a scripted endpoint
that answers with realistic replies (and fails about 2% of the items, so error rows are
in the mix), then repeats those rows, each with its own idx and id, up to the target
count. Both the report and the floor run as fresh processes (`wait4` gives their CPU
time and peak resident memory); the report's own phases (reading, figures, plots) are
timed in-process too. Runs at several sizes show how memory grows with the rows.

    uv run python bench/report_speed.py               # 100,000 rows per benchmark
    uv run python bench/report_speed.py --quick       # 20,000 rows
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import BIN, out_dir, run_measured, table, write_json  # noqa: E402
from data import BENCHES, asset_env, usable  # noqa: E402

TEMPLATE_ROLLOUTS = 300
FAIL_EVERY = 50  # one item in 50 gets a persistent HTTP 500: an errored row

FLOOR = "import json, sys\nfor line in open(sys.argv[1], 'rb'):\n    json.loads(line)\n"
PHASES = """
import json, sys, time
t0 = time.perf_counter()
from medhal.cli import _benchmark_of
from medhal.registry import report_spec
from medhal.report import build_report, read_run, to_markdown
from medhal.plots import write_plots
from pathlib import Path
t1 = time.perf_counter()
path, out = Path(sys.argv[1]), Path(sys.argv[2])
spec = report_spec(_benchmark_of(path))
t2 = time.perf_counter()
summary = read_run(path, spec)
t3 = time.perf_counter()
report = build_report(summary, spec)
t4 = time.perf_counter()
write_plots(report, out)
to_markdown(report, spec)
t5 = time.perf_counter()
print(json.dumps({
    "imports_s": t1 - t0, "env_import_s": t2 - t1, "read_s": t3 - t2, "figures_s": t4 - t3,
    "plots_markdown_s": t5 - t4, "items": len(summary.items),
}))
"""


def template_rows(bench, tmp: Path, env: dict[str, str]) -> list[dict]:
    """Real `eval` rows of this benchmark (a few errored), from a scripted endpoint."""
    from medhal.scripted_endpoint import Fault, ScriptedEndpoint

    replies = bench.replies()
    options = bench.write_dataset(tmp, TEMPLATE_ROLLOUTS)
    counter = itertools.count()
    lock = threading.Lock()

    def script(body: dict, number: int):
        with lock:
            k = next(counter)
        text = json.dumps(body.get("messages", []))
        if hash(text) % FAIL_EVERY == 0:
            return Fault("500")
        return replies[k % len(replies)]

    out = tmp / f"templates-{bench.env_id}"
    argv = [
        str(BIN / "eval"), bench.env_id, "--no-push", "--no-rich", "-m", "scripted", "-o", str(out), "-c", "32",
        "-n", str(TEMPLATE_ROLLOUTS),
    ]
    for key, value in options.items():
        argv += [f"--taskset.{key.replace('_', '-')}", value if isinstance(value, str) else json.dumps(value)]
    with ScriptedEndpoint(script) as endpoint:
        m = run_measured([*argv, "--client.base-url", endpoint.base_url], env=env, timeout=900)
    if m.returncode != 0:
        raise SystemExit(f"eval {bench.env_id} exited {m.returncode}:\n{m.stderr[-3000:]}")
    rows = [json.loads(line) for line in open(out / "traces.jsonl", encoding="utf-8")]
    return rows


def expand(templates: list[dict], n: int, path: Path) -> dict:
    """Write n rows cycling the templates, each with its own id and idx."""
    errors = 0
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            t = templates[i % len(templates)]
            data = {**t["task"]["data"], "idx": i}
            row = {**t, "id": f"{i:032x}", "task": {**t["task"], "data": data}}
            errors += bool(row.get("errors"))
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return {"rows": n, "errored_rows": errors, "mib": path.stat().st_size / 2**20}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="20,000 rows (smoke test)")
    parser.add_argument("--rows", type=int, default=None, help="largest file (default 100,000)")
    parser.add_argument("--bench", action="append", choices=sorted(BENCHES), help="only these benchmarks")
    parser.add_argument("--out", type=Path, default=None, help="directory for the JSON (default reports/bench, or outputs/bench with --quick)")
    ns = parser.parse_args()
    largest = ns.rows or (20_000 if ns.quick else 100_000)
    sizes = sorted({largest // 10, largest // 2, largest})
    results: dict = {"sizes": sizes, "benchmarks": {}}
    with tempfile.TemporaryDirectory(prefix="medhal-report-") as tmpdir:
        tmp = Path(tmpdir)
        env = asset_env(tmp)
        for bench in usable(ns.bench):
            templates = template_rows(bench, tmp, env)
            per = results["benchmarks"][bench.env_id] = {"template_rows": len(templates), "runs": {}}
            for n in sizes:
                trace_file = tmp / f"{bench.env_id}-{n}" / "traces.jsonl"
                trace_file.parent.mkdir()
                info = expand(templates, n, trace_file)
                floor = run_measured([sys.executable, "-c", FLOOR, str(trace_file)])
                rep = run_measured(
                    [str(BIN / "medhal"), "report", str(trace_file), "-o", str(tmp / "out"), "--max-error-rate", "1"], env=env
                )
                if rep.returncode != 0:
                    raise SystemExit(f"medhal report exited {rep.returncode}:\n{rep.stderr[-3000:]}")
                report = json.loads((tmp / "out" / "report.json").read_text())
                assert report["n"] == n and report["n_errors"] == info["errored_rows"], (report["n"], report["n_errors"], info)
                phases = run_measured([sys.executable, "-c", PHASES, str(trace_file), str(tmp / "out-phases")], env=env)
                if phases.returncode != 0:
                    raise SystemExit(f"phase timing failed:\n{phases.stderr[-3000:]}")
                run = per["runs"][n] = {
                    **info,
                    "floor_s": floor.wall_s, "floor_rss_mib": floor.max_rss_mib,
                    "report_s": rep.wall_s, "report_cpu_s": rep.cpu_s, "report_rss_mib": rep.max_rss_mib,
                    "ratio": rep.wall_s / floor.wall_s,
                    "phases": json.loads(phases.stdout.strip().splitlines()[-1]),
                }
                startup = run["phases"]["imports_s"] + run["phases"]["env_import_s"]
                run["startup_s"] = startup
                run["ratio_without_startup"] = (rep.wall_s - startup) / floor.wall_s
                print(
                    f"{bench.env_id} {n:,} rows ({info['mib']:.0f} MiB): report {rep.wall_s:.1f} s, floor {floor.wall_s:.1f} s "
                    f"(x{run['ratio']:.2f}), peak RSS {rep.max_rss_mib:.0f} MiB",
                    flush=True,
                )
                trace_file.unlink()
    rows = []
    for env_id, per in results["benchmarks"].items():
        for n, r in per["runs"].items():
            p = r["phases"]
            rows.append([
                env_id, n, r["mib"], r["errored_rows"], r["floor_s"], r["report_s"], r["ratio"], r["startup_s"],
                r["ratio_without_startup"], p["read_s"], p["figures_s"], p["plots_markdown_s"], r["floor_rss_mib"], r["report_rss_mib"],
            ])
    print()
    print(table(
        ["benchmark", "rows", "MiB", "errored", "floor s", "report s", "report / floor", "start-up s (imports)",
         "report / floor after start-up", "read s", "figures s", "plots+md s", "floor peak RSS MiB", "report peak RSS MiB"],
        rows,
    ))
    path = write_json(out_dir(ns.out, ns.quick), "report_speed" + ("-quick" if ns.quick else ""), results)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
