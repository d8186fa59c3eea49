"""A report's files, all or nothing, and what the gates of the commands check (error rate,
completeness).

Everything is rendered in memory first (report.json, report.md, report.html and the
PNG plots); only then is each file written to a temporary name and renamed over the
old one. A failure while rendering leaves the previous good report untouched.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medhal.kit.files import StagedFiles
from medhal.kit.untrusted import one_line
from medhal.reports.markdown import completeness_problems, to_markdown
from medhal.reports.plots import WORKER_MIN_BYTES, PlotWorker
from medhal.reports.registry import report_spec
from medhal.reports.traces import (
    TRACE_FILES,
    TraceFileError,
    configured_rollouts,
    iter_traces,
    resolve_trace_file,
)

if TYPE_CHECKING:
    from medhal.reports.html import Page
    from medhal.reports.items import ItemLog
    from medhal.reports.prime_rl import Epoch
    from medhal.reports.report import Run


def render(
    report: dict[str, Any], plots: bool | PlotWorker = True, items: ItemLog | None = None
) -> dict[str, str | bytes | Page]:
    """File name -> content for one report; `plots`: whether to draw them, or the worker that
    draws them (`medhal.reports.plots.PlotWorker`); `items`, the run's items read as it was
    (`Run.view`), gives report.html its per-item view (then a `Page`, written in parts)."""
    from medhal.reports.html import report_html
    from medhal.reports.plots import render_plots
    from medhal.reports.report import write_json

    if plots is True or plots is False:
        images = render_plots(report) if plots else {}
    else:
        images = plots.render(report)
    report["plots"] = list(images)
    if items is None:
        html: str | Page = report_html(report, images)
    else:
        data = items.finish()
        report["items"] = {"n": data.n, "withheld": data.withheld}
        html = report_html(report, images, data)
    return {
        "report.json": write_json(report),
        "report.md": to_markdown(report, report.get("headline", ("accuracy",))),
        "report.html": html,
        **images,
    }


def write_files(files: Mapping[str, str | bytes | Page], out_dir: Path) -> list[Path]:
    """The files into `out_dir`, all or nothing."""
    with StagedFiles() as staged:
        for name, content in files.items():
            staged.write(out_dir / name, content)
        return staged.commit()


def error_rate_problems(reports: Sequence[Mapping[str, Any]], max_error_rate: float) -> list[str]:
    """One line per run whose failed-rollout share exceeds `max_error_rate`, with its most
    frequent error messages."""
    problems = []
    for report in reports:
        if report["n"] and report["n_errors"] / report["n"] > max_error_rate:
            lines = [f"{one_line(report['source'])}: {report['n_errors']} of {report['n']} rollouts failed"]
            lines += [
                f"  {count} x {one_line(message[:300])}"
                for message, count in list(report["errors"].items())[:10]
            ]
            problems.append("\n".join(lines))
    return problems


def incomplete_runs(reports: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per run that is not whole, saying why as its report.md does
    (`medhal.reports.markdown.completeness_problems`: missing tasks, task ids outside the
    selection, repeated traces, tasks short of or over their rollouts, mixed provenance)."""
    return [
        f"{one_line(r['source'])}: incomplete run ({'; '.join(problems)}); --allow-incomplete to accept it"
        for r in reports
        if (problems := completeness_problems(r))
    ]


def benchmark_of(path: Path) -> str:
    """The benchmark a trace file is for, from its first trace, resolved through the
    installed environments (never imported by name: the file is untrusted)."""
    from medhal.reports.registry import UnknownEnvironment, entry_point

    for record in iter_traces(path):
        benchmark = record.data.get("benchmark")
        try:
            entry_point(benchmark)
        except UnknownEnvironment as e:
            raise TraceFileError(f"{record.where}: field 'task.data.benchmark': {e}") from None
        return str(benchmark)
    raise TraceFileError(f"{path}: no rollouts in this file")


