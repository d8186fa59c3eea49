"""report.md: a report (the dict `medhal.reports.report.build_report` makes) as Markdown.

Order follows what a reader checks first: is the run whole (a warning block when not),
the benchmark's headline (first in the summary table), the headline figures under every
reading convention, published figures beside them,
the breakdowns, what could not be read, what failed, and where it all came from.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from medhal.kit.outcomes import CONVENTIONS
from medhal.kit.untrusted import markdown_code, markdown_text
from medhal.kit.published import KINDS
from medhal.reports.headline import lead_rows, ordered_names
from medhal.reports.provenance import run_code


class Md(str):
    """Markdown that is already safe (built here from escaped parts); `fmt` passes it as is."""


TRUNCATED_TITLE = "Replies cut by the token limit"
TRUNCATED_NOTE = (
    "Generation stopped at its token limit (finish reason `length`). Cut before the answer: no answer "
    "text came, the model stopped inside its reasoning (which is never read as the answer). Each counts "
    "as its reply reads; a larger max_tokens gives the model room to answer."
)
"""How report.md and report.html head and explain the table of cut replies."""


def truncated_lines(report: Mapping[str, Any]) -> list[str]:
    """report.md's table of the replies the token limit cut (nothing when none was)."""
    if not report.get("n_truncated"):
        return []
    rows = [[t["count"], t["where"], t["idx"]] for t in report["truncated"]]
    return [
        f"### {TRUNCATED_TITLE} ({report['n_truncated']})",
        "",
        TRUNCATED_NOTE,
        "",
        *table(["count", "cut", "e.g. idx"], rows),
        "",
    ]


def fmt(value: Any) -> str:
    """A value as the text of one table cell: numbers formatted, everything else untrusted
    (`markdown_text`: no HTML, no link, no extra cell, one line)."""
    if isinstance(value, Md):
        return value
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
    return markdown_text(value)


def figure_with_ci(value: Any, interval: Any) -> Md:
    """A figure and its interval; a figure that does not apply (None) is one dash."""
    return Md(f"{fmt(value)} {fmt(interval)}" if value is not None and interval is not None else fmt(value))


