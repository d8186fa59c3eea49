"""Write `reports/performance.md` from the JSON the benchmark scripts wrote
(`reports/bench/*.json`), so the published tables are exactly the measured figures.

    uv run python bench/render_report.py [--in reports/bench] [--out reports/performance.md]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import DEFAULT_OUT, ROOT, long_replies_table, table

TARGET_BUILD_S = 2.0


def load(directory: Path, name: str) -> dict | None:
    path = directory / f"{name}.json"
    return json.loads(path.read_text()) if path.is_file() else None


def machine_lines(results: dict[str, dict]) -> list[str]:
    lines = []
    for name, data in results.items():
        m = data["machine"]
        lines.append(
            f"| `{name}.json` | {m['date']} | {m['commit']} | {m['nproc']} x {m['cpu']} | {m['memory_gib']} "
            "GiB | "
            f"{m['os']} | {m['python']} | {m['verifiers']} | "
            f"{', '.join(map(str, m.get('load_average_at_end', [])))} |"
        )
    return [
        (
            "| figures | measured | commit | CPUs | memory | OS | Python | verifiers | load average at the "
            "end "
            "(1, 5, 15 min) |"
        ),
        "|---|---|---|---|---|---|---|---|---|",
        *lines,
    ]


def throughput_rows(t: dict) -> list[list]:
    """One row per concurrency: the in-process harness against null and the bare clients."""
    inproc, null = t["harness"]["in-process"], t["harness"].get("null", {})
    rows = []
    for c in sorted(inproc, key=int):
        i, n = inproc[c], null.get(c)
        bare = t["bare"][c]
        best = max(bare.values(), key=lambda r: r["rate"])
        rows.append(
            [
                int(c),
                i["rate"],
                i["cpu_per_rollout_s"] * 1000,
                n["rate"] if n else "-",
                n["cpu_per_rollout_s"] * 1000 if n else "-",
                f"**{i['rate'] / n['rate']:.0f}x**" if n else "-",
                f"{n['cpu_per_rollout_s'] / i['cpu_per_rollout_s']:.0f}x" if n else "-",
                bare["aiohttp"]["rate"],
                bare["httpx"]["rate"],
                f"**{best['rate'] / i['rate']:.1f}x**",
            ]
        )
    return rows


def harness_runs(t: dict) -> list[list]:
    """One row per harness and concurrency: what each `eval` run took."""
    return [
        [
            h,
            int(c),
            r["n"],
            r["wall_s"],
            r["startup_s"],
            r["window_s"],
            r["endpoint_cpu_per_rollout_s"] * 1000,
        ]
        for h, per in t["harness"].items()
        for c, r in sorted(per.items(), key=lambda kv: int(kv[0]))
    ]


def experiment_lines(t: dict) -> list[str]:
    """The experimental harnesses (`--aiohttp-harness`) beside the in-process one."""
    inproc = t["harness"]["in-process"]
    experiment = []
    for name, per in t["harness"].items():
        if name in ("in-process", "null"):
            continue
        experiment += [
            "",
            (
                "Experiment, `--aiohttp-harness` (`bench/aiohttp_harness.py`): the harness's own request "
                "sent "
                "with a plain "
                "aiohttp POST instead of the OpenAI SDK over httpx; interception server and framework "
                "unchanged. No retries, "
                "so not for real runs; it sizes the share of the harness's HTTP client."
            ),
            "",
            table(
                [
                    "concurrency",
                    "in-process (SDK + httpx) rollouts/s",
                    f"{name} rollouts/s",
                    "speed-up",
                    "CPU ms/rollout (SDK)",
                    "CPU ms/rollout (aiohttp)",
                ],
                [
                    [
                        int(c),
                        inproc[c]["rate"],
                        r["rate"],
                        f"{r['rate'] / inproc[c]['rate']:.2f}x",
                        inproc[c]["cpu_per_rollout_s"] * 1000,
                        r["cpu_per_rollout_s"] * 1000,
                    ]
                    for c, r in sorted(per.items(), key=lambda kv: int(kv[0]))
                ],
            ),
        ]
    return experiment


def throughput_targets(t: dict) -> list[str]:
    """Whether the harness meets its two throughput targets, with the figures behind them."""
    inproc, null = t["harness"]["in-process"], t["harness"].get("null", {})
    worst_vs_null = min(inproc[c]["rate"] / null[c]["rate"] for c in inproc if c in null) if null else None
    best_vs_bare = min(
        max(t["bare"][c].values(), key=lambda r: r["rate"])["rate"] / inproc[c]["rate"] for c in inproc
    )
    return [
        "Targets:",
        "",
        (
            "- at least 10x the stock harness's rollouts/s: "
            f"**{'met' if worst_vs_null and worst_vs_null >= 10 else 'not met'}** "
        )
        + (f"(lowest ratio {worst_vs_null:.0f}x)." if worst_vs_null else "(not measured)."),
        (
            "- within 2x of the endpoint's own request rate with a bare client: "
            f"**{'met' if best_vs_bare <= 2 else 'not met'}** "
            f"(the bare aiohttp client is {best_vs_bare:.1f}x faster at best). See the analysis below."
        ),
        "",
    ]


def throughput_section(t: dict) -> list[str]:
    return [
        "## 1. Rollout throughput: in-process harness vs. the stock `null` harness",
        "",
        (
            "`bench/throughput.py`. Same MedFact-Bench tasks, same scripted endpoint (its own process, "
            "answering "
            f"instantly with one real {t['reply_chars']}-character Med-V1 reply). Rollouts/s over the "
            "rollout "
            "phase "
            "(first rollout start to last rollout end, from the traces' timestamps); CPU per rollout: CPU "
            "time "
            "of the "
            "whole `eval` process tree (including the programs `null` starts) in that same phase, sampled "
            "from "
            "/proc, "
            "divided by the rollouts. Bare client: the same request sent straight to the endpoint at the "
            "same "
            "concurrency."
        ),
        "",
        table(
            [
                "concurrency",
                "in-process rollouts/s",
                "in-process CPU ms/rollout",
                "null rollouts/s",
                "null CPU ms/rollout",
                "in-process / null (rate)",
                "null / in-process (CPU)",
                "bare aiohttp req/s",
                "bare httpx req/s",
                "bare best / in-process",
            ],
            throughput_rows(t),
        ),
        "",
        table(
            [
                "harness",
                "concurrency",
                "rollouts",
                "eval wall s",
                "start-up s (before the first rollout)",
                "rollout phase s",
                "endpoint CPU ms/request",
            ],
            harness_runs(t),
        ),
        *experiment_lines(t),
        "",
        *throughput_targets(t),
    ]


def report_rows(r: dict) -> list[list]:
    """One row per benchmark and size: times against the floors, and the phases."""
    rows = []
    for env_id, per in r["benchmarks"].items():
        for n, run in sorted(per["runs"].items(), key=lambda kv: int(kv[0])):
            p = run["phases"]
            rows.append(
                [
                    env_id,
                    int(n),
                    run["mib"],
                    run["errored_rows"],
                    run["floor_s"],
                    run["report_s"],
                    f"{run['ratio']:.2f}x",
                    run["decoder_floor_s"],
                    f"{run['ratio_over_decoder_floor']:.2f}x",
                    run["no_plots_s"],
                    f"{run['ratio_no_plots']:.2f}x",
                    run["startup_s"],
                    p["read_s"],
                    f"{p['read_s'] / run['floor_s']:.2f}x",
                    p["figures_s"],
                    p["render_s"],
                    p["plots_import_s"] + p["plots_s"],
                ]
            )
    return rows


def memory_rows(r: dict) -> list[list]:
    """One row per benchmark: peak memory at the smallest and largest sizes, and its growth."""
    memory = []
    for env_id, per in r["benchmarks"].items():
        sizes = sorted(per["runs"], key=int)
        lo, hi = per["runs"][sizes[0]], per["runs"][sizes[-1]]
        memory.append(
            [
                env_id,
                f"{int(sizes[0]):,} -> {int(sizes[-1]):,}",
                lo["floor_rss_mib"],
                lo["report_rss_mib"],
                hi["report_rss_mib"],
                per["rss_kib_per_row"],
                lo["no_plots_rss_mib"],
                hi["no_plots_rss_mib"],
                per["rss_kib_per_row_no_plots"],
                (hi["mib"] - lo["mib"]) * 1024 / (int(sizes[-1]) - int(sizes[0])),
            ]
        )
    return memory


def verdict(ok: bool) -> str:
    return "met" if ok else "not met"


def report_targets(r: dict) -> list[str]:
    """Whether `medhal report` meets its speed, memory and import targets at the largest size."""
    largest = {env_id: per["runs"][max(per["runs"], key=int)] for env_id, per in r["benchmarks"].items()}
    n_largest = max(int(n) for per in r["benchmarks"].values() for n in per["runs"])
    worst = max(run["ratio"] for run in largest.values())
    worst_bare = max(run["ratio_no_plots"] for run in largest.values())
    worst_read = max(run["phases"]["read_s"] / run["floor_s"] for run in largest.values())
    worst_slope = max(
        max(per["rss_kib_per_row"], per["rss_kib_per_row_no_plots"]) for per in r["benchmarks"].values()
    )
    imported = sorted(
        {
            m
            for run in largest.values()
            for m in run["phases"]["verifiers_imported"] + run["phases"]["tasksets_imported"]
        }
    )
    return [
        (
            f"- `medhal report` within 2x of the read-and-parse floor at {n_largest:,} rows, start-up "
            "included: "
            f"**{verdict(worst_bare <= 2)} without plots** (up to {worst_bare:.2f}x: "
            + ", ".join(f"{env_id} {run['ratio_no_plots']:.2f}x" for env_id, run in largest.items())
            + f"), **{verdict(worst <= 2)} with plots** (up to {worst:.2f}x: "
            + ", ".join(f"{env_id} {run['ratio']:.2f}x" for env_id, run in largest.items())
            + "; the plots are drawn by a worker process that imports matplotlib while the traces are "
            f"read). The reading phase alone (the item view included) is within {worst_read:.2f}x of "
            "the floor."
            + (
                " In CPU time (the report's worker thread and plot process included): "
                + ", ".join(
                    f"{env_id} {run['cpu_ratio_no_plots']:.2f}x without plots, "
                    f"{run['report_cpu_s'] / run['floor_cpu_s']:.2f}x with them"
                    for env_id, run in largest.items()
                    if "cpu_ratio_no_plots" in run
                )
                + "."
                if any("cpu_ratio_no_plots" in run for run in largest.values())
                else ""
            )
        ),
        (
            f"- peak memory growth under 0.1 KiB per row: **{verdict(worst_slope < 0.1)}** (at most "
            f"{worst_slope:.3f} KiB per row; by benchmark "
            + ", ".join(
                f"{env_id} {max(per['rss_kib_per_row'], per['rss_kib_per_row_no_plots']):.3f}"
                for env_id, per in r["benchmarks"].items()
            )
            + ")."
        ),
        f"- the report imports no verifiers module and no environment taskset: **{verdict(not imported)}**"
        + (f" ({', '.join(imported[:5])})." if imported else " (checked on every run, from `sys.modules`)."),
        "",
    ]


def report_intro(r: dict) -> str:
    """How the report speed is measured (the rounds each size is timed)."""
    largest = [per["runs"][max(per["runs"], key=int)] for per in r["benchmarks"].values()]
    repeat = max((len(run.get("rounds_s", {}).get("floor", [])) for run in largest), default=1)
    return (
        "`bench/report_speed.py`. Real `eval` rows of each benchmark (a few percent errored by an "
        "injected "
        "persistent HTTP "
        "500), repeated with their own idx and id up to each size (with the selection of a run of that "
        "size, so the report "
        "reads a complete run). `medhal report` runs as a fresh process, with plots and with "
        "`--no-plots`, "
        "against the floor "
        "of reading the file and `json.loads`-ing every line (a fresh process too); times include "
        "process "
        "start-up. The trace reader decodes lines with msgspec (`medhal.reports.traces`), so the table "
        "also "
        "gives the floor of decoding every line with msgspec: the report's margin over that one is "
        "our own per-row work. "
        f"Floor, both reports and a phase-timing run go back to back, {repeat} "
        f"round{'s' if repeat > 1 else ''} per size, "
        "and each keeps its fastest round (the machine is shared: the fastest round is the least "
        "disturbed). The "
        "phases (start-up = imports of medhal and of the environment's light report module; reading; "
        "figures with their "
        "bootstrap intervals; report.json/md/html; plots, with the matplotlib import) are timed inside "
        "that fourth "
        "process. Peak RSS is each process's own high-water mark."
    )


def report_section(r: dict) -> list[str]:
    return [
        "## 2. Report speed and memory",
        "",
        report_intro(r),
        "",
        table(
            [
                "benchmark",
                "rows",
                "MiB",
                "errored",
                "floor s",
                "report s",
                "report / floor",
                "msgspec floor s",
                "report / msgspec floor",
                "--no-plots s",
                "--no-plots / floor",
                "start-up s",
                "read s",
                "read / floor",
                "figures s",
                "json+md+html s",
                "plots s",
            ],
            report_rows(r),
        ),
        "",
        (
            "Peak memory against the number of rows (the file is streamed and the item view written to "
            "disk as it is read; what a report keeps per row is a 29-byte record of each rollout "
            "(duplicates, pass@k, majority votes), a byte per task id and, where the task is the "
            "cluster the bootstrap resamples (MedFact-Bench), a 4-byte state number per task: a small "
            "cluster's sums are one of few interned states, a large one's (a shared source question) "
            "its own; the rollout summary at the end sums the record in place, a slice at a time):"
        ),
        "",
        table(
            [
                "benchmark",
                "rows",
                "floor peak RSS MiB",
                "report peak RSS MiB (smallest)",
                "(largest)",
                "growth KiB/row",
                "--no-plots peak RSS MiB (smallest)",
                "(largest)",
                "--no-plots growth KiB/row",
                "file KiB/row",
            ],
            memory_rows(r),
        ),
        "",
        "Targets:",
        "",
        *report_targets(r),
    ]


def startup_rows(per: dict) -> list[list]:
    """One row per benchmark: fresh-process times and the phases of `medhal score`."""
    rows = []
    for env_id, s in per.items():
        p = s["score_phases"]
        rows.append(
            [
                env_id,
                s["python_s"],
                s["report_small_s"],
                s["report_small_rss_mib"],
                s["score_small_s"],
                s["score_small_rss_mib"],
                p["verifiers_import_s"],
                p["medhal_imports_s"],
                p["taskset_import_s"],
                p["build_tasks_s"],
                p["score_write_s"],
                p["report_s"],
            ]
        )
    return rows


def startup_section(r: dict) -> list[str]:
    per = {env_id: b["startup"] for env_id, b in r["benchmarks"].items() if "startup" in b}
    if not per:
        return []
    first = next(iter(per.values()))

    def packages(key: str) -> str:
        return ", ".join(f"{x['package']} {x['cumulative_s']:.2f} s" for x in first[key][:8])

    return [
        "### Start-up of `medhal report` and `medhal score`",
        "",
        (
            "The fixed cost every run pays, measured on 20 items: `python -c pass`, `medhal report "
            "--no-plots` "
            "and "
            "`medhal score --no-plots` as fresh processes, and the phases of `medhal score` in-process "
            "(verifiers imported "
            "first, then medhal's modules, then the environment's taskset class; building the tasks; scoring "
            "and writing "
            "the traces; the report)."
        ),
        "",
        table(
            [
                "benchmark",
                "python s",
                "report s",
                "report peak RSS MiB",
                "score s",
                "score peak RSS MiB",
                "score: verifiers import s",
                "medhal imports s",
                "taskset import s",
                "build tasks s",
                "score + write s",
                "report s",
            ],
            startup_rows(per),
        ),
        "",
        (
            f"Where start-up goes (`python -X importtime`, slowest packages, {next(iter(per))}; cumulative, "
            "so "
            "a package's "
            "time includes what it imports: medhal's includes numpy, and under `medhal score` verifiers):"
        ),
        "",
        f"- `medhal report`: {packages('report_imports')}.",
        f"- `medhal score`: {packages('score_imports')}.",
        "",
    ]


def adversarial_rows(rows: list[dict]) -> list[list]:
    """Per benchmark and convention: the shape with the highest ratio, and the slowest."""
    by: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        by.setdefault((row["benchmark"], row["convention"]), []).append(row)
    table_rows = []
    for (benchmark, convention), group in by.items():
        worst = max(group, key=lambda row: row["ratio"])
        slowest = max(group, key=lambda row: row["seconds_large"])
        table_rows.append(
            [
                benchmark,
                convention,
                len(group),
                f"{worst['ratio']:.0f}",
                worst["shape"],
                slowest["seconds_large"] * 1000,
                slowest["shape"],
            ]
        )
    return table_rows


def adversarial_section(a: dict) -> list[str]:
    rows = a["rows"]
    linear = a["linear_ratio"]
    worst = a["worst"]
    return [
        "## 4. Reply readers: linear time on hostile replies",
        "",
        (
            "`bench/adversarial_replies.py`. Every reader of every benchmark (three conventions each) on "
            f"{len({r['shape'] for r in rows})} "
            "reply shapes that defeat backtracking parsers (unclosed tags and braces, runs of quotes, keys, "
            "negations, "
            f"numbered lines, ...), at {a['small_chars']:,} and {a['large_chars']:,} characters. The ratio "
            "of "
            "the two "
            f"times is {linear:.0f} for a linear reader and {linear**2:,.0f} for a quadratic one. Per "
            "reader, "
            "the shape "
            "with the highest ratio and the slowest shape at the large size:"
        ),
        "",
        table(
            [
                "benchmark",
                "convention",
                "shapes",
                "highest ratio large / small",
                "its shape",
                f"slowest at {a['large_chars']:,} chars (ms)",
                "its shape",
            ],
            adversarial_rows(rows),
        ),
        "",
        (
            f"Target: every reader linear: **{'met' if worst['ratio'] < 3 * linear else 'not met'}** "
            "(highest "
            "ratio "
            f"{worst['ratio']:.0f}, {worst['benchmark']} {worst['convention']} on '{worst['shape']}'; "
            "linear = "
            f"{linear:.0f}, "
            "so anything well below a few hundred is linear with timing noise on small inputs)."
        ),
        "",
    ]


def metrics_section(m: dict) -> list[str]:
    return [
        "## 5. Statistics core",
        "",
        (
            f"`bench/metrics_speed.py`. `medhal.reports.metrics` at report scale ({m['items']:,} items; "
            f"best of "
            f"{m['repeat']}): "
            "streaming items into `ClusterSums`, the bootstrap intervals a report draws (1,000 resamples), a "
            "paired "
            "comparison and McNemar's test. Peak memory is tracemalloc's peak of Python allocations during "
            "one "
            "step."
        ),
        "",
        table(
            ["step", "best wall s", "peak MiB", "note"],
            [[r["step"], r["wall_s"], r["peak_mib"], r["note"]] for r in m["steps"]],
        ),
        "",
    ]


def build_target(t: dict) -> str:
    """Whether MedFact-Bench's tasks build within the target, with the figure."""
    medfact = t["build"].get("medfact-bench")
    return (
        f"**{'met' if medfact['first_s'] < TARGET_BUILD_S else 'not met'}** ({medfact['items']:,} tasks in "
        f"{medfact['first_s']:.2f} s, first build)"
        if medfact
        else "not measured"
    )


