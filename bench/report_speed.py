"""Report speed and memory: `medhal report` on a large `traces.jsonl` of each benchmark
against the floor of merely reading the file and `json.loads`-ing every line (and, beside
it, the floor of decoding every line with msgspec, the decoder the trace reader uses).

The rows are real `eval` rows: the script first runs `eval` against a scripted endpoint
that answers with realistic replies (and fails about 2% of the items, so error rows are
in the mix), then repeats those rows, each with its own idx and id, up to the target
count. Both the report and the floor run as fresh processes (`wait4` gives their CPU
time and peak resident memory); the report runs twice, with and without plots, and its
own phases (imports, reading, figures, rendering, plots) are timed in-process too. Runs
at several sizes show how peak memory grows with the rows. The start-up of `medhal
report` and `medhal score` (a handful of items) is measured apart, with the slowest
imports (`python -X importtime`).

    uv run python bench/report_speed.py               # 100,000 rows per benchmark
    uv run python bench/report_speed.py --quick       # 20,000 rows

`--provenance-scaling` measures instead how the report's time grows when every trace
carries its own provenance, selection and sampling block (a file concatenated from many
runs, or a hostile one): 4,000, 8,000 and 16,000 rows, and the ratio of each time to the
one before. Linear work doubles (ratio about 2); work that compares each new block with
every one before it quadruples (issue 22 item 6: 5, 20, 61 s).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import BIN, EndpointProcess, add_out_option, out_dir, run_measured, table, write_json
from data import BENCHES, asset_env, usable

TEMPLATE_ROLLOUTS = 300
FAIL_EVERY = 50  # one item in 50 gets a persistent HTTP 500: an errored row

FLOOR = "import json, sys\nfor line in open(sys.argv[1], 'rb'):\n    json.loads(line)\n"
"""The floor the goal is stated against: reading the file and `json.loads`-ing every line."""
DECODER_FLOOR = (
    "import sys, msgspec\ndecode = msgspec.json.Decoder().decode\n"
    "for line in open(sys.argv[1], 'rb'):\n    decode(line)\n"
)
"""The same with the decoder the trace reader uses (msgspec): what is left of the report
over this one is our own work (checks, folding, figures, rendering, start-up)."""
PHASES = """
import json, sys, time
t0 = time.perf_counter()
from pathlib import Path
from medhal.reports.items import ItemLog
from medhal.reports.registry import report_spec
from medhal.reports.report import build_report, read_run
from medhal.reports.report_files import benchmark_of, render
t1 = time.perf_counter()
path = Path(sys.argv[1])
spec = report_spec(benchmark_of(path))
t2 = time.perf_counter()
run = read_run(path, spec, view=ItemLog(spec.group_fields))
t3 = time.perf_counter()
report = build_report(run)
report["headline"] = list(spec.headline)
t4 = time.perf_counter()
files = render(report, plots=False, items=run.view)
html_bytes = sum(map(len, files["report.html"]))
t5 = time.perf_counter()
from medhal.reports.plots import render_plots
t6 = time.perf_counter()
images = render_plots(report)
t7 = time.perf_counter()
print(json.dumps({
    "imports_s": t1 - t0, "env_import_s": t2 - t1, "read_s": t3 - t2, "figures_s": t4 - t3,
    "render_s": t5 - t4, "plots_import_s": t6 - t5, "plots_s": t7 - t6, "items": run.n, "plots": len(images),
    "html_mib": html_bytes / 2**20,
    "verifiers_imported": sorted(m for m in sys.modules if m == "verifiers" or m.startswith("verifiers.")),
    "tasksets_imported": sorted(m for m in sys.modules if m.endswith(".taskset")),
}))
"""


def template_rows(bench, tmp: Path, env: dict[str, str]) -> list[dict]:
    """Real `eval` rows of this benchmark (a few errored), from the scripted endpoint run as
    a program: the replies in turn, a persistent HTTP 500 for one prompt in FAIL_EVERY."""
    replies = tmp / f"replies-{bench.env_id}.json"
    replies.write_text(json.dumps(bench.replies()), encoding="utf-8")
    options = bench.write_dataset(tmp, TEMPLATE_ROLLOUTS)

    out = tmp / f"templates-{bench.env_id}"
    argv = [
        str(BIN / "eval"),
        bench.env_id,
        "--no-push",
        "--no-rich",
        "-m",
        "scripted",
        "-o",
        str(out),
        "-c",
        "32",
        "-n",
        str(TEMPLATE_ROLLOUTS),
    ]
    for key, value in options.items():
        argv += [f"--taskset.{key.replace('_', '-')}", value if isinstance(value, str) else json.dumps(value)]
    with EndpointProcess(None, "--replies", str(replies), "--fail-every", str(FAIL_EVERY)) as endpoint:
        m = run_measured([*argv, "--client.base-url", endpoint.base_url], env=env, timeout=900)
    if m.returncode != 0:
        raise SystemExit(f"eval {bench.env_id} exited {m.returncode}:\n{m.stderr[-3000:]}")
    with open(out / "traces.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


SHARED_SHARE = 0.03
"""A prompt piece (cut at blank lines) found in at least this share of the template rows is
shared text (an instruction, few-shot examples); any other is the item's own."""


