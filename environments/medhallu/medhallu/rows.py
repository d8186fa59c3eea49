"""Checking MedHallu rows and turning each into detection items.

Every row holds a question, its ground-truth answer and a generated hallucinated answer;
each answer becomes an item (gold `factual` / `hallucinated`), and each item's question and
answer text is what its evaluation fingerprint is made of (`item_texts`). Loading checks every row
(columns present, non-empty strings, `Knowledge` a non-empty list of strings, a known
difficulty) and names the file, row and field of the first problem.
"""

from __future__ import annotations

import hashlib

from medhal.kit.datasets import DatasetError, require_columns
from medhallu.benchmark import COLUMNS, DIFFICULTIES
from medhallu.replies import FACTUAL, HALLUCINATED


def validate_rows(rows: list[dict], origin: str) -> None:
    require_columns(rows, COLUMNS, origin)
    for number, row in enumerate(rows, start=1):
        for column in COLUMNS:
            value = row[column]
            if column == "Knowledge":
                if not isinstance(value, list) or not value or not all(isinstance(c, str) for c in value):
                    raise DatasetError(
                        f"{origin}: row {number} field 'Knowledge' must be a non-empty list of strings"
                    )
            elif not isinstance(value, str) or not value.strip():
                raise DatasetError(f"{origin}: row {number} field {column!r} is empty or not a string")
        if row["Hallucinated Answer"].strip() == row["Ground Truth"].strip():
            raise DatasetError(
                f"{origin}: row {number} field 'Hallucinated Answer' equals 'Ground Truth': its two items "
                "would need opposite verdicts on the same answer"
            )
        if row["Difficulty Level"] not in DIFFICULTIES:
            raise DatasetError(
                f"{origin}: row {number} field 'Difficulty Level' is {row['Difficulty Level']!r}, "
                f"not one of {DIFFICULTIES}"
            )


def draws_hallucinated(row: dict, seed: int) -> bool:
    """The `pairing = one` draw: a hash of the seed and the row's own text, so the same
    row gets the same item whatever its position."""
    key = "\x1f".join([str(seed), row["Question"], row["Ground Truth"], row["Hallucinated Answer"]])
    return hashlib.sha256(key.encode("utf-8")).digest()[0] & 1 == 1


def item_labels(row: dict, pairing: str, seed: int) -> tuple[str, ...]:
    """The gold labels of the items a row gives: both (factual first) or one drawn."""
    if pairing == "one":
        return (HALLUCINATED,) if draws_hallucinated(row, seed) else (FACTUAL,)
    return (FACTUAL, HALLUCINATED)


def item_texts(row: dict) -> list[tuple[str, str]]:
    """The question and answer text of each item a row can give (both answers, whatever
    the pairing): what an item's evaluation fingerprint is made of (`medhal.kit.roles`)."""
    return [(row["Question"], row["Ground Truth"]), (row["Question"], row["Hallucinated Answer"])]


def evaluation_items(set_name: str, rows: list[dict], origin: str) -> list[tuple[str, str]]:
    """Every item of an evaluation set's rows (`EVALUATION_SETS`), the rows checked first."""
    validate_rows(rows, origin)
    return [item for row in rows for item in item_texts(row)]