def scoring_rows(t: dict) -> list[list]:
    """Per benchmark: the cost of scoring one reply, purely and through `Task.score`."""
    return [
        [
            k,
            v["replies"],
            v["mean_reply_chars"],
            v["parse_score_us"],
            v["parse_score_p99_us"],
            v["task_score_us"],
        ]
        for k, v in t["scoring"].items()
    ]


def tasks_section(t: dict) -> list[str]:
    build = [
        [k, v["items"], v["first_s"], v["best_s"], v["median_s"], v["per_item_us"]]
        for k, v in t["build"].items()
    ]
    return [
        "## 3. Task building and scoring cost",
        "",
        (
            "`bench/tasks_and_scoring.py`. Task building: a local file (or directory) of the complete "
            "benchmark's size, "
            "loaded and turned into tasks as `eval` does (`Taskset.select()`), in-process after imports; the "
            "first build "
            "also reads and checks the prompt assets. MedFact-Bench and Med-HALT rows are cycled from the "
            "real "
            "upstream "
            "rows in shared data (Med-HALT in the seven sets' real proportions), MedHallu from the real "
            "pqa_labeled rows."
        ),
        "",
        table(["benchmark", "tasks", "first build s", "best build s", "median build s", "us/task"], build),
        "",
        f"Target: MedFact-Bench's 14,274 tasks in under {TARGET_BUILD_S:.0f} s: {build_target(t)}.",
        "",
        (
            "Scoring cost per reply: the benchmark's pure reading and grading (`<package>.scoring.score`: "
            "the "
            "reply read "
            "under all three conventions, medhal, authors and strict, and each reading graded: what the "
            "task's "
            "one metric "
            "computes), and the full `Task.score` a rollout runs (the trace built around the reply, the "
            "metric "
            "and the reward). "
            "Replies: the 340 real Med-V1 outputs (MedFact-Bench); the real deepseek-r1-7b answers of the "
            "shared Med-HALT "
            "samples in three reply shapes; for MedHallu, which has no model outputs offline, the verdict "
            "shapes its readers "
            "document."
        ),
        "",
        table(
            [
                "benchmark",
                "distinct replies",
                "mean reply chars",
                "score (3 readings + grades) us/reply",
                "p99 us",
                "Task.score us/reply",
            ],
            scoring_rows(t),
        ),
        "",
        *long_replies_lines(t.get("long_replies", {})),
    ]