def own_pieces(templates: list[dict]) -> set[str]:
    """The prompt pieces that are the items' own: in fewer than `SHARED_SHARE` of the templates."""
    counts: dict[str, int] = {}
    for t in templates:
        for name in ("system_prompt", "prompt"):
            text = t["task"]["data"].get(name)
            if isinstance(text, str):
                for piece in set(text.split("\n\n")):
                    counts[piece] = counts.get(piece, 0) + 1
    return {piece for piece, count in counts.items() if count < SHARED_SHARE * len(templates)}


def _own_prompt(data: dict, own: set[str], i: int) -> dict:
    """Task data whose prompt pieces of the item's own are made row i's own (the row number
    added), as in a real run, where no two tasks share their question: the item view stores
    text shared by many prompts once, and the templates' items would otherwise repeat every
    few hundred rows."""
    out = dict(data)
    for name in ("system_prompt", "prompt"):
        text = data.get(name)
        if isinstance(text, str):
            out[name] = "\n\n".join(f"{p} [row {i}]" if p in own else p for p in text.split("\n\n"))
    return out


def expand(templates: list[dict], n: int, path: Path) -> dict:
    """Write n rows cycling the templates, each with its own id and idx, its own prompt text
    where the templates' items have theirs (`_own_prompt`), and the selection of an n-task run
    (so the report reads a complete run, as it would a real one)."""
    errors = 0
    own = own_pieces(templates)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            t = templates[i % len(templates)]
            selection = {**t["task"]["data"].get("selection", {}), "n_expected": n, "num_tasks": n}
            data = {**_own_prompt(t["task"]["data"], own, i), "idx": i, "selection": selection}
            row = {**t, "id": f"{i:032x}", "task": {**t["task"], "data": data}}
            errors += bool(row.get("errors"))
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return {"rows": n, "errored_rows": errors, "mib": path.stat().st_size / 2**20}


