"""`medhal demo`: every installed environment, end to end, on its bundled sample.

For each environment registered under the `medhal.environments` entry points, run
`eval <id>` with its default (in-process) harness and its `DEMO_OPTIONS` (a few rows
written by medhal), against the embedded local model (started here), a vLLM server
(`--backend vllm --model M`) or any endpoint (`--base-url U --model M`); then report each
run and print a short summary. `--full` drops the demo options: the environments load
their real, pinned datasets and prompts.

What it proves: the pipeline, end to end (serving, prompting, reading, scoring,
reporting). The embedded 135M-parameter model answers these benchmarks near chance; a
demo number says nothing about a model.

The terminal shows one progress line per benchmark and a summary; eval's own config dump
and logs go to files in each benchmark's output directory: `eval.log` (written by
verifiers itself), and what the eval process printed, `eval.stdout` and `eval.stderr`.
When a benchmark's pinned prompt files cannot be fetched (no network, no
MEDHAL_ASSETS_DIR), the demo runs it with prompts written by medhal for the demo rows, says
so, and the report marks it; `--full` never does.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from medhal.reports.registry import benchmark_module, installed

DEMO_TEMPERATURE = 0.0
DEMO_MAX_TOKENS = 1024
"""The papers' budget (MedFact-Bench: up to 1,024 new tokens); room for a reasoning block
and the answer."""


def demo_options(env_id: str, full: bool, demo_prompts: bool = False) -> dict[str, Any]:
    """The taskset options of a demo run: the bundled rows, and demo prompts when asked for
    or when the pinned ones cannot be read here (environments without prompt files of
    their own have nothing to replace)."""
    if full:
        return {}
    module = benchmark_module(env_id)
    options = dict(getattr(module, "DEMO_OPTIONS", {}))
    if has_pinned_prompts(module) and (demo_prompts or not pinned_prompts_available(module)):
        options["prompts"] = "demo"
    return options


def has_pinned_prompts(module: Any) -> bool:
    from medhal.kit.assets import Asset

    return bool(getattr(module, "PROMPT_FILES", None)) or any(
        isinstance(v, Asset) for v in vars(module).values()
    )


def pinned_prompts_available(module: Any) -> bool:
    """Whether every pinned prompt asset the environment declares can be read (downloaded
    or from MEDHAL_ASSETS_DIR). An environment without prompt assets has them all."""
    from medhal.kit.assets import Asset, AssetError

    assets = [value for value in vars(module).values() if isinstance(value, Asset)]
    files = getattr(module, "PROMPT_FILES", {})
    for pair in files.values():
        assets += [pair.prompts, pair.shots]
    try:
        for asset in assets:
            _ = asset.data  # reads and verifies (downloading into the cache when needed)
    except AssetError:
        return False
    return True


def eval_command(
    env_id: str, options: dict[str, Any], base_url: str, model: str, out: Path, ns: argparse.Namespace
) -> list[str]:
    argv = [
        str(Path(sys.executable).parent / "eval"),
        env_id,
        "--client.base-url",
        base_url,
        "-m",
        model,
        "--no-push",
        "--no-rich",
        "-o",
        str(out),
        "-c",
        str(ns.concurrency),
        "--sampling.temperature",
        str(DEMO_TEMPERATURE),
        "--sampling.max-tokens",
        str(ns.max_tokens),
        "--timeout.rollout",
        str(ns.rollout_timeout),
    ]
    for key, value in options.items():
        argv += [f"--taskset.{key}", value if isinstance(value, str) else json.dumps(value)]
    if ns.num_tasks:
        argv += ["-n", str(ns.num_tasks)]
    return argv


def count_tasks(env_id: str, options: dict[str, Any], num_tasks: int | None) -> int | None:
    """How many tasks the run will have (for the progress line); None when unknown."""
    try:
        from medhal.kit.lines import taskset_class, taskset_config_type

        config = taskset_config_type(env_id).model_validate({"id": env_id, **options})
        return len(taskset_class(env_id)(config).select(num_tasks))
    except Exception:  # the eval itself reports a broken setup; the count is cosmetic
        return None


def _lines(path: Path) -> int:
    try:
        with open(path, "rb") as f:
            return sum(1 for line in f if line.endswith(b"\n"))
    except OSError:
        return 0


EVAL_OUTPUT = ("eval.stdout", "eval.stderr")
"""Where the eval process's stdout and stderr go. Not `eval.log`: verifiers writes that
itself, the same log lines as on stderr in another format, and two writers at two offsets
of one file repeated and cut its lines."""


def run_with_progress(env_id: str, argv: list[str], out: Path, total: int | None) -> int:
    """Run one eval with its output in files (`EVAL_OUTPUT`), showing `env: done/total` as
    traces land."""
    out.mkdir(parents=True, exist_ok=True)
    tty = sys.stdout.isatty()
    started = time.monotonic()
    with open(out / EVAL_OUTPUT[0], "w") as stdout, open(out / EVAL_OUTPUT[1], "w") as stderr:
        process = subprocess.Popen(argv, stdout=stdout, stderr=stderr)
        last = -1
        while process.poll() is None:
            time.sleep(0.5)
            done = _lines(_traces_file(out))
            if tty or done != last:
                _progress(env_id, done, total, time.monotonic() - started, tty)
                last = done
        done = _lines(_traces_file(out))
        _progress(env_id, done, total, time.monotonic() - started, tty, final=True)
    return process.returncode


def _traces_file(out: Path) -> Path:
    found = sorted(out.glob("**/traces.jsonl"))
    return found[0] if found else out / "traces.jsonl"


def _progress(
    env_id: str, done: int, total: int | None, seconds: float, tty: bool, final: bool = False
) -> None:
    width = 24
    if total:
        filled = min(width, round(width * done / total))
        bar = "#" * filled + "." * (width - filled)
        text = f"{env_id:<14} [{bar}] {done}/{total} ({seconds:.0f}s)"
    else:
        text = f"{env_id:<14} {done} done ({seconds:.0f}s)"
    if tty:
        print("\r" + text, end="\n" if final else "", flush=True)
    elif final or done:
        print(text, flush=True)


def run_dir(out: Path) -> Path:
    """The directory eval wrote its traces into (eval nests a run id under `-o`)."""
    return _traces_file(out).parent


def cmd_demo(ns: argparse.Namespace) -> int:
    from medhal.commands.serve import EndpointFailed, model_endpoint

    envs = list(installed())
    if ns.env:
        unknown = sorted(set(ns.env) - set(envs))
        if unknown:
            print(f"medhal demo: error: unknown environment(s) {unknown}; installed: {envs}", file=sys.stderr)
            return 2
        envs = [e for e in envs if e in ns.env]
    if not envs:
        print(
            "medhal demo: error: no environments installed (entry-point group medhal.environments)",
            file=sys.stderr,
        )
        return 2
    root: Path = ns.output
    root.mkdir(parents=True, exist_ok=True)
    endpoint = ExitStack()
    try:
        base_url, model = endpoint.enter_context(model_endpoint(ns, "demo", output_dir=root))
    except EndpointFailed as e:
        return e.code
    started = time.time()
    print(
        f"eval logs go to {root}/<environment>/eval.log (and eval.stderr); reports to "
        f"{root}/<environment>/report.*",
        flush=True,
    )
    try:
        reports, failed, substituted = run_demos(ns, envs, base_url, model, root)
    finally:
        endpoint.close()
    return summarise(ns, reports, failed, substituted, f"{model} at {base_url}", model, root, started)


def run_demos(
    ns: argparse.Namespace, envs: list[str], base_url: str, model: str, root: Path
) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """Each environment's eval and report: (reports, environments whose eval failed,
    environments run with the demo prompts instead of the pinned ones)."""
    from medhal.reports.report_files import report_runs

    reports, failed, substituted = [], [], []
    for env_id in envs:
        options = demo_options(env_id, ns.full, ns.demo_prompts)
        if options.get("prompts") == "demo":
            substituted.append(env_id)
            why = "as asked" if ns.demo_prompts else "the pinned prompt files cannot be fetched here"
            print(
                f"{env_id}: {why}; running the demo rows with prompts written by medhal "
                "(not the benchmark's; the report says so)",
                flush=True,
            )
        out = root / env_id
        code = run_with_progress(
            env_id,
            eval_command(env_id, options, base_url, model, out, ns),
            out,
            count_tasks(env_id, options, ns.num_tasks),
        )
        if code != 0:
            failed.append(env_id)
            print(
                f"medhal demo: eval {env_id} exited {code}; see {out / EVAL_OUTPUT[1]} and eval.log there",
                file=sys.stderr,
            )
            continue
        _, [report], _ = report_runs([run_dir(out)], out, env_id)
        reports.append(report)
    return reports, failed, substituted


def summarise(
    ns: argparse.Namespace,
    reports: list[dict[str, Any]],
    failed: list[str],
    substituted: list[str],
    endpoint: str,
    model: str,
    root: Path,
    started: float,
) -> int:
    """Write the demo's own report.md and report.json, print the summary, and give the exit
    status: 1 when an eval failed or a run's error rate is above `--max-error-rate`."""
    from medhal.kit.files import atomic_write_text
    from medhal.reports.html import combined_html
    from medhal.reports.markdown import to_markdown
    from medhal.reports.report_files import error_rate_problems

    summary = summary_lines(reports, model, substituted)
    body = "\n".join(
        [f"# medhal demo ({endpoint})", "", *summary, ""] + [to_markdown(r, r["headline"]) for r in reports]
    )
    atomic_write_text(root / "report.md", body)
    atomic_write_text(root / "report.json", json.dumps(reports, indent=1, ensure_ascii=False) + "\n")
    links = [f"{r['benchmark']}/report.html" for r in reports]
    atomic_write_text(
        root / "report.html",
        combined_html(
            f"medhal demo ({endpoint})",
            [line for line in summary if not line.startswith("|")],
            reports,
            links,
        ),
    )
    print("\n" + "\n".join(summary))
    print(
        f"\nwrote {root / 'report.md'}, report.html ({time.time() - started:.0f}s); "
        f"per benchmark: {root}/<environment>/report.html"
    )
    if failed:
        print(f"medhal demo: no results for {', '.join(failed)}", file=sys.stderr)
        return 1
    problems = error_rate_problems(reports, ns.max_error_rate)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    return 0