def long_replies_lines(long: dict) -> list[str]:
    """The same replies with a 2,000-token reasoning block in front, and a 1 MB reply, measured
    in the same run (ratios to the plain replies and to a 10 KB reply)."""
    if not long:
        return []
    return [
        (
            "Long replies, in the same run: each reply with a reasoning block of about 2,000 tokens in "
            "front (real reasoning prose: the Med-V1 outputs' thinking, one after another), as a reasoning "
            "model returns it, and one reply of 1 MB (reasoning run away before the answer) against one of "
            "10 KB (100 for linear time)."
        ),
        "",
        long_replies_table(long),
        "",
    ]


def view_open_table(rows: list[dict]) -> str:
    """Per size: the page's size and the times to open it, filter and search it."""
    return table(
        [
            "items",
            "traces.jsonl MiB",
            "report.html MiB",
            "without the view MiB",
            "first items s",
            "every item s",
            "prompts decoded s",
            "JS heap MiB",
            "filter ms",
            "search ms",
        ],
        [
            [
                r["items"],
                r["traces_mib"],
                r["html_mib"],
                r["html_without_view_mib"],
                r["first_items_s"],
                r.get("all_items_s"),
                r["prompts_decoded_s"],
                r["js_heap_mib"],
                r["filter_ms"],
                r["search_ms"],
            ]
            for r in rows
        ],
    )