def expand_distinct(templates: list[dict], n: int, path: Path) -> None:
    """`expand`, with a provenance, selection and sampling block of its own on every row."""
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            t = templates[i % len(templates)]
            data = t["task"]["data"]
            selection = {**data.get("selection", {}), "n_expected": n, "num_tasks": n, "run": i}
            provenance = {**data.get("provenance", {}), "run": i}
            agent = {
                **t.get("agent", {}),
                "sampling": {**(t.get("agent") or {}).get("sampling", {}), "seed": i},
            }
            data = {**data, "idx": i, "selection": selection, "provenance": provenance}
            row = {**t, "id": f"{i:032x}", "task": {**t["task"], "data": data}, "agent": agent}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def provenance_scaling(bench, templates: list[dict], tmp: Path, env: dict[str, str], repeat: int) -> dict:
    """Seconds of `medhal report --no-plots` on 4,000, 8,000 and 16,000 rows that each carry
    their own provenance blocks, and each time over the one before (2 is linear)."""
    runs: dict[int, float] = {}
    for n in (4_000, 8_000, 16_000):
        trace_file = tmp / f"distinct-{bench.env_id}-{n}" / "traces.jsonl"
        trace_file.parent.mkdir()
        expand_distinct(templates, n, trace_file)
        command = [str(BIN / "medhal"), "report", str(trace_file), "--no-plots", "--max-error-rate", "1"]
        times = []
        for _ in range(repeat):
            m = run_measured([*command, "--allow-incomplete", "-o", str(tmp / "distinct-out")], env=env)
            if m.returncode != 0:
                raise SystemExit(f"medhal report exited {m.returncode}:\n{m.stderr[-3000:]}")
            times.append(m.wall_s)
        runs[n] = min(times)
        trace_file.unlink()
    sizes = sorted(runs)
    ratios = {f"{b}/{a}": runs[b] / runs[a] for a, b in itertools.pairwise(sizes)}
    print(f"{bench.env_id}: distinct provenance on every row: {runs} s; time ratios per doubling {ratios}")
    return {"seconds": runs, "ratio_per_doubling": ratios}


SCORE_PHASES = """
import asyncio, json, sys, time
from pathlib import Path
t0 = time.perf_counter()
import verifiers.v1
t1 = time.perf_counter()
from medhal.kit.options import taskset_config
from medhal.reports.registry import report_spec
from medhal.reports.report_files import report_runs
from medhal.kit.predictions import read_predictions, score_tasks, write_traces
from medhal.kit.lines import taskset_class
t2 = time.perf_counter()
env_id, predictions, dataset, out = sys.argv[1], Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
report_spec(env_id)
config = taskset_config(env_id, {"dataset_path": dataset})
cls = taskset_class(env_id)
t3 = time.perf_counter()
tasks = cls(config).select()
t4 = time.perf_counter()
replies = read_predictions(predictions, {t.data.idx for t in tasks})
traces = asyncio.run(score_tasks(tasks, replies, "offline"))
write_traces(traces, out)
t5 = time.perf_counter()
report_runs([out], out, env_id, plots=False)
t6 = time.perf_counter()
print(json.dumps({
    "verifiers_import_s": t1 - t0, "medhal_imports_s": t2 - t1, "taskset_import_s": t3 - t2,
    "build_tasks_s": t4 - t3, "score_write_s": t5 - t4, "report_s": t6 - t5, "tasks": len(tasks),
}))
"""


def import_breakdown(code: str, env: dict[str, str], top: int = 10) -> list[dict]:
    """Where the start-up of `code` goes: the packages it imports (first name component),
    slowest first, each with the longest cumulative import time `python -X importtime`
    reports for it or one of its modules (a package's figure includes what it imports)."""
    m = run_measured([sys.executable, "-X", "importtime", "-c", code], env=env)
    packages: dict[str, float] = {}
    for line in m.stderr.splitlines():
        if not line.startswith("import time:") or line.count("|") != 2:
            continue
        _, cumulative, name = line.split(":", 1)[1].split("|")
        if cumulative.strip().isdigit():
            root = name.strip().split(".")[0]
            packages[root] = max(packages.get(root, 0.0), int(cumulative) / 1e6)
    ranked = sorted(packages.items(), key=lambda kv: -kv[1])[:top]
    return [{"package": name, "cumulative_s": seconds} for name, seconds in ranked]


def small_score(bench, tmp: Path, env: dict[str, str]) -> tuple[Any, Path, str, Path]:
    """`medhal score` on 20 items as a fresh process: (its measure, the predictions file,
    the dataset, the run folder)."""
    options = bench.write_dataset(tmp, 20)
    dataset = options["dataset_path"]
    replies = bench.replies()
    predictions = tmp / f"predictions-{bench.env_id}.jsonl"
    predictions.write_text(
        "".join(json.dumps({"idx": i, "reply": replies[i % len(replies)]}) + "\n" for i in range(20))
    )
    out = tmp / f"score-{bench.env_id}"
    argv = [
        str(BIN / "medhal"),
        "score",
        bench.env_id,
        "--predictions",
        str(predictions),
        "-o",
        str(out),
        "--no-plots",
    ]
    for key, value in options.items():
        argv += [f"--taskset.{key.replace('_', '-')}", value]
    score = run_measured(argv, env=env)
    if score.returncode != 0:
        raise SystemExit(f"medhal score {bench.env_id} exited {score.returncode}:\n{score.stderr[-3000:]}")
    return score, predictions, dataset, out


