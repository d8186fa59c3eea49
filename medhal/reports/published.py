"""Published points, as data, to show beside a run's own figures: the papers' figures, an
independent replication's, what a trivial reply scores, and how other evaluation suites score
the same setting, each labelled as what it is.

Each environment ships `published.csv` (model, setting, statistic, group, value, source, kind,
reading, items): numbers only, each with where it comes from. `setting` lists the taskset
options a run must have for the point to be comparable (`knowledge=true;not_sure=false`;
empty: any); `group` names one group (a value of the report's macro field, or a gold class
for a class figure such as `support`), empty for the whole run; `kind` says what the point is
(`KINDS`); `reading` is the reading convention the run's value is taken under (default
`authors`, the published parsing); `items` is how many items the point covers, when that is
not the whole benchmark or group (another suite's subset). `value` may be empty only for
another suite's protocol, which is shown for what it compares with even where no figure of
theirs is recorded.

A point is shown beside a run only where the run is its setting, whole: the options match,
the run (or the group) holds exactly the items the point covers, once each, with no failed
rollout, and the prompts are the benchmark's own (`comparison`).
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COLUMNS = ("model", "setting", "statistic", "group", "value", "source", "kind", "reading", "items")
KINDS = {
    "paper": "the benchmark's paper",
    "replication": "an independent re-run of the benchmark's protocol",
    "baseline": "what a trivial reply scores, from the benchmark's label counts",
    "other suite": "how another evaluation suite scores this setting (its protocol)",
}
"""What a published point can be, and how a report says it."""
READINGS = ("medhal", "authors", "strict")
CLASS_STATISTICS = ("precision", "recall", "f1", "support")
"""Figures of one gold class (`report["classes"]`)."""


@dataclass(frozen=True)
class Published:
    model: str
    setting: tuple[tuple[str, str], ...]
    """(option, value) pairs a run must match."""
    statistic: str
    """The report statistic it corresponds to (`macro_accuracy`, `f1_paper`, ...)."""
    group: str
    """A group (value of the report's macro field, or a gold class) when the figure is for
    one group; "" for the whole benchmark."""
    value: float | None
    """None only for another suite's protocol with no figure recorded; an int for a count
    (written without a decimal point, like a class's `support`)."""
    source: str
    kind: str = "paper"
    reading: str = "authors"
    """The reading convention the run's value is taken under."""
    items: int | None = None
    """Items the point covers; None: the whole benchmark, or the whole group."""

    def matches(self, options: Mapping[str, Any]) -> bool:
        """Whether a run with these taskset options is in this figure's setting."""
        return all(_as_text(options.get(key)) == value for key, value in self.setting)


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def load(path: Path) -> tuple[Published, ...]:
    """The figures in a `published.csv`; a malformed row raises ValueError naming it."""
    figures = []
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise ValueError(f"{path}: columns must be {', '.join(COLUMNS)}")
        for number, row in enumerate(reader, start=2):
            try:
                figures.append(published_row(row))
            except (ValueError, KeyError) as e:
                raise ValueError(f"{path}:{number}: {e}") from e
    return tuple(figures)


def published_row(row: Mapping[str, str]) -> Published:
    """One row of a `published.csv`, checked."""
    setting = tuple(tuple(part.split("=", 1)) for part in row["setting"].split(";") if part.strip())
    if any(len(pair) != 2 for pair in setting):
        raise ValueError("setting must be option=value pairs separated by ';'")
    kind, reading = row["kind"].strip(), row["reading"].strip() or "authors"
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    if reading not in READINGS:
        raise ValueError(f"reading {reading!r} is not one of {', '.join(READINGS)}")
    value = row["value"].strip()
    if not value and kind != "other suite":
        raise ValueError("value is empty (only another suite's protocol may have none)")
    items = row["items"].strip()
    return Published(
        model=row["model"],
        setting=tuple((k.strip(), v.strip()) for k, v in setting),
        statistic=row["statistic"],
        group=row["group"],
        value=(int(value) if value.isdigit() else float(value)) if value else None,
        source=row["source"],
        kind=kind,
        reading=reading,
        items=int(items) if items else None,
    )


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


def run_options(report: Mapping[str, Any]) -> dict[str, Any]:
    """The taskset options of the run, from its provenance."""
    data = report.get("provenance", {}).get("data")
    records = [data] if isinstance(data, dict) and "options" in data else []
    if not records and isinstance(data, dict):
        records = [v for v in data.values() if isinstance(v, dict)]
    if isinstance(data, list):
        records = [v for v in data if isinstance(v, dict)]
    for record in records:
        if isinstance(record.get("options"), dict):
            return dict(record["options"])
    return {}