def view_cost_table(rows: list[dict]) -> str:
    """Per size: what collecting the items costs `medhal report`."""
    return table(
        [
            "items",
            "read + figures s, no view",
            "with the view",
            "ratio",
            "render s, no view",
            "with the view",
            "medhal report peak MiB",
        ],
        [
            [
                r["items"],
                r["plain_read_s"],
                r["view_read_s"],
                f"{r['view_read_s'] / r['plain_read_s']:.2f}x",
                r["plain_render_s"],
                r["view_render_s"],
                r["report_peak_mib"],
            ]
            for r in rows
        ],
    )


def view_section(v: dict) -> list[str]:
    rows = v["sizes"]
    return [
        "## report.html's item view: size and time to open",
        "",
        (
            "`bench/report_view.py`. Real Med-HALT traces (the 16-row samples of the seven sets, real "
            "prompts with their few-shot examples, the real deepseek-r1-7b answers) repeated to each size"
            " with fresh idx, each reply with a reasoning block of 150 to 450 random words in front "
            "(random words compress worse than prose: an upper bound for replies of that length). The "
            "page embeds every item once, gzip-compressed in chunks of 2,000 (base64 in inert data "
            "blocks), and decodes them with the browser's DecompressionStream; it renders 50 items a "
            "page. Opened in headless Chromium over the DevTools protocol: wall time from the navigation "
            "command to the first page of items on screen (the first chunk), to every item read (the "
            "filters' counts exact), and to every prompt decoded (search covers prompts from then on); "
            "one filter change (wrong, over every item) and one text search timed "
            "inside the page. Console messages: none at any size."
            if all(not r["console"] for r in rows)
            else "Console messages were seen: see reports/bench/report_view.json."
        ),
        "",
        view_open_table(rows),
        "",
        (
            "Cost in `medhal report` (same process, same traces, read twice): reading with the items "
            "collected (each compressed as it streams past: while reading, memory holds compressed bytes, "
            "not texts) vs. without; the page itself is built in memory before it is written, so the peak "
            "of a `medhal report` process grows with the page's size."
        ),
        "",
        view_cost_table(rows),
        "",
    ]