def import_costs(env_id: str, env: dict[str, str]) -> dict[str, Any]:
    """Where the start-up of `medhal report` and of `medhal score` goes, package by package."""
    return {
        "report_imports": import_breakdown(
            "import medhal.commands.cli, medhal.reports.report_files, medhal.reports.markdown, "
            "medhal.reports.html\n"
            f"from medhal.reports.registry import report_spec; report_spec({env_id!r})",
            env,
        ),
        "score_imports": import_breakdown(
            "import medhal.commands.cli, medhal.kit.predictions\n"
            "from medhal.kit.lines import taskset_class; "
            f"taskset_class({env_id!r})",
            env,
        ),
    }


def startup(bench, tmp: Path, env: dict[str, str]) -> dict:
    """Start-up of `medhal report` and `medhal score` on a handful of items, the fixed cost
    every run pays whatever its size, and where it goes."""
    score, predictions, dataset, out = small_score(bench, tmp, env)
    report = run_measured(
        [
            str(BIN / "medhal"),
            "report",
            str(out),
            "-o",
            str(tmp / "startup-report"),
            "--no-plots",
            "--max-error-rate",
            "1",
            "--allow-incomplete",
        ],
        env=env,
    )
    if report.returncode != 0:
        raise SystemExit(f"medhal report (start-up) exited {report.returncode}:\n{report.stderr[-3000:]}")
    phases = run_measured(
        [
            sys.executable,
            "-c",
            SCORE_PHASES,
            bench.env_id,
            str(predictions),
            dataset,
            str(tmp / "score-phases"),
        ],
        env=env,
    )
    if phases.returncode != 0:
        raise SystemExit(f"score phase timing failed:\n{phases.stderr[-3000:]}")
    bare = run_measured([sys.executable, "-c", "pass"])
    return {
        "python_s": bare.wall_s,
        "report_small_s": report.wall_s,
        "report_small_rss_mib": report.max_rss_mib,
        "score_small_s": score.wall_s,
        "score_small_rss_mib": score.max_rss_mib,
        "score_phases": json.loads(phases.stdout.strip().splitlines()[-1]),
        **import_costs(bench.env_id, env),
    }


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="20,000 rows (smoke test)")
    parser.add_argument("--rows", type=int, default=None, help="largest file (default 100,000)")
    parser.add_argument("--bench", action="append", choices=sorted(BENCHES), help="only these benchmarks")
    parser.add_argument(
        "--repeat", type=int, default=3, help="rounds of floor + reports per size (fastest kept)"
    )
    add_out_option(parser)
    parser.add_argument(
        "--provenance-scaling",
        action="store_true",
        help="only the growth of the report's time with a provenance block per row (4k, 8k, 16k rows)",
    )
    return parser.parse_args()


def measure_rounds(trace_file: Path, tmp: Path, env: dict[str, str], repeat: int) -> dict[str, list]:
    """The floors and both reports back to back, `repeat` rounds, so they see the same
    machine load (each then keeps its fastest round, the least disturbed one)."""
    command = [str(BIN / "medhal"), "report", str(trace_file), "--max-error-rate", "1"]
    rounds: dict[str, list] = {"floor": [], "decoder_floor": [], "report": [], "no_plots": [], "phases": []}
    for _ in range(repeat):
        rounds["floor"].append(run_measured([sys.executable, "-c", FLOOR, str(trace_file)]))
        rounds["decoder_floor"].append(run_measured([sys.executable, "-c", DECODER_FLOOR, str(trace_file)]))
        rounds["report"].append(run_measured([*command, "-o", str(tmp / "out")], env=env))
        rounds["no_plots"].append(
            run_measured([*command, "-o", str(tmp / "out-no-plots"), "--no-plots"], env=env)
        )
        rounds["phases"].append(run_measured([sys.executable, "-c", PHASES, str(trace_file)], env=env))
        for m in (rounds["report"][-1], rounds["no_plots"][-1], rounds["phases"][-1]):
            if m.returncode != 0:
                raise SystemExit(f"medhal report exited {m.returncode}:\n{m.stderr[-3000:]}")
    return rounds


