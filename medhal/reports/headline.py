"""Each benchmark's headline: the figure its paper reports as the result, named as the paper
names it, and shown first wherever a report is shown (report.md's and report.html's summary,
the terminal summary, the demo's table).

A benchmark declares it once, on its `ReportSpec` (`lead`): MedHallu's F1 of the hallucinated
class, Med-HALT's score per test set, MedFact-Bench's macro accuracy over its components. The
report carries it as `report["lead"]` (`lead_block`): its name, the statistic behind it, the
reading convention it is under (the run's), and one row per group it is given for (one row
for the whole run when the paper gives one number), each with its interval and what it
covers. Every renderer takes its rows from `lead_rows`, so the four places cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from medhal.kit.outcomes import CONVENTIONS
from medhal.kit.report_spec import Lead


DEMO_COLUMNS = ["benchmark", "headline (as the paper names it)", "value (95% CI)", "items", "errors", "replies read"]
"""The columns of the demo's table (report.md and report.html): each benchmark's headline
first, then what it covers."""


def lead_block(report: Mapping[str, Any], lead: Lead) -> dict[str, Any]:
    """`report["lead"]`: the headline's rows under the run's reading convention. A
    per-group headline has a row per group the run has, in the report's group order; a
    headline the run cannot give (a statistic it lacks) has no rows."""
    own = report["convention"]
    if lead.per is None:
        figures = report["conventions"][own]
        scopes: list[tuple[str | None, Mapping[str, Any], Mapping[str, Any]]] = []
        if lead.statistic in figures:
            scopes.append((None, figures, report))
    else:
        groups = report["groups"].get(lead.per, {})
        scopes = [(name, g, g) for name, g in groups.items() if lead.statistic in g]
    rows = [
        {
            "group": group,
            "value": figures.get(lead.statistic),
            "ci": figures.get(f"{lead.statistic}_ci"),
            "n": scope["n"],
            "n_errors": scope["n_errors"],
            "parse_rate": figures.get("parse_rate", scope.get("parse_rate")),
        }
        for group, figures, scope in scopes
    ]
    return {"statistic": lead.statistic, "name": lead.name, "per": lead.per, "convention": own, "rows": rows}


def lead_rows(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The headline's rows, each with the label a reader sees: the paper's name, and the
    group after it for a per-group headline ("Pointwise Score (eq. 1), reasoning_FCT")."""
    block = report.get("lead") or {}
    name = block.get("name", "accuracy")
    return [
        {**row, "label": name if row["group"] is None else f"{name}, {row['group']}"}
        for row in block.get("rows", [])
    ]


def lead_title(report: Mapping[str, Any]) -> str:
    """What the headline is, in words: "F1 of the hallucinated class (medhal reading)", or
    "Pointwise Score (eq. 1) per test_set (medhal reading)"."""
    block = report.get("lead") or {}
    per = f" per {block['per']}" if block.get("per") else ""
    return f"{block.get('name', 'accuracy')}{per} ({block.get('convention', report.get('convention'))} reading)"


def ordered_names(report: Mapping[str, Any], headline: Iterable[str]) -> list[str]:
    """The figures of the table by reading convention, in order: the headline's statistic
    first (for a per-group headline, its mean over the macro groups), then the macro
    figures, then the other headline statistics the report has."""
    first = report["conventions"][CONVENTIONS[0]]
    macro = [k for k in first if k.startswith("macro_") and not k.endswith("_ci")]
    rest = [n for n in headline if n in first and n not in macro]
    block = report.get("lead") or {}
    statistic = block.get("statistic")
    leading = [f"macro_{statistic}" if block.get("per") else statistic]
    return list(dict.fromkeys([*(n for n in leading if n in first), *macro, *rest]))
