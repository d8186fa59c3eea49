"""`medhal rescore RUN -o OUT`: every reply of a run's traces read and scored again under the
environment installed now (the replies as recorded, no model), written as a new run with its
report, beside a comparison of the two readings (comparison.md, comparison.json).

The run's tasks are selected again from the options and the selection its traces record, and
each reply is scored by the same path `medhal score` takes (`medhal.kit.predictions`,
`medhal.kit.task.score_reply`). A rollout keeps its identity (its trace id, its task: several
rollouts of a task stay several); one that failed stays failed, with its error. What cannot be
reproduced is refused in one line (exit 2) before anything is written: options the installed
version does not take, another selection of tasks, a task whose content differs from the one
the reply answered, an output directory that is the run itself or already holds traces.
Everything lands together or not at all.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

from medhal.commands.report import add_max_error_rate, gate, summary_lines
from medhal.kit.files import StagedFiles
from medhal.reports.traces import (
    TRACE_FILES,
    TraceFileError,
    TraceRecord,
    configured_rollouts,
    resolve_trace_file,
)


def cmd_rescore(ns: argparse.Namespace) -> int:
    from medhal.commands.score import stage_scored_run
    from medhal.reports.rescore import compare, comparison_markdown, outcome
    from medhal.reports.traces import iter_traces

    source = resolve_trace_file(ns.run)
    out: Path = ns.output
    refuse_output(source, out)
    env_id, recorded, tasks = read_run_again(source, ns.dataset_path)
    from medhal.reports.report_files import shown_source

    note = {
        "traces": shown_source(source, out),
        "sha256": file_sha256(source),
        "code": recorded_codes(source),
    }
    traces = asyncio.run(rescored_traces(recorded, tasks, note))
    old_report = old_reading(source, env_id, out)
    configured = configured_rollouts(source)
    rollouts = None if configured is None else (configured[0], "config.toml")  # the one written below
    with StagedFiles() as staged:
        report, staged_traces = stage_scored_run(traces, out, env_id, not ns.no_plots, staged, rollouts)
        if rollouts is not None:
            staged.write(out / "config.toml", ROLLOUTS_NOTE + f"num_rollouts = {rollouts[0]}\n")
        now = [outcome(record) for record in iter_traces(staged_traces)]
        comparison = compare(zip(recorded, now, strict=True), old_report, report)
        text = comparison_markdown(comparison)
        staged.write(out / "comparison.md", text)
        staged.write(out / "comparison.json", json.dumps(comparison, indent=1, ensure_ascii=False) + "\n")
        staged.commit()
    if ns.print:
        from medhal.reports.markdown import to_markdown

        print(to_markdown(report, report["headline"]))
        print(text)
    else:
        print("\n".join(summary_lines(report, out)))
        print(
            f"Rescored {comparison['n']} rollouts: {comparison['n_changed']} changed "
            f"(reading, rightness or reward); see {out / 'comparison.md'} and comparison.json"
        )
    return gate([report], ns.max_error_rate, allow_incomplete=True)


ROLLOUTS_NOTE = (
    "# Written by medhal rescore, not by eval: the rollouts per task of the run it rescored, so that\n"
    "# `medhal report` checks this run against them as it checked that one.\n"
)


def refuse_output(source: Path, out: Path) -> None:
    """A rescore writes a new run, never over an old one: OUT may be neither the run's own
    directory nor a directory that already holds traces."""
    if out.resolve() == source.parent.resolve():
        raise ValueError(f"{out}: this is the run's own directory; rescore writes a new run: give another -o")
    for name in TRACE_FILES:
        if (out / name).exists():
            raise ValueError(
                f"{out / name}: already holds a run's traces; rescore writes a new run: give another -o"
            )


def read_run_again(source: Path, dataset_path: Path | None) -> tuple[str, list[Any], dict[int, Any]]:
    """The run's environment, its rollouts as recorded and its tasks selected again by the
    installed environment (by idx), every rollout checked against them."""
    from medhal.reports.rescore import read_recorded, run_setting

    rollouts = read_recorded(source)
    first = next(rollouts, None)
    if first is None:
        raise TraceFileError(f"{source}: no rollouts in this file")
    env_id = environment_of(first[0])
    options, selection = run_setting(first[0])
    if dataset_path is not None:
        options["dataset_path"] = str(dataset_path)
    tasks = select_again(env_id, options, selection, first[0])
    recorded = []
    for record, rollout in [first, *rollouts]:
        check_rollout(record, env_id, first[0], tasks, dataset_path is not None)
        recorded.append(rollout)
    return env_id, recorded, tasks


def environment_of(record: TraceRecord) -> str:
    """The benchmark a trace is for, resolved through the installed environments only."""
    from medhal.reports.registry import UnknownEnvironment, entry_point, normal_id

    benchmark = record.data.get("benchmark")
    try:
        entry_point(benchmark)
    except UnknownEnvironment as e:
        raise TraceFileError(f"{record.where}: field 'task.data.benchmark': {e}") from None
    return normal_id(str(benchmark))


def installed_version(env_id: str) -> str:
    from medhal.reports.registry import distribution

    return " ".join(distribution(env_id))


def select_again(
    env_id: str, options: dict[str, Any], selection: dict[str, Any], first: TraceRecord
) -> dict[int, Any]:
    """The run's tasks, selected again with its options and selection by the installed
    environment, by idx; options it does not take, or another selection, are refused."""
    from medhal.kit.datasets import DatasetError
    from medhal.kit.options import OptionError
    from medhal.kit.predictions import select_run_tasks

    shard = selection.get("shard")
    chosen = {**options, **({"shard": shard} if shard else {})}
    try:
        tasks = select_run_tasks(env_id, chosen, selection.get("num_tasks"), bool(selection.get("shuffle")))
    except OptionError as e:
        raise OptionError(
            f"{first.where}: the run's options cannot be reproduced by the installed "
            f"{installed_version(env_id)}: {e}"
        ) from None
    except DatasetError as e:
        hint = (
            " (the dataset file the run read is elsewhere now? --dataset-path)"
            if options.get("dataset_path")
            else ""
        )
        raise DatasetError(f"{e}{hint}") from None
    now = dict(tasks[0].data.selection) if tasks else {}
    for key in sorted(set(selection) | set(now)):
        if selection.get(key) != now.get(key):
            raise ValueError(
                f"{first.where}: the installed {installed_version(env_id)} selects other tasks with the "
                f"run's options (selection {key}: {selection.get(key)!r} in the run, {now.get(key)!r} now)"
            )
    return {task.data.idx: task for task in tasks}


def check_rollout(
    record: TraceRecord, env_id: str, first: TraceRecord, tasks: dict[int, Any], new_path: bool
) -> None:
    """One rollout of the run: of its benchmark, with the first rollout's options and
    selection, on a task the installed environment builds as the reply saw it."""
    from medhal.reports.rescore import data_difference

    data, first_data = record.data, first.data
    if data.get("benchmark") != first_data.get("benchmark"):
        raise TraceFileError(
            f"{record.where}: field 'task.data.benchmark' is {data.get('benchmark')!r}, not {env_id!r} "
            f"as on line {first.line}"
        )
    if data.get("selection") != first_data.get("selection"):
        raise TraceFileError(
            f"{record.where}: field 'task.data.selection' differs from line {first.line}'s (one run?)"
        )
    if run_options(data) != run_options(first_data):
        raise TraceFileError(
            f"{record.where}: field 'task.data.provenance.options' differs from line "
            f"{first.line}'s (one run?)"
        )
    task = tasks.get(data["idx"])
    if task is None:
        raise TraceFileError(
            f"{record.where}: task idx {data['idx']} is not a task the installed {installed_version(env_id)} "
            "selects with the run's options"
        )
    differs = data_difference(data, task.data.model_dump(mode="json"), content_fields(task.data))
    if differs is not None:
        raise TraceFileError(
            f"{record.where}: field 'task.data.{differs}' of idx {data['idx']} differs from the task the "
            f"installed {installed_version(env_id)} builds: the reply answered another task, so it cannot "
            "be rescored" + ("" if new_path else " (another dataset file? --dataset-path)")
        )


def run_options(data: dict[str, Any]) -> Any:
    provenance = data.get("provenance")
    return provenance.get("options") if isinstance(provenance, dict) else None


def content_fields(data: Any) -> list[str]:
    """What a task is: its prompt and the fields its benchmark adds to verifiers' task data."""
    import verifiers.v1 as vf

    from medhal.reports.rescore import TASK_CONTENT

    return [
        *TASK_CONTENT,
        *(name for name in type(data).model_fields if name not in vf.TaskData.model_fields),
    ]


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def recorded_codes(source: Path) -> Any:
    """The code versions that scored the run (one block, or the distinct ones of a run
    resumed under other versions)."""
    from medhal.reports.report import DistinctValues
    from medhal.reports.traces import iter_traces

    codes = DistinctValues()
    for record in iter_traces(source):
        provenance = record.data.get("provenance")
        codes.add(provenance.get("code") if isinstance(provenance, dict) else None)
    return codes.values[0] if len(codes) == 1 else codes.values


