"""report.md: a report (the dict `medhal.reports.report.build_report` makes) as Markdown.

Order follows what a reader checks first: is the run whole (a warning block when not),
the headline figures under every reading convention, published figures beside them,
the breakdowns, what could not be read, what failed, and where it all came from.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from medhal.kit.replies import CONVENTIONS


def fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}"
    if (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and all(isinstance(v, (int, float)) for v in value)
    ):
        return f"[{value[0]:.3f}, {value[1]:.3f}]"
    if value is None:
        return "—"
    return str(value).replace("|", "\\|").replace("\n", " ")


def figure_with_ci(value: Any, interval: Any) -> str:
    """A figure and its interval; a figure that does not apply (None) is one dash."""
    return f"{fmt(value)} {fmt(interval)}" if value is not None and interval is not None else fmt(value)


def table(header: list[str], rows: Iterable[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return lines


def scored_by(report: Mapping[str, Any]) -> str:
    """Which code produced the figures: a score is only comparable with scores of the same
    environment version."""
    from medhal.reports.report import code_versions

    code = code_versions(report)
    if not code:
        return "Scored by: unknown code versions (the traces do not record them)."
    return (
        f"Scored by {code.get('environment', '?')} {code.get('environment_version', '?')} "
        f"(medhal {code.get('medhal', '?')}, verifiers {code.get('verifiers', '?')}), "
        f"reading convention `{report.get('convention')}`."
    )


def completeness_problems(report: Mapping[str, Any]) -> list[str]:
    """Why a run is not whole, one phrase per problem (empty when it is)."""
    problems = []
    if report.get("n_expected") is None:
        problems.append("the traces do not record how many tasks the run selected (an older run?)")
    elif report.get("n_missing"):
        missing = report.get("missing_idx") or []
        shown = f" (first: {', '.join(map(str, missing))})" if missing else ""
        problems.append(f"{report['n_missing']} of {report['n_expected']} tasks have no trace{shown}")
    duplicates = report.get("n_duplicates") or 0
    if duplicates:
        problems.append(
            f"{duplicates} {'trace repeats' if duplicates == 1 else 'traces repeat'} a task id "
            "already seen (duplicated lines?)"
        )
    if report.get("mixed_provenance"):
        problems.append(
            "the traces disagree on provenance (dataset, options or code changed between runs or resumes)"
        )
    return problems


def completeness_lines(report: Mapping[str, Any]) -> list[str]:
    """A warning block when the run is not whole; one line when it is."""
    problems = completeness_problems(report)
    if not problems:
        return [f"Complete: {report['n']} of {report['n_expected']} tasks, each once, one provenance.", ""]
    return ["> **Incomplete run.** " + "; ".join(problems) + ". Figures below cover what is there.", ""]


def label(report: Mapping[str, Any], name: str) -> str:
    """A figure's name for readers, with its code name beside it when they differ."""
    human = (report.get("figure_labels") or {}).get(name)
    return f"{human} (`{name}`)" if human and human != name else name


def headline_lines(report: Mapping[str, Any], headline: Iterable[str]) -> list[str]:
    """One row per figure (the macro ones first), one column per reading convention."""
    names = [n for n in headline if n in report["conventions"][CONVENTIONS[0]]]
    macro = [
        k for k in report["conventions"][CONVENTIONS[0]] if k.startswith("macro_") and not k.endswith("_ci")
    ]
    rows = []
    for name in dict.fromkeys([*macro, *names]):
        cells = []
        for convention in CONVENTIONS:
            figures = report["conventions"][convention]
            cells.append(figure_with_ci(figures.get(name), figures.get(f"{name}_ci")))
        rows.append([label(report, name), *cells])
    header = [f"{c} (run)" if c == report.get("convention") else c for c in CONVENTIONS]
    return [
        "### Headline figures by reading convention",
        "",
        *table(["figure", *header], rows),
        "",
        (
            "medhal: what a careful human reads; authors: the benchmark authors' published parsing, "
            "rule for rule; strict: only the exact format the prompt asks for. Intervals: 95% cluster "
            "bootstrap."
        ),
        "",
    ]