def load_results(source: Path) -> dict[str, dict]:
    """The JSON each benchmark script wrote, by script name (those found)."""
    results = {
        name: data
        for name in (
            "throughput",
            "report_speed",
            "tasks_and_scoring",
            "adversarial_replies",
            "metrics_speed",
            "report_view",
        )
        if (data := load(source, name))
    }
    if not results:
        raise SystemExit(f"no benchmark JSON in {source}; run the bench/ scripts first")
    return results


def header_lines(results: dict[str, dict]) -> list[str]:
    """The title, how to reproduce the figures, and the machine each was measured on."""
    return [
        "# Performance",
        "",
        (
            "Measured speed of the medhal environments. Every figure below is produced by a script in "
            "`bench/` "
            "and copied "
            "here by `bench/render_report.py` from the JSON it wrote (`reports/bench/`); ratios compare "
            "measurements "
            "taken in the same run on the same machine. Reproduce with:"
        ),
        "",
        "```sh",
        (
            "export MEDHAL_SHARED_DATA=../shared/data   # real upstream rows, replies and prompt files "
            "(not in "
            "the repository)"
        ),
        "uv run python bench/throughput.py --aiohttp-harness",
        "uv run python bench/report_speed.py",
        "uv run python bench/tasks_and_scoring.py",
        "uv run python bench/adversarial_replies.py",
        "uv run python bench/metrics_speed.py",
        "MEDHAL_ASSETS_DIR=../shared/data uv run python bench/report_view.py",
        "uv run python bench/render_report.py",
        "```",
        "",
        "## Machine",
        "",
        *machine_lines({name: data for name, data in results.items() if "machine" in data}),
        "",
        (
            "The machine is shared: a load average above the CPU count at the end of a run means other work "
            "ran during "
            "it, which slows absolute figures (ratios measured in the same run are affected less)."
        ),
        "",
    ]


