"""`medhal score ENV --predictions P.jsonl -o OUT`: replies made elsewhere, scored with the
environment's own scoring (`medhal.kit.predictions`), then reported."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from medhal.commands.report import add_max_error_rate, gate, summary_lines
from medhal.kit.files import StagedFiles
from medhal.kit.options import parse_taskset_options, taskset_config
from medhal.reports.registry import report_spec
from medhal.reports.report_files import build_report_of, read_runs, render
from medhal.reports.traces import RUN_CONFIG


def cmd_score(ns: argparse.Namespace) -> int:
    from medhal.kit.lines import taskset_class
    from medhal.kit.predictions import read_predictions, score_tasks, write_traces, written_by_score

    traces_path = ns.output / "traces.jsonl"
    if traces_path.exists() and not ns.overwrite and not written_by_score(traces_path):
        raise ValueError(
            f"{traces_path}: not written by medhal score (an eval run's traces?); refusing to replace "
            "it: give another -o, or --overwrite"
        )
    options = parse_taskset_options(ns.taskset_args)
    if ns.dataset_path is not None:
        options["dataset_path"] = str(ns.dataset_path)
    report_spec(ns.env_id)  # an unknown environment is one line, before anything loads
    config = taskset_config(ns.env_id, options)
    tasks = taskset_class(ns.env_id)(config).select()
    replies = read_predictions(ns.predictions, {t.data.idx for t in tasks})
    traces = asyncio.run(score_tasks(tasks, replies, ns.model))
    # The traces and their report land together or not at all: a failure while reporting
    # leaves the previous traces and report as they were. An eval's config.toml beside them
    # describes the traces replaced (their rollouts per task): it goes with them.
    with StagedFiles() as staged:
        staged_traces = write_traces(traces, ns.output, staged)
        staged.remove(ns.output / RUN_CONFIG)
        runs = read_runs([staged_traces], ns.output, ns.env_id)
        for run, _ in runs:
            run.path = str(traces_path)
        reports = [build_report_of(run, ns.output) for run, _ in runs]
        for name, content in render(reports[0], not ns.no_plots, runs[0][0].view).items():
            staged.write(ns.output / name, content)
        staged.commit()
    missing = len(tasks) - len(replies)
    if missing:
        print(
            f"{missing} of {len(tasks)} tasks had no prediction: recorded as errors (MissingPrediction)",
            file=sys.stderr,
        )
    if ns.print:
        from medhal.reports.markdown import to_markdown

        print(to_markdown(reports[0], reports[0]["headline"]))
    else:
        print("\n".join(summary_lines(reports[0], ns.output)))
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
    sc.add_argument(
        "--overwrite",
        action="store_true",
        help="replace OUT/traces.jsonl even when medhal score did not write it (an eval run's traces)",
    )
    add_max_error_rate(sc, 1.0)
    sc.add_argument("--no-plots", action="store_true", help="skip the PNG plots (faster)")
    sc.add_argument(
        "--print", action="store_true", help="print the whole report.md instead of a short summary"
    )
    sc.set_defaults(handler=cmd_score, takes_taskset_options=True)
