"""Checking Card-Check rows: every column a non-empty string, a known label. The first
problem is an error naming file, row and field."""

from __future__ import annotations

from card_check.benchmark import COLUMNS
from card_check.replies import LABELS
from medhal.kit.datasets import DatasetError, require_columns


def validate_rows(rows: list[dict], origin: str) -> None:
    require_columns(rows, COLUMNS, origin)
    for number, row in enumerate(rows, start=1):
        for column in COLUMNS:
            if not isinstance(row[column], str) or not row[column].strip():
                raise DatasetError(f"{origin}: row {number} field {column!r} is empty or not a string")
        if row["label"] not in LABELS:
            raise DatasetError(
                f"{origin}: row {number} field 'label' is {row['label']!r}, not one of {LABELS}"
            )


def item_text(row: dict) -> tuple[str, str]:
    """The question and answer text of an item (its evaluation fingerprint, `medhal.kit.roles`)."""
    return f"{row['card']}\n{row['statement']}", row["label"]


def evaluation_items(set_name: str, rows: list[dict], origin: str) -> list[tuple[str, str]]:
    """Every item of the set's rows, the rows checked first."""
    validate_rows(rows, origin)
    return [item_text(row) for row in rows]
