"""Dataset rows from the Hugging Face Hub at a pinned revision, or from a local file.

Every benchmark loads through `load_rows`, so a local parquet/jsonl/csv file in the same
schema is a drop-in replacement for the Hub dataset (`dataset_path`), and both routes
return the provenance that goes onto traces and reports: the dataset id and revision,
or the file's path and sha256.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

from medhal.assets import sha256_file

LOCAL_FORMATS = (".parquet", ".jsonl", ".json", ".csv")


class DatasetError(ValueError):
    """The data does not have the shape a benchmark needs; the message names file, row and field."""


@dataclass(frozen=True)
class HubDataset:
    """A Hugging Face dataset pinned to a revision."""

    id: str
    revision: str
    config: str | None = None
    split: str = "train"


@dataclass(frozen=True)
class LoadedRows:
    rows: list[dict]
    provenance: dict[str, str]
    """`dataset`, and `revision` (Hub) or `path` + `sha256` (local file)."""
    origin: str
    """How to name this data in error messages: the file path or `id@revision`."""


def _read_local(path: Path) -> list[dict]:
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    if suffix == ".csv":
        with open(path, newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f))
    if suffix in (".jsonl", ".json"):
        text = path.read_text(encoding="utf-8")
        if suffix == ".json" and text.lstrip().startswith("["):
            rows = json.loads(text)
        else:
            rows = []
            # Split on "\n" only: str.splitlines() also breaks at U+2028/U+2029 and other
            # separators that JSON strings may hold unescaped.
            for number, line in enumerate(text.split("\n"), start=1):
                if not line.strip():
                    continue
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise DatasetError(f"{path}:{number}: not valid JSON ({e.msg})") from e
        for number, row in enumerate(rows, start=1):
            if not isinstance(row, dict):
                raise DatasetError(f"{path}: row {number} is a {type(row).__name__}, not an object")
        return rows
    raise DatasetError(
        f"{path}: unsupported dataset file type {suffix!r}; use one of {', '.join(LOCAL_FORMATS)}"
    )


def load_rows(
    hub: HubDataset, dataset_path: str | Path | None = None, revision: str | None = None
) -> LoadedRows:
    """Load every row in file order (the order defines `TaskData.idx`)."""
    if dataset_path is not None:
        path = Path(dataset_path).expanduser()
        if not path.is_file():
            raise DatasetError(f"dataset_path {str(path)!r} does not exist or is not a file")
        return LoadedRows(
            rows=_read_local(path),
            provenance={
                "dataset": hub.id,
                "config": hub.config or "",
                "path": str(path),
                "sha256": sha256_file(path),
            },
            origin=str(path),
        )
    from datasets import load_dataset

    rev = revision or hub.revision
    dataset = load_dataset(hub.id, hub.config, split=hub.split, revision=rev)
    return LoadedRows(
        rows=dataset.to_list(),
        provenance={"dataset": hub.id, "config": hub.config or "", "revision": rev},
        origin=f"{hub.id}{'/' + hub.config if hub.config else ''}@{rev}",
    )


def require_columns(rows: list[dict], columns: tuple[str, ...], origin: str) -> None:
    """Fail on the first row missing a required column, naming it."""
    for number, row in enumerate(rows, start=1):
        missing = [c for c in columns if c not in row]
        if missing:
            raise DatasetError(f"{origin}: row {number} lacks column(s) {', '.join(missing)}")
