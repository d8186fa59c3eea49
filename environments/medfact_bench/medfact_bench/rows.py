"""Checking MedFact-Bench rows: every column present and a non-empty string, a known
label and component. The first problem is an error naming file, row and field."""

from __future__ import annotations

from medfact_bench.benchmark import COLUMNS, COMPONENTS
from medfact_bench.replies import LABELS
from medhal.kit.datasets import DatasetError, require_columns


def validate_rows(rows: list[dict], origin: str) -> None:
    require_columns(rows, COLUMNS, origin)
    for number, row in enumerate(rows, start=1):
        for column in COLUMNS:
            value = row[column]
            if not isinstance(value, str) or (column != "system_prompt" and not value.strip()):
                raise DatasetError(f"{origin}: row {number} field {column!r} is empty or not a string")
        if row["label"] not in LABELS:
            raise DatasetError(
                f"{origin}: row {number} field 'label' is {row['label']!r}, not one of {LABELS}"
            )
        if row["dataset"] not in COMPONENTS:
            raise DatasetError(
                f"{origin}: row {number} field 'dataset' is {row['dataset']!r}, not one of {list(COMPONENTS)}"
            )


def item_text(row: dict) -> tuple[str, str]:
    """The question and answer text of an item (what its evaluation fingerprint is made of,
    `medhal.kit.roles`): the claim with its article, and the gold label."""
    return f"{row['claim']}\n{row['source']}", row["label"]


def evaluation_items(set_name: str, rows: list[dict], origin: str) -> list[tuple[str, str]]:
    """Every item of the benchmark's rows, the rows checked first."""
    validate_rows(rows, origin)
    return [item_text(row) for row in rows]