def summary_lines(reports: list[dict[str, Any]], model: str, substituted: list[str]) -> list[str]:
    """The demo's table, each benchmark's headline first (a row per group for a per-group
    headline, Med-HALT's per test set), then the words around it."""
    from medhal.reports.headline import DEMO_COLUMNS, lead_rows
    from medhal.reports.markdown import figure_with_ci, table

    rows = [
        [
            r["benchmark"],
            lead["label"],
            figure_with_ci(lead["value"], lead["ci"]),
            lead["n"],
            lead["n_errors"],
            lead["parse_rate"],
        ]
        for r in reports
        for lead in lead_rows(r)
    ]
    lines = table(DEMO_COLUMNS, rows)
    lines.append("")
    lines.append(
        f"The demo proves the pipeline runs end to end with {model}; on a handful of rows written by "
        "medhal, the numbers say nothing about the model."
    )
    if substituted:
        lines.append(f"Prompts written by medhal stood in for the pinned ones in: {', '.join(substituted)}.")
    lines.append("Point it at a real model: medhal demo --base-url http://127.0.0.1:8000/v1 --model <name>")
    return lines


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `demo`."""
    from medhal.commands.report import add_max_error_rate
    from medhal.commands.serve import add_backend_args, positive_count

    demo = sub.add_parser(
        "demo",
        help="run every installed environment on its bundled sample and print a summary",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_argument(
        "--model",
        help="model name: required with --base-url and --backend vllm; the embedded model's by default",
    )
    demo.add_argument("--base-url", help="an OpenAI-compatible endpoint to use instead of starting a server")
    demo.add_argument(
        "--full",
        action="store_true",
        help="the real datasets and pinned prompts instead of the bundled samples",
    )
    demo.add_argument("--env", action="append", help="only this environment id (repeatable)")
    demo.add_argument(
        "--demo-prompts",
        action="store_true",
        help="prompts written by medhal instead of the benchmarks' pinned ones (no download; demo rows only)",
    )
    demo.add_argument(
        "-n",
        "--num-tasks",
        type=positive_count,
        help="at most this many tasks per environment (default: all)",
    )
    demo.add_argument("-o", "--output", type=Path, default=Path("outputs/demo"))
    demo.add_argument(
        "-c", "--concurrency", type=positive_count, default=4, help="rollouts in flight per eval (default 4)"
    )
    demo.add_argument("--max-tokens", type=int, default=DEMO_MAX_TOKENS)
    demo.add_argument(
        "--rollout-timeout", type=float, default=600.0, help="seconds per rollout (default 600)"
    )
    add_max_error_rate(demo, 0.0)
    add_backend_args(demo)
    demo.set_defaults(handler=cmd_demo)