def report_runs(
    paths: list[Path],
    output: Path | None,
    env_id: str | None,
    plots: bool = True,
    merge: bool = False,
    staged: StagedFiles | None = None,
) -> tuple[list[Run], list[dict[str, Any]], list[Path]]:
    """Read, report and write each run (keeping their items when several are compared), or,
    with `merge`, all of them as one run (the shards of a run split across processes).

    All or nothing: every report is rendered and staged before any file is renamed into
    place, so a failure on run 2 leaves run 1's old report as it was. With `staged`, the
    files join the caller's staging set and the caller commits them."""
    if staged is None:
        with StagedFiles() as own:
            result = report_runs(paths, output, env_id, plots, merge, own)
            own.commit()
        return result
    with contextlib.ExitStack() as stack:
        painter: bool | PlotWorker = plots
        if plots and _trace_bytes(paths) >= WORKER_MIN_BYTES:
            painter = stack.enter_context(PlotWorker())
        groups = read_runs(paths, output, env_id, merge)
        runs, reports, outs = [], [], []
        for run, out in groups:
            report = build_report_of(run, out)
            for name, content in render(report, painter, run.view).items():
                staged.write(out / name, content)
            runs.append(run)
            reports.append(report)
            outs.append(out)
    return runs, reports, outs


def _trace_bytes(paths: Sequence[Path]) -> int:
    """The size of the trace files (or run directories' trace files) named, as far as it is
    known before reading them (a path that is neither counts as nothing: reading it says why)."""
    total = 0
    for path in paths:
        for name in ("", *TRACE_FILES):
            file = path / name if name else path
            if file.is_file():
                total += file.stat().st_size
                break
    return total


def build_report_of(run: Run, out: Path) -> dict[str, Any]:
    """The run's report, its traces named as `shown_source` shows them from `out`."""
    from medhal.reports.report import build_report

    report = build_report(run)
    report["source"] = " + ".join(shown_source(Path(file), out) for file in run.path.split(" + "))
    if run.expected is not None:
        report["source"] += f" ({run.expected.part})"
    report["headline"] = list(run.spec.headline)
    return report


def read_runs(
    paths: list[Path], output: Path | None, env_id: str | None, merge: bool = False
) -> list[tuple[Run, Path]]:
    """Each run read, with the directory its report goes to. Two runs whose reports would
    go to one directory (two trace files side by side, no -o) are refused: one report
    would silently replace the other. A prime-rl run directory gives one run per eval
    epoch (`prime_rl_inputs`)."""
    from medhal.reports.report import cycles_left_alone

    with cycles_left_alone():
        return _read_runs(paths, output, env_id, merge)


def _read_runs(
    paths: list[Path], output: Path | None, env_id: str | None, merge: bool
) -> list[tuple[Run, Path]]:
    from medhal.reports.items import ItemLog
    from medhal.reports.report import Run, read_run

    inputs = prime_rl_inputs(paths, env_id)
    files = [file for file, _ in inputs]
    if merge:
        if any(epoch is not None for _, epoch in inputs):
            raise TraceFileError(
                f"{paths[0]}: --merge reads the shards of one eval run; a prime-rl eval epoch is "
                "one run already"
            )
        spec = report_spec(env_id or benchmark_of(files[0]))
        run = Run(spec, " + ".join(map(str, files)), merged=True, view=ItemLog(spec.group_fields))
        for file in files:
            run.expect_rollouts(configured_rollouts(file))
            for record in iter_traces(file):
                run.add(record)
        return [(run, output or Path("outputs") / "merged")]
    outs = [
        _default_out(file, epoch)
        if output is None
        else (output if len(inputs) == 1 else output / f"run{i + 1}")
        for i, (file, epoch) in enumerate(inputs)
    ]
    by_out: dict[Path, str] = {}
    for (file, epoch), out in zip(inputs, outs, strict=True):
        name = f"{file} ({epoch.expected.part})" if epoch is not None else str(file)
        other = by_out.setdefault(out.resolve(), name)
        if other != name:
            raise TraceFileError(
                f"{name}: its report would replace the report of {other} (both go to {out}); "
                "give -o DIR (each run then reports to DIR/runN)"
            )
    groups = []
    epochs = []
    for (file, epoch), out in zip(inputs, outs, strict=True):
        if epoch is None:
            spec = report_spec(env_id or benchmark_of(file))
            view = ItemLog(spec.group_fields)
            groups.append((read_run(file, spec, keep_items=len(inputs) > 1, view=view), out))
        else:
            spec = report_spec(env_id or epoch.benchmark)
            view = ItemLog(spec.group_fields)
            run = Run(spec, str(file), keep_items=len(inputs) > 1, view=view, expected=epoch.expected)
            groups.append((run, out))
            epochs.append((epoch, run))
    if epochs:
        read_epoch_runs(epochs)
    return groups


