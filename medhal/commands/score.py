"""`medhal score ENV --predictions P.jsonl -o OUT`: replies made elsewhere, scored with the
environment's own scoring (`medhal.kit.predictions`), then reported."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from medhal.commands.report import add_max_error_rate, gate, summary_lines
from medhal.kit.files import StagedFiles
from medhal.kit.options import parse_taskset_options
from medhal.reports.registry import report_spec
from medhal.reports.report_files import build_report_of, read_runs, render
from medhal.reports.traces import RUN_CONFIG


def cmd_score(ns: argparse.Namespace) -> int:
    from medhal.kit.predictions import read_predictions, score_tasks, select_run_tasks, written_by_score

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
    tasks = select_run_tasks(ns.env_id, options)
    replies = read_predictions(ns.predictions, {t.data.idx for t in tasks})
    traces = asyncio.run(score_tasks(tasks, replies, ns.model))
    # The traces and their report land together or not at all: a failure while reporting
    # leaves the previous traces and report as they were. An eval's config.toml beside them
    # describes the traces replaced (their rollouts per task): it goes with them.
    with StagedFiles() as staged:
        report, _ = stage_scored_run(traces, ns.output, ns.env_id, not ns.no_plots, staged)
        staged.commit()
    reports = [report]
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


def stage_scored_run(
    traces: list[Any],
    out: Path,
    env_id: str,
    plots: bool,
    staged: StagedFiles,
    rollouts: tuple[int, str] | None = None,
) -> tuple[dict[str, Any], Path]:
    """Stage `out/traces.jsonl` and the report made from it (`staged` commits them with the
    caller's other files, or drops them all): the report, and the staged traces (readable
    until the commit). `rollouts`: rollouts per task the run asked for and the file that says
    so, when known."""
    from medhal.kit.predictions import write_traces

    staged_traces = write_traces(traces, out, staged)
    staged.remove(out / RUN_CONFIG)  # an eval's config.toml describes the traces replaced
    [(run, _)] = read_runs([staged_traces], out, env_id)
    run.path = str(out / "traces.jsonl")
    run.expect_rollouts(rollouts)
    report = build_report_of(run, out)
    for name, content in render(report, plots, run.view).items():
        staged.write(out / name, content)
    return report, staged_traces


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
