"""The `medhal` command: every subcommand is registered here, each as a handler taking the
parsed namespace; library errors become one-line messages and exit status 2 here and
only here.

Exit status: 0 success; 1 a gate failed (error rate above --max-error-rate, an
incomplete run, runs that differ under --strict-compare); 2 bad input (a file, a line and
a field are named); 3 a missing optional extra.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any, NoReturn

from medhal.assets import AssetError
from medhal.datasets import DatasetError
from medhal.registry import UnknownEnvironment, report_spec
from medhal.report_files import gate, rate, report_runs, write_comparison
from medhal.traces import TraceFileError

TASKSET_PREFIX = "--taskset."


class OptionError(ValueError):
    """A `--taskset.*` option is malformed or not valid for the environment."""


BAD_INPUT = (TraceFileError, DatasetError, AssetError, UnknownEnvironment, OptionError, ValueError, OSError)
"""Errors that mean the input is wrong: one line, exit 2."""


# ------------------------------------------------------------------------------ options


def parse_taskset_options(args: list[str]) -> dict[str, Any]:
    """`--taskset.<option> value` / `--taskset.<option>=value` pairs, as `eval` takes them.
    Values are read as JSON when they parse (true, 3, null), else kept as text."""
    options: dict[str, Any] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith(TASKSET_PREFIX):
            raise OptionError(
                f"unexpected argument {arg!r}; environment options look like {TASKSET_PREFIX}<option> <value>"
            )
        key, eq, value = arg[len(TASKSET_PREFIX) :].partition("=")
        if not eq:
            if i + 1 >= len(args):
                raise OptionError(f"option {arg} needs a value")
            value = args[i + 1]
            i += 1
        try:
            options[key.replace("-", "_")] = json.loads(value)
        except json.JSONDecodeError:
            options[key.replace("-", "_")] = value
        i += 1
    return options


def taskset_config(env_id: str, options: dict[str, Any]) -> Any:
    """The environment's taskset config, validated by its own pydantic model; a bad value
    is one line per option (`option subset: Input should be 'all' or ...`)."""
    from pydantic import ValidationError
    from verifiers.v1.loaders import taskset_config_type

    try:
        return taskset_config_type(env_id).model_validate({"id": env_id, **options})
    except ValidationError as e:
        problems = "; ".join(
            f"option {'.'.join(str(p) for p in err['loc']) or '(config)'}: {err['msg']}"
            + (f" (got {err['input']!r})" if "input" in err and not isinstance(err["input"], dict) else "")
            for err in e.errors()
        )
        raise OptionError(f"invalid options for {env_id}: {problems}") from None


# ------------------------------------------------------------------------------ report


def cmd_report(ns: argparse.Namespace) -> int:
    from medhal.markdown import to_markdown

    runs, reports, outs = report_runs(
        [Path(p) for p in ns.runs], ns.output, ns.env, plots=not ns.no_plots, merge=ns.merge
    )
    for report, out in zip(reports, outs, strict=True):
        print(to_markdown(report, report["headline"]))
        print(
            f"wrote {out}/report.json, report.md, report.html{''.join(', ' + p for p in report['plots'])}\n"
        )
    code = 0
    if len(reports) > 1:
        target = ns.output or Path("outputs") / "comparison"
        text, comparisons = write_comparison(runs, reports, target)
        print(text)
        print(f"wrote {target}/comparison.md, comparison.json, comparison.html")
        differing = [row for c in comparisons for row in c["runs"] if row["differs_in"]]
        if differing and ns.strict_compare:
            print("medhal report: runs differ in code or setting (--strict-compare)", file=sys.stderr)
            code = 1
    return max(code, gate(reports, ns.max_error_rate, ns.allow_incomplete))


# ------------------------------------------------------------------------------- score


def cmd_score(ns: argparse.Namespace) -> int:
    from verifiers.v1.loaders import taskset_class

    from medhal.scoring import read_predictions, score_tasks, write_traces

    options = parse_taskset_options(ns.taskset_args)
    if ns.dataset_path is not None:
        options["dataset_path"] = str(ns.dataset_path)
    report_spec(ns.env_id)  # an unknown environment is one line, before anything loads
    config = taskset_config(ns.env_id, options)
    tasks = taskset_class(ns.env_id)(config).select()
    replies = read_predictions(ns.predictions, {t.data.idx for t in tasks})
    traces = asyncio.run(score_tasks(tasks, replies, ns.model))
    write_traces(traces, ns.output)
    missing = len(tasks) - len(replies)
    if missing:
        print(
            f"{missing} of {len(tasks)} tasks had no prediction: recorded as errors (MissingPrediction)",
            file=sys.stderr,
        )
    _, reports, _ = report_runs([ns.output], ns.output, ns.env_id, plots=not ns.no_plots)
    from medhal.markdown import to_markdown

    print(to_markdown(reports[0], reports[0]["headline"]))
    return gate(reports, ns.max_error_rate, allow_incomplete=True)


# ------------------------------------------------------------------------------ parser


class OneLineParser(argparse.ArgumentParser):
    """argparse, with a usage error as one line (exit 2) instead of usage text plus error."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="medhal", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub: argparse._SubParsersAction[argparse.ArgumentParser] = parser.add_subparsers(
        dest="command", required=True, parser_class=OneLineParser
    )

    rep = sub.add_parser(
        "report", help="report.json/md/html and plots for one or more runs; several are compared"
    )
    rep.add_argument("runs", nargs="+", help="eval output directories or traces.jsonl files")
    rep.add_argument("-o", "--output", type=Path, help="output directory (default: next to each trace file)")
    rep.add_argument("--env", help="environment id (default: read from the traces)")
    rep.add_argument(
        "--max-error-rate",
        type=rate,
        default=0.0,
        help="exit 1 when a run's failed share exceeds this (0..1, default 0)",
    )
    rep.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="do not fail on missing or duplicated tasks or mixed provenance",
    )
    rep.add_argument(
        "--strict-compare",
        action="store_true",
        help="fail when compared runs differ in code, reading, prompt, data or sampling",
    )
    rep.add_argument("--no-plots", action="store_true", help="skip the PNG plots (faster)")
    rep.add_argument(
        "--merge",
        action="store_true",
        help="report the runs as ONE run (the shards of a split run); -o sets where",
    )
    rep.set_defaults(handler=cmd_report)

    sc = sub.add_parser(
        "score",
        help="score predictions made elsewhere with an environment's own scoring",
        description="Score replies produced elsewhere with the environment's own scoring. Environment "
        "options follow as --taskset.<option> VALUE (as `eval` takes them), e.g. --taskset.subset scifact.",
    )
    sc.add_argument("env_id")
    sc.add_argument("--predictions", type=Path, required=True, help='JSONL of {"idx": int, "reply": str}')
    sc.add_argument("--dataset-path", type=Path, help="local dataset file (else the pinned Hub dataset)")
    sc.add_argument("-o", "--output", type=Path, required=True)
    sc.add_argument("--model", default="offline", help="model name recorded on the traces")
    sc.add_argument(
        "--max-error-rate",
        type=rate,
        default=1.0,
        help="exit 1 when the missing/errored share exceeds this (0..1)",
    )
    sc.add_argument("--no-plots", action="store_true", help="skip the PNG plots (faster)")
    sc.set_defaults(handler=cmd_score, takes_taskset_options=True)

    from medhal import commands_fetch, demo, repair, serve

    serve.add_parsers(sub)
    demo.add_parser(sub)
    repair.add_parser(sub)
    commands_fetch.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    ns, rest = parser.parse_known_args(argv)
    if rest and not getattr(ns, "takes_taskset_options", False):
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    ns.taskset_args = rest
    try:
        code = ns.handler(ns)
    except BAD_INPUT as e:
        message = " ".join(str(e).split("\n")[:1]) if isinstance(e, OSError) else str(e)
        print(f"medhal {ns.command}: error: {message}", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        print(f"medhal {ns.command}: interrupted", file=sys.stderr)
        code = 130
    raise SystemExit(code)