def prime_rl_inputs(paths: list[Path], env_id: str | None) -> list[tuple[Path, Epoch | None]]:
    """Each path as the runs it holds: a trace file or run directory is one run (the
    epoch None); a prime-rl run directory is one run per eval epoch of a medhal
    environment (an epoch whose tasks name no benchmark is another project's and is left
    out; a prime-rl path with none of ours is an error)."""
    from medhal.reports.prime_rl import epochs

    inputs: list[tuple[Path, Epoch | None]] = []
    for path in paths:
        found = epochs(path)
        if found is None:
            inputs.append((resolve_trace_file(path), None))
            continue
        ours = [e for e in found if env_id is not None or _known_benchmark(e)]
        if not ours:
            names = ", ".join(sorted({e.env for e in found}))
            raise TraceFileError(f"{path}: no eval episodes of a medhal environment (envs: {names})")
        inputs += [(epoch.files[0], epoch) for epoch in ours]
    return inputs


def _known_benchmark(epoch: Epoch) -> bool:
    """Whether the epoch is a medhal environment's: its first task names a benchmark (else
    another project's), resolved through the installed environments as `benchmark_of` does."""
    from medhal.reports.registry import UnknownEnvironment, entry_point

    if epoch.benchmark is None:
        return False
    try:
        entry_point(epoch.benchmark)
    except UnknownEnvironment as e:
        raise TraceFileError(f"{epoch.first}: field 'task.data.benchmark': {e}") from None
    return True


def read_epoch_runs(epochs: list[tuple[Epoch, Run]]) -> None:
    """The prime-rl epochs' runs filled from their files, in one pass over each file."""
    from medhal.reports.prime_rl import read_epochs

    read_epochs([(epoch, run.add) for epoch, run in epochs])
    for _, run in epochs:
        run.flush()


def _default_out(file: Path, epoch: Epoch | None) -> Path:
    """Where a run's report goes without -o: beside its traces; for a prime-rl epoch,
    `<run dir>/medhal-reports/<env>--step_<N>` (the env name made a safe folder name)."""
    if epoch is None:
        return file.parent
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", epoch.env).strip(".") or "env"
    step = f"step_{epoch.step}" if epoch.step is not None else "no_step"
    return epoch.root / "medhal-reports" / f"{name}--{step}"


def shown_source(file: Path, out: Path) -> str:
    """Where a report's traces are, as the report shows it: relative to the folder that holds
    the report's folder ("run-dir/traces.jsonl" for a report beside its traces), else to the
    report itself; never an absolute path of the machine that made it."""
    file, out = file.resolve(), out.resolve()
    base = out.parent if file.is_relative_to(out.parent) else out
    return Path(os.path.relpath(file, base)).as_posix()


def write_comparison(
    runs: list[Run], reports: list[dict[str, Any]], target: Path, staged: StagedFiles | None = None
) -> tuple[str, list[dict[str, Any]]]:
    from medhal.reports.compare import compare_runs
    from medhal.reports.html import comparison_html
    from medhal.reports.markdown import comparison_markdown

    by_benchmark: dict[str, list[int]] = {}
    for i, report in enumerate(reports):
        by_benchmark.setdefault(report["benchmark"], []).append(i)
    comparisons = [
        compare_runs([runs[i] for i in idx], [reports[i] for i in idx]) for idx in by_benchmark.values()
    ]
    text = comparison_markdown(comparisons)
    files = {
        "comparison.md": text,
        "comparison.json": json.dumps(comparisons, indent=1, ensure_ascii=False) + "\n",
        "comparison.html": comparison_html(text, comparisons),
    }
    if staged is None:
        write_files(files, target)
    else:
        for name, content in files.items():
            staged.write(target / name, content)
    return text, comparisons