def section_lines(results: dict[str, dict]) -> list[str]:
    """Each section whose figures were measured, in order."""
    lines: list[str] = []
    if "throughput" in results:
        lines += throughput_section(results["throughput"])
    if "report_speed" in results:
        lines += report_section(results["report_speed"])
        lines += startup_section(results["report_speed"])
    if "tasks_and_scoring" in results:
        lines += tasks_section(results["tasks_and_scoring"])
    if "adversarial_replies" in results:
        lines += adversarial_section(results["adversarial_replies"])
    if "metrics_speed" in results:
        lines += metrics_section(results["metrics_speed"])
    if "report_view" in results:
        lines += view_section(results["report_view"])
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--in", dest="source", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "performance.md")
    parser.add_argument(
        "--notes",
        type=Path,
        default=Path(__file__).resolve().parent / "performance_notes.md",
        help="hand-written analysis appended after the tables",
    )
    ns = parser.parse_args()
    results = load_results(ns.source)
    lines = [*header_lines(results), *section_lines(results)]
    if ns.notes.is_file():
        lines += [ns.notes.read_text().rstrip(), ""]
    ns.out.parent.mkdir(parents=True, exist_ok=True)
    ns.out.write_text("\n".join(lines))
    print(f"wrote {ns.out}")


if __name__ == "__main__":
    main()
