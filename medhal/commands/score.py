"""`medhal score ENV --predictions P.jsonl -o OUT`: replies made elsewhere, scored with the
environment's own scoring (`medhal.kit.predictions`), then reported."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from medhal.commands.report import add_max_error_rate, gate
from medhal.kit.options import parse_taskset_options, taskset_config
from medhal.reports.registry import report_spec
from medhal.reports.report_files import report_runs


def cmd_score(ns: argparse.Namespace) -> int:
    from medhal.kit.lines import taskset_class
    from medhal.kit.predictions import read_predictions, score_tasks, write_traces

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
    from medhal.reports.markdown import to_markdown

    print(to_markdown(reports[0], reports[0]["headline"]))
    return gate(reports, ns.max_error_rate, allow_incomplete=True)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `score`."""
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
    add_max_error_rate(sc, 1.0)
    sc.add_argument("--no-plots", action="store_true", help="skip the PNG plots (faster)")
    sc.set_defaults(handler=cmd_score, takes_taskset_options=True)