def published_lines(report: Mapping[str, Any]) -> list[str]:
    rows = report.get("published") or []
    if not rows:
        return []
    return [
        "### Published figures (same setting; the run's value under the authors' reading)",
        "",
        *table(
            ["model", "statistic", "group", "published", "this run", "95% CI", "inside CI", "source"],
            [
                [
                    r["model"],
                    r["statistic"],
                    r["group"] or "all",
                    r["published"],
                    r["run"],
                    r["run_ci"],
                    r["inside_ci"],
                    r["source"],
                ]
                for r in rows
            ],
        ),
        "",
    ]


def figure_names(groups: Iterable[Mapping[str, Any]]) -> list[str]:
    """The figures of a group table: every name any group gives a number or a None (a
    figure that does not apply to that group) to, in order of appearance, but `n`."""
    names: dict[str, None] = {}
    for figures in groups:
        for k, v in figures.items():
            if k != "n" and (v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))):
                names.setdefault(k)
    return list(names)


def breakdown_lines(report: Mapping[str, Any]) -> list[str]:
    """The group tables, then the per-class figures and the confusion matrix."""
    lines: list[str] = []
    for fld, values in report["groups"].items():
        keys = ["n", "accuracy", "accuracy_ci"]
        keys += [k for k in figure_names(values.values()) if k not in keys]
        lines += [f"### By {fld} ({report['convention']} reading)", ""]
        header = [fld, *(label(report, k) for k in keys)]
        lines += [*table(header, [[v, *[g.get(k) for k in keys]] for v, g in values.items()]), ""]
    if "classes" in report:
        lines += [f"### Per class ({report['convention']} reading)", ""]
        lines += table(
            ["class", "precision", "recall", "f1", "support"],
            [[c, v["precision"], v["recall"], v["f1"], v["support"]] for c, v in report["classes"].items()],
        )
        columns = list(next(iter(report["confusion"].values())).keys())
        lines += ["", "### Confusion (rows: gold, columns: predicted)", ""]
        lines += table(
            ["gold \\ pred", *columns], [[g, *row.values()] for g, row in report["confusion"].items()]
        )
        lines.append("")
    return lines


def to_markdown(report: Mapping[str, Any], headline: Iterable[str] = ("accuracy",)) -> str:
    lines = [f"## {report['title']}", "", f"Source: `{report['source']}`", ""]
    lines += [scored_by(report), ""]
    if report.get("demo_prompts"):
        lines += [
            "> **Demo prompts.** Prompts written by medhal stood in for the benchmark's own: these "
            "figures are a pipeline check, not benchmark results.",
            "",
        ]
    lines += completeness_lines(report)
    summary = [
        ["n", report["n"]],
        ["errored rollouts", report["n_errors"]],
        ["reading convention of the run", report["convention"]],
        ["micro accuracy (95% CI)", figure_with_ci(report["micro_accuracy"], report.get("micro_accuracy_ci"))],
        ["parse rate", report["parse_rate"]],
    ]
    if report.get("macro_over"):
        summary.append([f"macro accuracy over {report['macro_over']}", report["macro_accuracy"]])
    summary.append(["paper-comparable (complete set, no errors)", report["paper_comparable"]])
    lines += [*table(["figure", "value"], summary), ""]
    lines += headline_lines(report, headline)
    lines += published_lines(report)
    lines += breakdown_lines(report)
    if report.get("unreadable"):
        lines += [
            f"### Unreadable replies ({report['n_unreadable']} under the {report['convention']} reading; "
            "most frequent shapes)",
            "",
        ]
        lines += table(
            ["count", "reply (first 120 characters)", "e.g. idx"],
            [[u["count"], f"`{u['shape']}`", u["idx"]] for u in report["unreadable"]],
        )
        lines.append("")
    if report["errors"]:
        lines += ["### Errored rollouts (kept in every denominator, scored wrong)", ""]
        lines += table(["count", "error"], [[c, e[:160]] for e, c in report["errors"].items()])
        lines.append("")
    if report.get("notes"):
        lines += [f"- {note}" for note in report["notes"]] + [""]
    lines += [
        "### Provenance",
        "",
        "```json",
        json.dumps(report["provenance"], indent=1, sort_keys=True),
        "```",
        "",
    ]
    return "\n".join(lines)