def run_figures(info: dict, rounds: dict[str, list]) -> dict:
    """One size's figures from its fastest rounds."""
    floor, decoder_floor, rep, bare, phases = (
        min(rounds[k], key=lambda m: m.wall_s)
        for k in ("floor", "decoder_floor", "report", "no_plots", "phases")
    )
    p = json.loads(phases.stdout.strip().splitlines()[-1])
    if p["verifiers_imported"] or p["tasksets_imported"]:
        raise SystemExit(f"the report imported {p['verifiers_imported'][:3]} {p['tasksets_imported'][:3]}")
    startup_s = p["imports_s"] + p["env_import_s"]
    return {
        **info,
        "floor_s": floor.wall_s,
        "floor_cpu_s": floor.cpu_s,
        "floor_rss_mib": floor.max_rss_mib,
        "decoder_floor_s": decoder_floor.wall_s,
        "ratio_over_decoder_floor": rep.wall_s / decoder_floor.wall_s,
        "ratio_no_plots_over_decoder_floor": bare.wall_s / decoder_floor.wall_s,
        "report_s": rep.wall_s,
        "report_cpu_s": rep.cpu_s,
        "report_rss_mib": rep.max_rss_mib,
        "no_plots_s": bare.wall_s,
        "no_plots_cpu_s": bare.cpu_s,
        "no_plots_rss_mib": bare.max_rss_mib,
        "ratio": rep.wall_s / floor.wall_s,
        "ratio_no_plots": bare.wall_s / floor.wall_s,
        # CPU time, the report's worker thread and process included: on a machine whose other
        # work varies from round to round, the steadier measure of the work done (though not of
        # the wait, which the worker shortens).
        "cpu_ratio_no_plots": bare.cpu_s / floor.cpu_s,
        "load_average": list(os.getloadavg()),
        "startup_s": startup_s,
        "ratio_without_startup": (bare.wall_s - startup_s) / floor.wall_s,
        "rounds_s": {k: [round(m.wall_s, 3) for m in v] for k, v in rounds.items()},
        "read_over_floor": p["read_s"] / floor.wall_s,
        "phases": p,
    }


def measure_size(bench, templates: list[dict], n: int, tmp: Path, env: dict[str, str], repeat: int) -> dict:
    """One benchmark at one size: the run written, its rounds measured, the report checked."""
    trace_file = tmp / f"{bench.env_id}-{n}" / "traces.jsonl"
    trace_file.parent.mkdir()
    info = expand(templates, n, trace_file)
    rounds = measure_rounds(trace_file, tmp, env, repeat)
    report = json.loads((tmp / "out" / "report.json").read_text())
    assert report["n"] == n and report["n_errors"] == info["errored_rows"], (
        report["n"],
        report["n_errors"],
        info,
    )
    assert report["complete"], "the expanded run should read as complete"
    run = run_figures(info, rounds)
    print(
        f"{bench.env_id} {n:,} rows ({info['mib']:.0f} MiB): floor {run['floor_s']:.1f} s, report "
        f"{run['report_s']:.1f} s (x{run['ratio']:.2f}), --no-plots {run['no_plots_s']:.1f} s "
        f"(x{run['ratio_no_plots']:.2f}); msgspec floor {run['decoder_floor_s']:.1f} s "
        f"(report x{run['ratio_over_decoder_floor']:.2f}), "
        f"peak RSS {run['report_rss_mib']:.0f} / {run['no_plots_rss_mib']:.0f} MiB",
        flush=True,
    )
    trace_file.unlink()
    return run


