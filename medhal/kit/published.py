"""Published points, as an environment declares them (`published.csv`): the papers' figures,
an independent replication's, what a trivial reply scores, and how other evaluation suites
score the same setting, each labelled as what it is; the report engine shows them beside a
run (`medhal.reports.published`).

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
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medhal.kit.outcomes import CONVENTIONS

COLUMNS = ("model", "setting", "statistic", "group", "value", "source", "kind", "reading", "items")
KINDS = {
    "paper": "the benchmark's paper",
    "replication": "an independent re-run of the benchmark's protocol",
    "baseline": "what a trivial reply scores, from the benchmark's label counts",
    "other suite": "how another evaluation suite scores this setting (its protocol)",
}
"""What a published point can be, and how a report says it."""


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
    if reading not in CONVENTIONS:
        raise ValueError(f"reading {reading!r} is not one of {', '.join(CONVENTIONS)}")
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