async def rescored_traces(recorded: list[Any], tasks: dict[int, Any], note: dict[str, Any]) -> list[Any]:
    """One new trace per recorded rollout, in the run's order: the reply as recorded scored by
    the task's own scoring (a failed rollout keeps its error); its trace id, model and
    sampling kept; the task's provenance saying what was rescored (`rescored_from`)."""
    from medhal.kit.predictions import failed_trace, offline_trace
    from medhal.kit.task import score_reply

    stamped = {
        idx: with_provenance(task, {**task.data.provenance, "rescored_from": note})
        for idx, task in tasks.items()
    }

    async def one(rollout: Any) -> Any:
        task = stamped[rollout.idx]
        if rollout.error is not None:
            trace = failed_trace(task, *rollout.error)
        else:
            trace = await score_reply(task, rollout.reply, rollout.reasoning, rollout.finish_reason)
        trace = offline_trace(trace, rollout.model or "unknown")
        keep_sampling(trace, rollout.sampling)
        if rollout.rollout_id is not None:
            trace.id = rollout.rollout_id
        return trace

    return list(await asyncio.gather(*(one(r) for r in recorded)))


def with_provenance(task: Any, provenance: dict[str, Any]) -> Any:
    """`task` with another provenance block (0.4 tasks are copied with `with_data`, 0.2 tasks
    take new data)."""
    if hasattr(task, "with_data"):
        return task.with_data(provenance=provenance)
    task.data = task.data.model_copy(update={"provenance": provenance})
    return task


