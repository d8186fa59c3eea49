"""The `medhal` command: report on runs, score predictions made elsewhere, and (with the
`local` extra) serve the embedded model and run the demo."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from medhal.datasets import DatasetError
from medhal.registry import report_spec
from medhal.report import build_report, comparison_markdown, read_run, to_markdown
from medhal.plots import write_plots
from medhal.traces import TraceFileError, iter_traces, resolve_trace_file


def parse_env_options(args: list[str], prefix: str = "--taskset.") -> dict[str, Any]:
    """`--taskset.<option> value` / `--taskset.<option>=value` pairs, as `eval` takes them.
    Values are read as JSON when they parse (true, 3, null), else kept as strings."""
    options: dict[str, Any] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith(prefix):
            raise SystemExit(f"unexpected argument {arg!r}; environment options look like {prefix}<option> <value>")
        key, eq, value = arg[len(prefix):].partition("=")
        if not eq:
            if i + 1 >= len(args):
                raise SystemExit(f"option {arg} needs a value")
            value = args[i + 1]
            i += 1
        try:
            options[key.replace("-", "_")] = json.loads(value)
        except json.JSONDecodeError:
            options[key.replace("-", "_")] = value
        i += 1
    return options


def load_tasks(env_id: str, options: dict[str, Any]) -> list:
    from pydantic import ValidationError
    from verifiers.v1.loaders import taskset_class, taskset_config_type

    try:
        config = taskset_config_type(env_id).model_validate({"id": env_id, **options})
    except ValidationError as e:
        raise SystemExit(f"invalid options for {env_id}: {e}") from e
    return taskset_class(env_id)(config).select()


def _benchmark_of(path: Path) -> str:
    for record in iter_traces(path):
        benchmark = record.data.get("benchmark")
        if not isinstance(benchmark, str):
            raise TraceFileError(f"{record.where}: field 'task.data.benchmark' is missing (not a medhal trace?)")
        return benchmark
    raise TraceFileError(f"{path}: no rollouts in this file")


def report_one(path: Path, out_dir: Path | None, env_id: str | None = None) -> tuple[dict, Any, Path]:
    trace_file = resolve_trace_file(path)
    spec = report_spec(env_id or _benchmark_of(trace_file))
    report = build_report(read_run(trace_file, spec), spec)
    out = out_dir or trace_file.parent
    out.mkdir(parents=True, exist_ok=True)
    report["plots"] = [p.name for p in write_plots(report, out)]
    (out / "report.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    (out / "report.md").write_text(to_markdown(report, spec))
    return report, spec, out


def error_summary(reports: list[dict]) -> str:
    lines = []
    for report in reports:
        lines.append(f"{report['benchmark']}: {report['n_errors']} of {report['n']} rollouts failed")
        lines += [f"  {count} x {message[:300]}" for message, count in report["errors"].items()]
    return "\n".join(lines)


def cmd_report(ns: argparse.Namespace) -> int:
    reports, specs = [], []
    for i, path in enumerate(ns.runs):
        out = None
        if ns.output is not None:
            out = ns.output if len(ns.runs) == 1 else ns.output / f"run{i + 1}"
        report, spec, out_dir = report_one(Path(path), out, ns.env)
        reports.append(report)
        specs.append(spec)
        print(to_markdown(report, spec))
        print(f"wrote {out_dir}/report.json, report.md, {', '.join(report['plots'])}\n")
    if len(reports) > 1:
        table = comparison_markdown(reports, specs)
        target = ns.output or Path("outputs") / "comparison"
        target.mkdir(parents=True, exist_ok=True)
        (target / "comparison.md").write_text(table)
        (target / "comparison.json").write_text(json.dumps(reports, indent=1, ensure_ascii=False) + "\n")
        print(table)
    return check_error_rate(reports, ns.max_error_rate)


def check_error_rate(reports: list[dict], max_error_rate: float) -> int:
    failing = [r for r in reports if r["n"] and r["n_errors"] / r["n"] > max_error_rate]
    if not failing:
        return 0
    print(f"error rate above --max-error-rate {max_error_rate}:\n{error_summary(failing)}", file=sys.stderr)
    return 1


def cmd_score(ns: argparse.Namespace, env_args: list[str]) -> int:
    from medhal.scoring import read_predictions, score_tasks, write_traces

    options = parse_env_options(env_args)
    if ns.dataset_path is not None:
        options["dataset_path"] = str(ns.dataset_path)
    tasks = load_tasks(ns.env_id, options)
    replies = read_predictions(ns.predictions, {t.data.idx for t in tasks})
    traces = asyncio.run(score_tasks(tasks, replies, ns.model))
    write_traces(traces, ns.output)
    missing = len(tasks) - len(replies)
    if missing:
        print(f"{missing} of {len(tasks)} tasks had no prediction: recorded as errors (MissingPrediction)", file=sys.stderr)
    report, spec, _ = report_one(ns.output, ns.output, ns.env_id)
    print(to_markdown(report, spec))
    return check_error_rate([report], ns.max_error_rate)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="medhal", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    rep = sub.add_parser("report", help="write report.json/md/png for one or more runs")
    rep.add_argument("runs", nargs="+", help="eval output directories or traces.jsonl files")
    rep.add_argument("-o", "--output", type=Path, help="output directory (default: next to each trace file)")
    rep.add_argument("--env", help="environment id (default: read from the traces)")
    rep.add_argument("--max-error-rate", type=float, default=0.0, help="exit 1 when a run's error rate exceeds this (default 0)")

    sc = sub.add_parser("score", help="score predictions made elsewhere with an environment's own scoring")
    sc.add_argument("env_id")
    sc.add_argument("--predictions", type=Path, required=True, help='JSONL of {"idx": int, "reply": str}')
    sc.add_argument("--dataset-path", type=Path, help="local dataset file (else the pinned Hub dataset)")
    sc.add_argument("-o", "--output", type=Path, required=True)
    sc.add_argument("--model", default="offline", help="model name recorded on the traces")
    sc.add_argument("--max-error-rate", type=float, default=1.0, help="exit 1 when the missing/errored share exceeds this")

    from medhal import commands_local

    commands_local.add_parsers(sub)
    return parser


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    ns, rest = parser.parse_known_args(argv)
    try:
        if ns.command == "score":
            code = cmd_score(ns, rest)
        elif rest:
            parser.error(f"unrecognized arguments: {' '.join(rest)}")
        elif ns.command == "report":
            code = cmd_report(ns)
        else:
            code = ns.handler(ns)
    except (TraceFileError, DatasetError, ValueError, OSError) as e:
        print(f"medhal {ns.command}: error: {e}", file=sys.stderr)
        code = 2
    raise SystemExit(code)
