"""Figures the papers published, as data, to show beside a run's own.

Each environment ships `published.csv` (model, setting, statistic, group, value, source):
numbers only, each with the paper and table or figure it comes from. `setting` lists the
taskset options a run must have for the figure to be comparable (`knowledge=true;
not_sure=false`; empty: any run of the complete benchmark). A report of a complete,
paper-comparable run shows the figures of its setting next to its own value under the
authors' reading, and whether each lies inside the run's interval.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COLUMNS = ("model", "setting", "statistic", "group", "value", "source")


@dataclass(frozen=True)
class Published:
    model: str
    setting: tuple[tuple[str, str], ...]
    """(option, value) pairs a run must match."""
    statistic: str
    """The report statistic it corresponds to (`macro_accuracy`, `f1_paper`, ...)."""
    group: str
    """A group (value of the report's macro field) when the figure is for one group; ""
    for the whole benchmark."""
    value: float
    source: str

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
                setting = tuple(
                    tuple(part.split("=", 1)) for part in row["setting"].split(";") if part.strip()
                )
                if any(len(pair) != 2 for pair in setting):
                    raise ValueError("setting must be option=value pairs separated by ';'")
                figures.append(
                    Published(
                        model=row["model"],
                        setting=tuple((k.strip(), v.strip()) for k, v in setting),
                        statistic=row["statistic"],
                        group=row["group"],
                        value=float(row["value"]),
                        source=row["source"],
                    )
                )
            except (ValueError, KeyError) as e:
                raise ValueError(f"{path}:{number}: {e}") from e
    return tuple(figures)
