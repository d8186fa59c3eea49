"""`medhal demo`: every installed environment, end to end, on its bundled sample.

For each environment registered under the `medhal.environments` entry points, run
`eval <id>` with its default (in-process) harness and its `DEMO_OPTIONS` (a few rows
written by us), against the embedded local model (started here) or any endpoint given
with `--base-url`; then report each run and print a combined table. `--full` drops the
demo options, so the environments load their real, pinned datasets.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from medhal.registry import installed_environments

DEMO_SAMPLING = {"temperature": 0.0, "max_tokens": 160}
"""Greedy and short: the demo shows the pipeline, not a model's best effort."""


def eval_command(env_id: str, module: str, base_url: str, model: str, out: Path, ns: argparse.Namespace) -> list[str]:
    argv = [str(Path(sys.executable).parent / "eval"), env_id, "--client.base-url", base_url, "-m", model,
            "--no-push", "-o", str(out), "-c", str(ns.concurrency),
            "--sampling.temperature", str(DEMO_SAMPLING["temperature"]),
            "--sampling.max-tokens", str(ns.max_tokens), "--timeout.rollout", str(ns.rollout_timeout)]
    if not ns.full:
        options: dict[str, Any] = getattr(importlib.import_module(module), "DEMO_OPTIONS", {})
        for key, value in options.items():
            argv += [f"--taskset.{key}", value if isinstance(value, str) else json.dumps(value)]
    if ns.num_tasks:
        argv += ["-n", str(ns.num_tasks)]
    return argv


def run_env(argv: list[str], out: Path) -> int:
    """Run one eval with visible progress: verifiers' live dashboard on a terminal, its
    per-rollout log lines otherwise (the per-trace JSON dump goes to a file)."""
    out.mkdir(parents=True, exist_ok=True)
    if sys.stdout.isatty():
        return subprocess.run(argv).returncode
    with open(out / "eval.stdout", "w") as dump:
        return subprocess.run([*argv, "--no-rich"], stdout=dump).returncode


def cmd_demo(ns: argparse.Namespace) -> int:
    from medhal.cli import check_error_rate, report_one
    from medhal.report import comparison_markdown, to_markdown

    envs = installed_environments()
    if ns.env:
        unknown = sorted(set(ns.env) - set(envs))
        if unknown:
            print(f"medhal demo: unknown environment(s) {unknown}; installed: {list(envs)}", file=sys.stderr)
            return 2
        envs = {k: v for k, v in envs.items() if k in ns.env}
    if not envs:
        print("medhal demo: no environments installed (entry-point group medhal.environments)", file=sys.stderr)
        return 2
    root: Path = ns.output
    local = None
    if ns.base_url:
        base_url, model = ns.base_url, ns.model or "default"
    else:
        from medhal.commands_local import LocalModelFailed, local_model_errors, local_model_from_args

        local = local_model_from_args(ns)
        try:
            with local_model_errors("demo"):
                local.start()
        except LocalModelFailed as e:
            return e.code
        base_url, model = local.base_url, ns.model or local.model
        print(f"local model {local.model} ready at {base_url} in {local.startup_seconds:.1f}s", flush=True)
    started = time.time()
    reports, specs, failed = [], [], []
    try:
        for env_id, module in envs.items():
            out = root / env_id
            print(f"\n=== {env_id} ===", flush=True)
            code = run_env(eval_command(env_id, module, base_url, model, out, ns), out)
            if code != 0:
                failed.append(env_id)
                print(f"medhal demo: eval {env_id} exited {code} (see its output above)", file=sys.stderr)
                continue
            report, spec, _ = report_one(out, out, env_id)
            reports.append(report)
            specs.append(spec)
    finally:
        if local is not None:
            local.stop()
    table = comparison_markdown(reports, specs)
    root.mkdir(parents=True, exist_ok=True)
    parts = [f"# medhal demo ({model} at {base_url})", "", table]
    for report, spec in zip(reports, specs):
        body = to_markdown(report, spec)
        parts += [body, *[f"![{p}]({report['benchmark']}/{p})" for p in report["plots"]], ""]
    (root / "report.md").write_text("\n".join(parts))
    (root / "report.json").write_text(json.dumps(reports, indent=1, ensure_ascii=False) + "\n")
    print("\n" + table)
    plots = [f"{root / r['benchmark'] / p}" for r in reports for p in r["plots"]]
    print(f"wrote {root / 'report.md'} and {len(plots)} plots ({time.time() - started:.0f}s):")
    print("\n".join(f"  {p}" for p in plots))
    if failed:
        print(f"medhal demo: no results for {', '.join(failed)}", file=sys.stderr)
        return 1
    return check_error_rate(reports, ns.max_error_rate)


def add_parser(sub: argparse._SubParsersAction, add_local_model_args) -> None:
    demo = sub.add_parser(
        "demo",
        help="run every installed environment on its bundled sample and print the combined report",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.add_argument("--model", help="model name (default: the local model's)")
    demo.add_argument("--base-url", help="an OpenAI-compatible endpoint to use instead of the local model")
    demo.add_argument("--full", action="store_true", help="the real datasets instead of the bundled samples")
    demo.add_argument("--env", action="append", help="only this environment id (repeatable)")
    demo.add_argument("-n", "--num-tasks", type=int, help="at most this many tasks per environment")
    demo.add_argument("-o", "--output", type=Path, default=Path("outputs/demo"))
    demo.add_argument("-c", "--concurrency", type=int, default=4)
    demo.add_argument("--max-tokens", type=int, default=DEMO_SAMPLING["max_tokens"])
    demo.add_argument("--rollout-timeout", type=float, default=300.0, help="seconds per rollout (default 300)")
    demo.add_argument("--max-error-rate", type=float, default=0.0, help="exit 1 above this error rate (default 0)")
    add_local_model_args(demo)
    demo.set_defaults(handler=cmd_demo)
