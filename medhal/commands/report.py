"""`medhal report RUN [RUN ...]`: each run's report files (and a comparison of several), and the
gate every command that reports applies: exit 1 when a run fails `--max-error-rate` or is
incomplete."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from medhal.kit.files import StagedFiles
from medhal.reports.report_files import (
    error_rate_problems,
    incomplete_runs,
    report_runs,
    write_comparison,
)


def cmd_report(ns: argparse.Namespace) -> int:
    from medhal.reports.markdown import to_markdown

    target = ns.output or Path("outputs") / "comparison"
    with StagedFiles() as staged:  # every run's report and the comparison, all or nothing
        runs, reports, outs = report_runs(
            [Path(p) for p in ns.runs],
            ns.output,
            ns.env,
            plots=not ns.no_plots,
            merge=ns.merge,
            staged=staged,
        )
        comparisons: list[dict[str, Any]] = []
        if len(reports) > 1:
            text, comparisons = write_comparison(runs, reports, target, staged)
        staged.commit()
    for report, out in zip(reports, outs, strict=True):
        if ns.print:
            print(to_markdown(report, report["headline"]))
            print(f"wrote {', '.join(str(out / name) for name in report_files(report))}\n")
        else:
            print("\n".join(summary_lines(report, out)) + "\n")
    code = 0
    if len(reports) > 1:
        if ns.print:
            print(text)
        print(f"wrote {target}/comparison.md, comparison.json, comparison.html")
        differing = [row for c in comparisons for row in c["runs"] if row["differs_in"]]
        if differing and ns.strict_compare:
            print("medhal report: runs differ in code or setting (--strict-compare)", file=sys.stderr)
            code = 1
    return max(code, gate(reports, ns.max_error_rate, ns.allow_incomplete))


def report_files(report: dict[str, Any]) -> list[str]:
    return ["report.md", "report.html", "report.json", *report.get("plots", [])]


def summary_lines(report: dict[str, Any], out: Path) -> list[str]:
    """What a terminal shows of a report (about 20 lines): the run, the benchmark's
    headline, whether the run is whole, the headline figures under the three reading
    conventions, and where the files are. Texts from the traces (title, model names) are
    shown with control characters made visible."""
    from medhal.kit.outcomes import CONVENTIONS
    from medhal.kit.untrusted import printable
    from medhal.reports.html import headline_names
    from medhal.reports.markdown import complete_text, completeness_problems, figure_with_ci

    models = ", ".join(printable(str(m)) for m in report.get("provenance", {}).get("models") or {})
    lines = [printable(report["title"]) + (f", {models}" if models else "")]
    if report.get("demo_prompts"):
        lines.append("DEMO PROMPTS: a pipeline check, not benchmark results.")
    problems = completeness_problems(report)
    lines += lead_lines(report, bool(problems))
    if problems:
        lines.append("INCOMPLETE: " + "; ".join(problems) + ".")
    else:
        lines.append(complete_text(report))
    own = report.get("convention")
    lines.append(counts_line(report))
    names = headline_names(report, report.get("headline") or ("accuracy",))
    columns = [f"{c} (run)" if c == own else c for c in CONVENTIONS]
    rows = [
        [
            name,
            *(
                figure_with_ci(report["conventions"][c].get(name), report["conventions"][c].get(f"{name}_ci"))
                for c in CONVENTIONS
            ),
        ]
        for name in names
    ]
    widths = [max(len(str(r[i])) for r in [["figure", *columns], *rows]) for i in range(len(columns) + 1)]
    lines.append("")
    for row in [["figure", *columns], *rows]:
        lines.append(
            "  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
    published = report.get("published") or []
    if published:
        with_ci = [r for r in published if r.get("inside_ci") is not None]
        inside = sum(1 for r in with_ci if r["inside_ci"])
        kinds = ", ".join(dict.fromkeys(r["kind"] for r in published))
        lines.append(
            f"Published figures ({kinds}): {len(published)} beside this run's; {inside} of {len(with_ci)} "
            "with a value inside the run's 95% interval."
        )
    lines.append("")
    files = report_files(report)
    lines.append(f"Files in {out}: {', '.join(files)}")
    lines.append("report.html shows every item; the whole report on the terminal: medhal report --print RUN")
    return lines


def counts_line(report: dict[str, Any]) -> str:
    """Failed rollouts, unreadable replies, replies the token limit cut (when any) and whether
    the run compares with the paper, in one line."""
    from medhal.reports.markdown import fmt

    cut = report.get("n_truncated")
    return (
        f"Errored rollouts: {report['n_errors']}; unreadable replies ({report.get('convention')} reading): "
        f"{report.get('n_unreadable', 0)}"
        + (f"; replies cut by the token limit: {cut} (report.md says where)" if cut else "")
        + f"; paper-comparable: {fmt(report['paper_comparable'])}."
    )


def lead_lines(report: dict[str, Any], incomplete: bool) -> list[str]:
    """The benchmark's headline on the terminal: one line for one figure, or a line per
    group under a title line for a per-group headline; marked when the run is not whole."""
    from medhal.reports.headline import lead_rows, lead_title
    from medhal.reports.markdown import figure_with_ci

    rows = lead_rows(report)
    mark = " (incomplete run)" if incomplete else ""
    if len(rows) == 1 and rows[0]["group"] is None:
        return [f"{lead_title(report)}{mark}: {figure_with_ci(rows[0]['value'], rows[0]['ci'])}"]
    cells = [
        (str(row["group"]), figure_with_ci(row["value"], row["ci"]), f"{row['n']} items") for row in rows
    ]
    widths = [max((len(c[i]) for c in cells), default=0) for i in range(3)]
    return [f"{lead_title(report)}{mark}:"] + [
        "  " + "  ".join(c.ljust(w) for c, w in zip(cell, widths, strict=True)).rstrip() for cell in cells
    ]


def gate(reports: list[dict[str, Any]], max_error_rate: float, allow_incomplete: bool) -> int:
    """The exit status of a command that reports: 1 when a run's share of failed rollouts
    exceeds `max_error_rate` or (unless `allow_incomplete`) the run is not whole, each
    problem printed on its own line; else 0."""
    problems = error_rate_problems(reports, max_error_rate)
    if problems:
        print(f"error rate above --max-error-rate {max_error_rate}:\n" + "\n".join(problems), file=sys.stderr)
    incomplete = [] if allow_incomplete else incomplete_runs(reports)
    for line in incomplete:
        print(line, file=sys.stderr)
    return 1 if problems or incomplete else 0


def add_max_error_rate(parser: argparse.ArgumentParser, default: float) -> None:
    """`--max-error-rate`, as every command that reports takes it."""
    parser.add_argument(
        "--max-error-rate",
        type=rate,
        default=default,
        help=f"exit 1 when a run's share of failed rollouts exceeds this (0..1, default {default:g})",
    )


def rate(text: str) -> float:
    """The argparse type of every --max-error-rate: a number in [0, 1] (NaN, infinities and
    negatives refused), a one-line error otherwise."""
    try:
        value = float(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"--max-error-rate must be a number between 0 and 1, got {value!r}")
    return value


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `report`."""
    rep = sub.add_parser(
        "report", help="report.json/md/html and plots for one or more runs; several are compared"
    )
    rep.add_argument("runs", nargs="+", help="eval output directories or traces.jsonl files")
    rep.add_argument("-o", "--output", type=Path, help="output directory (default: next to each trace file)")
    rep.add_argument("--env", help="environment id (default: read from the traces)")
    add_max_error_rate(rep, 0.0)
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
        "--print",
        action="store_true",
        help="print the whole report.md (and comparison.md) instead of a short summary",
    )
    rep.add_argument(
        "--merge",
        action="store_true",
        help="report the runs as ONE run (the shards of a split run); -o sets where",
    )
    rep.set_defaults(handler=cmd_report)
