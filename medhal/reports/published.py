"""Published points beside a run's own figures: a point (`medhal.kit.published`, an
environment's `published.csv`) is shown only where the run is its setting, whole: the options
match, the run (or the group) holds exactly the items the point covers, once each, with no
failed rollout, and the prompts are the benchmark's own (`comparison`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from medhal.kit.published import KINDS, Published
from medhal.reports.provenance import run_options

CLASS_STATISTICS = ("precision", "recall", "f1", "support")
"""Figures of one gold class (`report["classes"]`)."""


# ------------------------------------------------------------------------------ beside a run


def comparison(report: Mapping[str, Any], spec: Any) -> list[dict[str, Any]]:
    """The published points of the run's setting, each beside the run's value under its
    reading, with the run's interval and whether the published value lies inside it (or, for
    a figure without an interval, a count, whether the two are equal). A point for the whole
    run needs the whole run to be exactly what it covers; a point for a group, that group; a
    run with prompts written by medhal is comparable with nothing."""
    if report.get("demo_prompts"):
        return []
    options = run_options(report)
    rows = []
    for figure in spec.published:
        if not figure.matches(options):
            continue
        figures = _covered(report, spec, figure)
        if figures is None:
            continue
        value = figures.get(figure.statistic)
        interval = figures.get(f"{figure.statistic}_ci")
        rows.append(
            {
                "kind": figure.kind,
                "model": figure.model,
                "statistic": figure.statistic,
                "group": figure.group,
                "reading": figure.reading,
                "published": figure.value,
                "run": value,
                "run_ci": interval,
                "inside_ci": _inside(figure.value, interval),
                "equal": figure.value == value if interval is None and None not in (value, figure.value) else None,
                "source": figure.source,
            }
        )
    order = list(KINDS)
    return sorted(rows, key=lambda r: order.index(r["kind"]))


def _inside(value: float | None, interval: Sequence[float] | None) -> bool | None:
    if value is None or not interval:
        return None
    return bool(interval[0] <= value <= interval[1])


def _covered(report: Mapping[str, Any], spec: Any, figure: Published) -> Mapping[str, Any] | None:
    """The run's figures under the point's reading when the run (or the point's group) holds
    exactly the items the point covers, once each, without a failed rollout; else None."""
    if not report.get("complete"):
        return None
    if figure.group and figure.group in spec.classes:
        if figure.statistic not in CLASS_STATISTICS or not _whole(report, figure.items or spec.full_size):
            return None
        found: Mapping[str, Any] | None = report.get("classes", {}).get(figure.group)
        return found
    if figure.group:
        group = report["groups"].get(spec.macro_field or "", {}).get(figure.group)
        size = figure.items or spec.group_sizes.get(figure.group)
        if group is None or size is None or group["n"] != size or group["n_errors"]:
            return None
        figures: Mapping[str, Any] = group["conventions"][figure.reading]
        return figures
    if not _whole(report, figure.items or spec.full_size):
        return None
    overall: Mapping[str, Any] = report["conventions"][figure.reading]
    return overall


def _whole(report: Mapping[str, Any], size: int | None) -> bool:
    """The run holds `size` tasks, each once (one rollout), none failed."""
    return size is not None and report.get("n_distinct") == size and report["n"] == size and not report["n_errors"]