def difference_text(difference: Mapping[str, Any], i: int) -> str:
    """One compared value that differs, in words: "sampling temperature: 0.0 in run 1, 0.7 in run 2"."""
    what = difference["field"] + (f" {difference['setting']}" if difference.get("setting") else "")

    def shown(value: Any) -> str:
        text = "unset" if value is None else str(value)
        return text if len(text) <= 160 else text[:157] + "..."

    return f"{what}: {shown(difference['first'])} in run 1, {shown(difference['this'])} in run {i}"


def comparison_markdown(comparisons: Iterable[Mapping[str, Any]]) -> str:
    """One table per benchmark: each run's headline figures, and for every run after the
    first its difference to the first with a 95% interval (paired when the runs cover the
    same tasks) and McNemar's exact p for accuracy. A difference whose interval excludes 0
    is marked with *."""
    lines = ["## Comparison", ""]
    for comparison in comparisons:
        names = comparison["headline"]
        lines += [f"### {comparison['title']}", ""]
        header = ["run", "model", "n", "reading", "environment version", *names, "differs from run 1 in"]
        rows = []
        for i, row in enumerate(comparison["runs"], start=1):
            cells = []
            for name in names:
                value = row["figures"].get(name)
                cell = (
                    f"{fmt(value)} {fmt(row['intervals'].get(name))}"
                    if row["intervals"].get(name)
                    else fmt(value)
                )
                if i > 1 and row.get("difference") is not None:
                    diff, interval = row["difference"].get(name), (row.get("difference_ci") or {}).get(name)
                    if diff is not None and interval is not None:
                        mark = "*" if interval[0] > 0 or interval[1] < 0 else ""
                        cell += f"<br>Δ {diff:+.3f}{mark} {fmt(interval)}"
                cells.append(cell)
            models = ", ".join(row["models"] or {})
            flagged = ", ".join(row["differs_in"]) or "—"
            version = (row.get("code") or {}).get("environment_version", "?")
            rows.append(
                [f"{i}: `{row['run']}`", models, row["n"], row["convention"], version, *cells, flagged]
            )
        lines += [*table(header, rows), ""]
        notes = []
        for i, row in enumerate(comparison["runs"][1:], start=2):
            if row.get("paired") is False:
                notes.append(
                    f"run {i} covers other tasks than run 1: compared unpaired ({row['why_unpaired']})."
                )
            mcnemar = row.get("mcnemar")
            if mcnemar:
                notes.append(
                    f"run {i} vs run 1, accuracy: McNemar exact p = {mcnemar['p_value']:.4g} "
                    f"({mcnemar['right_only_in_first']} items right only in run 1, "
                    f"{mcnemar['right_only_in_this']} only in run {i})."
                )
            if row["differs_in"]:
                notes.append(
                    f"run {i} differs from run 1 in {', '.join(row['differs_in'])}: part of any "
                    "difference is the code's or the setting's, not the model's."
                    + "".join(f" {difference_text(d, i)}." for d in row.get("differences") or [])
                )
        for i, row in enumerate(comparison["runs"], start=1):
            notes += [f"run {i}: {fmt(w)}." for w in row.get("warnings") or []]
        lines += [f"- {n}" for n in notes] + [
            "- Δ = difference to run 1 with its 95% cluster-bootstrap interval (paired: the same clusters "
            "resampled for both runs); * = the interval excludes 0.",
            "",
        ]
    return "\n".join(lines)