def table(header: list[str], rows: Iterable[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return lines


def scored_by(report: Mapping[str, Any]) -> str:
    """Which code produced the figures: a score is only comparable with scores of the same
    environment version."""
    code = run_code(report)
    if not code:
        return "Scored by: unknown code versions (the traces do not record them)."
    environment, version = code.get("environment", "?"), code.get("environment_version", "?")
    return (
        f"Scored by {fmt(environment)} {fmt(version)} "
        f"(medhal {fmt(code.get('medhal', '?'))}, verifiers {fmt(code.get('verifiers', '?'))}), "
        f"reading convention {markdown_code(report.get('convention'), in_table=False)}." + rescored_text(report)
    )


def rescored_text(report: Mapping[str, Any]) -> str:
    """For a run `medhal rescore` wrote: which traces it read again, and the code that had
    scored them (the provenance's `rescored_from`); else nothing."""
    found = _first_value(report.get("provenance", {}).get("data"), "rescored_from")
    if not isinstance(found, dict):
        return ""
    code = found.get("code")
    codes = code if isinstance(code, list) else [code]
    was = "; ".join(
        f"{fmt(c.get('environment', '?'))} {fmt(c.get('environment_version', '?'))}"
        for c in codes
        if isinstance(c, dict)
    )
    return (
        f" Rescored from {markdown_code(found.get('traces'), in_table=False)} (sha256 "
        f"{fmt(str(found.get('sha256'))[:12])}…), which {fmt(was) or 'unknown code'} had scored."
    )


def _first_value(value: Any, key: str, depth: int = 4) -> Any:
    """The value under `key` in the first dict that has it, searching `value` (a provenance
    block, a dict of them per group, or a list) at most `depth` levels down."""
    if depth < 0:
        return None
    if isinstance(value, dict):
        if key in value:
            return value[key]
        children: list[Any] = list(value.values())
    elif isinstance(value, list):
        children = value
    else:
        return None
    for child in children:
        found = _first_value(child, key, depth - 1)
        if found is not None:
            return found
    return None


def count_text(count: int, exact: bool = True) -> str:
    """A count from a bounded table: the number, or "at least" it when it is a lower bound."""
    return str(count) if exact else f"at least {count}"


def completeness_problems(report: Mapping[str, Any]) -> list[str]:
    """Why a run is not whole, one phrase per problem (empty when it is)."""
    problems = []
    if report.get("n_expected") is None:
        problems.append("the traces do not record how many tasks the run selected (an older run?)")
    elif report.get("n_missing"):
        missing = report.get("missing_idx") or []
        shown = f" (first: {', '.join(map(str, missing))})" if missing else ""
        problems.append(f"{report['n_missing']} of {report['n_expected']} tasks have no trace{shown}")
    if report.get("n_outside"):
        outside = report.get("outside_idx") or []
        shown = f" (first: {', '.join(map(str, outside))})" if outside else ""
        problems.append(f"{report['n_outside']} task ids are outside the run's selection{shown}")
    if report.get("ids_match_selection") is False and not report.get("n_outside"):
        problems.append("the task ids present are not the ones the run selected (their hash differs)")
    duplicates = report.get("n_duplicates") or 0
    if duplicates:
        problems.append(
            f"{duplicates} {'trace repeats' if duplicates == 1 else 'traces repeat'} the same trace of a task "
            "(same task id, same trace id: duplicated lines?)"
        )
    rollouts = report.get("rollouts") or {}
    if rollouts.get("n_short_tasks"):
        problems.append(
            f"{rollouts['n_short_tasks']} tasks lack {rollouts['n_missing_rollouts']} of their "
            f"{rollouts['per_task']} rollouts each"
        )
    if rollouts.get("n_extra_rollouts"):
        problems.append(
            f"{rollouts['n_extra_rollouts']} rollouts more than {rollouts['per_task']} per task "
            f"(from {rollouts['source']})"
        )
    if rollouts.get("mixed"):
        problems.append("the run directories asked for different numbers of rollouts per task")
    if report.get("mixed_provenance"):
        problems.append(
            "the traces disagree on provenance (dataset, options or code changed between runs or resumes)"
        )
    if report.get("episodes_match_plan") is False:
        k = rollouts.get("per_task") or 1
        problems.append(
            f"prime-rl planned {report['episodes_planned']} episodes, which is not {report['n_expected']} "
            f"tasks x {k} rollouts"
        )
    return problems


def complete_text(report: Mapping[str, Any]) -> str:
    """The line that says a run is whole."""
    k = (report.get("rollouts") or {}).get("per_task") or 1
    tasks = report.get("n_distinct", report["n"])
    if k == 1:
        return f"Complete: {tasks} of {report['n_expected']} tasks, each once, one provenance."
    return (
        f"Complete: {tasks} of {report['n_expected']} tasks x {k} rollouts "
        f"({report['n']} traces), one provenance."
    )


def completeness_lines(report: Mapping[str, Any]) -> list[str]:
    """A warning block when the run is not whole; one line when it is."""
    problems = completeness_problems(report)
    basis = []
    if report.get("expected_from"):
        basis = [f"Tasks expected from prime-rl's files: {report['expected_from']}.", ""]
    if not problems:
        return [complete_text(report), "", *basis]
    warning = "> **Incomplete run.** " + "; ".join(problems) + ". Figures below cover what is there."
    return [warning, "", *basis]


def rollout_lines(report: Mapping[str, Any]) -> list[str]:
    """Several rollouts per task: the per-item view (mean reward and its spread over a task's
    rollouts, pass@k, pass^k, majority vote); nothing for one rollout per task."""
    rollouts = report.get("rollouts") or {}
    k = rollouts.get("per_task") or 1
    if k == 1 and "per_item" not in report:
        return []
    pass_hat = rollouts.get("pass_hat_k", {})
    rows = [
        ["rollouts per task", f"{k} (from {rollouts.get('source')})"],
        [
            "mean reward per task ± mean sd over its rollouts",
            f"{fmt(rollouts.get('mean_reward'))} ± {fmt(rollouts.get('mean_reward_sd'))}",
        ],
        *[[f"pass@{n} (unbiased estimator)", value] for n, value in rollouts.get("pass_at_k", {}).items()],
        *[[f"pass^{n} (all {n} right; unbiased estimator)", v] for n, v in pass_hat.items()],
        ["majority vote accuracy (a tie counts as wrong)", rollouts.get("majority_accuracy")],
    ]
    return [
        f"### Rollouts ({k} per task; intervals above resample tasks with all their rollouts)",
        "",
        *table(["figure", "value"], rows),
        "",
    ]


def label(report: Mapping[str, Any], name: str) -> Md:
    """A figure's name for readers, with its code name beside it as code when they differ:
    one table cell (or header) of escaped parts, so the code span is not escaped again."""
    human = (report.get("figure_labels") or {}).get(name)
    if human and human != name:
        return Md(f"{markdown_text(human)} ({markdown_code(name)})")
    return Md(markdown_text(name))


def lead_label(report: Mapping[str, Any], row: Mapping[str, Any]) -> Md:
    """A headline row's name in the summary table: the paper's name, the statistic's code name
    beside it as code."""
    statistic = (report.get("lead") or {}).get("statistic", "accuracy")
    if statistic == row["label"]:
        return Md(f"{markdown_text(statistic)} (95% CI)")
    return Md(f"{markdown_text(row['label'])} ({markdown_code(statistic)}, 95% CI)")


def headline_lines(report: Mapping[str, Any], headline: Iterable[str]) -> list[str]:
    """One row per figure (the benchmark's headline first, then the macro ones), one column
    per reading convention."""
    rows = []
    for name in ordered_names(report, headline):
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
    """The published points of the run's setting beside its own figures, each labelled as
    what it is (the paper, a replication, a baseline, another suite's protocol)."""
    rows = report.get("published") or []
    if not rows:
        return []
    kinds = dict.fromkeys(r["kind"] for r in rows)
    return [
        "### Published figures (same setting), beside this run's",
        "",
        *table(
            ["kind", "model", "statistic", "group", "reading", "published", "this run", "95% CI", "agrees", "source"],
            [
                [
                    r["kind"],
                    r["model"],
                    r["statistic"],
                    r["group"] or "all",
                    r["reading"],
                    r["published"],
                    r["run"],
                    r["run_ci"],
                    agreement(r),
                    r["source"],
                ]
                for r in rows
            ],
        ),
        "",
        *(f"- {kind}: {KINDS[kind]}." for kind in kinds),
        "",
    ]


def agreement(row: Mapping[str, Any]) -> str:
    """Whether a published value agrees with the run's: inside or outside its interval, the
    same count or not; a dash when there is nothing to compare."""
    if row.get("inside_ci") is not None:
        return "inside CI" if row["inside_ci"] else "outside CI"
    if row.get("equal") is not None:
        return "equal" if row["equal"] else "differs"
    return "—"


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
            ["gold \\ pred", *map(fmt, columns)],
            [[g, *row.values()] for g, row in report["confusion"].items()],
        )
        lines.append("")
    return lines


def to_markdown(report: Mapping[str, Any], headline: Iterable[str] = ("accuracy",)) -> str:
    lines = [f"## {report['title']}", "", f"Source: {markdown_code(report['source'], in_table=False)}", ""]
    lines += [scored_by(report), ""]
    if report.get("demo_prompts"):
        lines += [
            "> **Demo prompts.** Prompts written by medhal stood in for the benchmark's own: these "
            "figures are a pipeline check, not benchmark results.",
            "",
        ]
    lines += completeness_lines(report)
    summary = [
        *([lead_label(report, row), figure_with_ci(row["value"], row["ci"])] for row in lead_rows(report)),
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
    lines += rollout_lines(report)
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
            [
                [count_text(u["count"], u.get("exact", True)), Md(markdown_code(u["shape"])), u["idx"]]
                for u in report["unreadable"]
            ],
        )
        lines.append("")
    lines += truncated_lines(report)
    if report["errors"]:
        lines += ["### Errored rollouts (kept in every denominator, scored wrong)", ""]
        at_least = set(report.get("errors_at_least", ()))
        lines += table(
            ["count", "error"], [[count_text(c, e not in at_least), e[:160]] for e, c in report["errors"].items()]
        )
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


def test_text(mcnemar: Mapping[str, Any], i: int) -> str:
    """The paired test of run i against run 1 in words."""
    if mcnemar.get("test") == "sign":
        return (
            f"run {i} vs run 1, accuracy: exact sign test on the per-task mean over rollouts, "
            f"p = {mcnemar['p_value']:.4g} ({mcnemar['right_only_in_first']} tasks better in run 1, "
            f"{mcnemar['right_only_in_this']} in run {i}; McNemar's test needs one rollout per task)."
        )
    return (
        f"run {i} vs run 1, accuracy: McNemar exact p = {mcnemar['p_value']:.4g} "
        f"({mcnemar['right_only_in_first']} items right only in run 1, "
        f"{mcnemar['right_only_in_this']} only in run {i})."
    )


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
                cells.append(Md(cell))
            models = ", ".join(row["models"] or {})
            flagged = ", ".join(row["differs_in"]) or "—"
            version = (row.get("code") or {}).get("environment_version", "?")
            rows.append(
                [Md(f"{i}: {markdown_code(row['run'])}"), models, row["n"], row["convention"], version, *cells, flagged]
            )
        lines += [*table(header, rows), ""]
        notes = []
        for i, row in enumerate(comparison["runs"][1:], start=2):
            if row.get("paired") is False:
                notes.append(
                    f"run {i} covers other tasks than run 1: compared unpaired ({fmt(row['why_unpaired'])})."
                )
            mcnemar = row.get("mcnemar")
            if mcnemar:
                notes.append(test_text(mcnemar, i))
            if row["differs_in"]:
                notes.append(
                    f"run {i} differs from run 1 in {fmt(', '.join(row['differs_in']))}: part of any "
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