def keep_sampling(trace: Any, sampling: dict[str, Any]) -> None:
    """The run's sampling settings on a rescored trace (0.2 records them on the agent, 0.4 on
    its config); settings this verifiers does not know are left out."""
    holder = getattr(trace.agent, "config", None) or trace.agent
    kind = type(holder.sampling)
    holder.sampling = kind.model_validate({k: v for k, v in sampling.items() if k in kind.model_fields})


def old_reading(source: Path, env_id: str, out: Path) -> dict[str, Any]:
    """The report of the run as it was read (its traces' own outcomes), for the comparison."""
    from medhal.reports.registry import report_spec
    from medhal.reports.report import read_run
    from medhal.reports.report_files import build_report_of

    return build_report_of(read_run(source, report_spec(env_id)), out)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `rescore`."""
    rs = sub.add_parser(
        "rescore",
        help="read and score a run's replies again under the installed environment, as a new run",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rs.add_argument("run", help="the run: an eval output directory or its traces.jsonl")
    rs.add_argument(
        "-o", "--output", type=Path, required=True, help="the new run's directory (no traces in it)"
    )
    rs.add_argument(
        "--dataset-path",
        type=Path,
        help="the dataset file the run read, where it is now (else the recorded one)",
    )
    add_max_error_rate(rs, 1.0)
    rs.add_argument("--no-plots", action="store_true", help="skip the PNG plots (faster)")
    rs.add_argument(
        "--print",
        action="store_true",
        help="print the whole report.md and comparison.md instead of a summary",
    )
    rs.set_defaults(handler=cmd_rescore)