SUMMARY_COLUMNS = [
    "benchmark",
    "rows",
    "MiB",
    "floor s",
    "msgspec floor s",
    "report s",
    "report / floor",
    "--no-plots s",
    "--no-plots / floor",
    "start-up s",
    "read s",
    "figures s",
    "json+md+html s",
    "plots s",
    "floor RSS MiB",
    "report RSS MiB",
    "--no-plots RSS MiB",
]


def summary_rows(results: dict) -> tuple[list[list], list[list]]:
    """(a row per benchmark and size, the memory growth per benchmark); the growth is also
    recorded on each benchmark's results."""
    rows, growth = [], []
    for env_id, per in results["benchmarks"].items():
        for n, r in per["runs"].items():
            p = r["phases"]
            rows.append(
                [
                    *(env_id, n, r["mib"], r["floor_s"], r["decoder_floor_s"], r["report_s"], r["ratio"]),
                    *(r["no_plots_s"], r["ratio_no_plots"], r["startup_s"], p["read_s"], p["figures_s"]),
                    *(p["render_s"], p["plots_import_s"] + p["plots_s"], r["floor_rss_mib"]),
                    *(r["report_rss_mib"], r["no_plots_rss_mib"]),
                ]
            )
        lo, hi = per["runs"][min(per["runs"])], per["runs"][max(per["runs"])]
        span = hi["rows"] - lo["rows"]
        per["rss_kib_per_row"] = (hi["report_rss_mib"] - lo["report_rss_mib"]) * 1024 / span
        per["rss_kib_per_row_no_plots"] = (hi["no_plots_rss_mib"] - lo["no_plots_rss_mib"]) * 1024 / span
        growth.append([env_id, per["rss_kib_per_row"], per["rss_kib_per_row_no_plots"]])
    return rows, growth


def provenance_scaling_only(ns: argparse.Namespace) -> None:
    scaling: dict = {}
    with tempfile.TemporaryDirectory(prefix="medhal-report-") as tmpdir:
        env = asset_env()
        for bench in usable(ns.bench):
            templates = template_rows(bench, Path(tmpdir), env)
            scaling[bench.env_id] = provenance_scaling(bench, templates, Path(tmpdir), env, ns.repeat)
    path = write_json(out_dir(ns.out, ns.quick), "report_provenance_scaling", scaling)
    print(f"\nwrote {path}")


def main() -> None:
    ns = arguments()
    # Python caches compiled modules unless PYTHONDONTWRITEBYTECODE is set, as it is on some
    # machines (this one): then every `medhal report` compiles numpy and medhal from source
    # again (about 0.8 s, matplotlib's import twice that), which no user with a normal install
    # pays. The Makefile unsets it for the tests; the measured processes run without it too.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    if ns.provenance_scaling:
        provenance_scaling_only(ns)
        return
    largest = ns.rows or (20_000 if ns.quick else 100_000)
    sizes = sorted({largest // 10, largest // 2, largest})
    results: dict = {"sizes": sizes, "benchmarks": {}}
    with tempfile.TemporaryDirectory(prefix="medhal-report-") as tmpdir:
        tmp = Path(tmpdir)
        env = asset_env()
        for bench in usable(ns.bench):
            templates = template_rows(bench, tmp, env)
            per = results["benchmarks"][bench.env_id] = {"template_rows": len(templates), "runs": {}}
            per["startup"] = startup(bench, tmp, env)
            for n in sizes:
                per["runs"][n] = measure_size(bench, templates, n, tmp, env, ns.repeat)
    rows, growth = summary_rows(results)
    print()
    print(table(SUMMARY_COLUMNS, rows))
    print()
    print(table(["benchmark", "peak RSS growth KiB/row", "--no-plots KiB/row"], growth))
    path = write_json(out_dir(ns.out, ns.quick), "report_speed" + ("-quick" if ns.quick else ""), results)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
