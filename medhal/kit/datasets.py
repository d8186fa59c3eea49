"""Dataset rows from the Hugging Face Hub at a pinned revision, or from a local file.

Every benchmark loads through `load_rows`, so a local parquet/jsonl/json/csv file in the
same schema is a drop-in replacement for the Hub dataset (`dataset_path`), and both routes
return the provenance that goes onto traces and reports: the dataset id and revision,
or the file's path and sha256.

Every file is untrusted input. Whatever is wrong with it is found here, at load, and
named (file, line or row, field) in one `DatasetError` line, before a single rollout
runs: text that is not UTF-8, JSON nested absurdly deep, integers of thousands of digits,
and text cells that cannot be written back out as UTF-8 (a lone surrogate such as JSON
"\\ud800"), which would otherwise only fail when the finished traces are written and take
the whole run with them. Oddities that lose nothing the benchmark reads (duplicate JSON
keys, columns it does not read) are logged once per file.
"""

from __future__ import annotations

import csv
import io
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from medhal.kit.assets import sha256_file
from medhal.kit.files import (
    DuplicateKeys,
    LongNumber,
    UnreadableText,
    decode_utf8,
    first_deep_line,
    loads_json,
    strip_utf8_bom,
    text_problem,
    value_problem,
)

LOCAL_FORMATS = (".parquet", ".jsonl", ".json", ".csv")
MAX_CELL_DEPTH = 32
"""Deepest nesting accepted inside one cell (MedHallu's Knowledge list is 1 level)."""
CSV_FIELD_LIMIT = 1 << 28
"""Largest CSV cell accepted, in characters (256 Mi). The csv module's default, 131,072,
is smaller than some real article cells; a bound stays so a broken quote cannot make one
cell swallow an unbounded file without limit."""

LIBRARY_LOGGER = "verifiers.v1"
Rows = TypeVar("Rows", bound=Sequence[Any])


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
    rows: list[dict[str, Any]]
    provenance: dict[str, str]
    """`dataset`, and `revision` (Hub) or `path` + `sha256` (local file)."""
    origin: str
    """How to name this data in error messages: the file path or `id@revision`."""


# ---------------------------------------------------------------------------- file formats


def _text(path: Path) -> str:
    try:
        return decode_utf8(strip_utf8_bom(path.read_bytes()))
    except UnreadableText as e:
        raise DatasetError(f"{path}: {e}") from None


def _read_json(path: Path, suffix: str, duplicates: DuplicateKeys) -> tuple[list[Any], list[int | None]]:
    """Rows and, for JSON lines, the line each row came from."""
    text = _text(path)
    if suffix == ".json" and text.lstrip().startswith("["):
        try:
            array: list[Any] = loads_json(text, duplicates)
        except UnreadableText as e:
            if e.line is not None:
                raise DatasetError(f"{path}:{e.line}:{e.column}: {e}") from None
            deep = first_deep_line(text, 256)
            raise DatasetError(f"{path}{f':{deep}' if deep else ''}: {e}") from None
        return array, [None] * len(array)
    rows: list[Any] = []
    lines: list[int | None] = []
    # Split on "\n" only: str.splitlines() also breaks at U+2028/U+2029 and other
    # separators that JSON strings may hold unescaped.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            rows.append(loads_json(line, duplicates))
        except UnreadableText as e:
            raise DatasetError(f"{path}:{number}{f':{e.column}' if e.column else ''}: {e}") from None
        lines.append(number)
    return rows, lines


def _read_csv(path: Path, duplicated: list[str]) -> tuple[list[dict[str, Any]], list[int | None]]:
    """Rows as dicts keyed by the header (`utf-8-sig`: a byte-order mark is not part of
    the first column's name), and the line each row starts on."""
    text = _text(path)
    if csv.field_size_limit() < CSV_FIELD_LIMIT:
        csv.field_size_limit(CSV_FIELD_LIMIT)
    reader = csv.reader(io.StringIO(text, newline=""))
    rows: list[dict[str, Any]] = []
    lines: list[int | None] = []
    header: list[str] | None = None
    start = 1
    try:
        for cells in reader:
            if not cells:
                start = reader.line_num + 1
                continue
            if header is None:
                header = cells
                seen: set[str] = set()
                for name in header:
                    if name in seen and name not in duplicated:
                        duplicated.append(name)
                    seen.add(name)
            else:
                if len(cells) > len(header):
                    raise DatasetError(
                        f"{path}:{start}: row {len(rows) + 1} has {len(cells)} cells but the header has "
                        f"{len(header)} columns (an unquoted comma or a broken quote?)"
                    )
                rows.append(dict(zip(header, cells + [None] * (len(header) - len(cells)), strict=True)))
                lines.append(start)
            start = reader.line_num + 1
    except csv.Error as e:
        raise DatasetError(f"{path}:{reader.line_num}: not valid CSV ({e})") from None
    return rows, lines


def _read_parquet(path: Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as e:  # pyarrow raises several types for a corrupt or foreign file
        detail = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise DatasetError(f"{path}: not a readable parquet file ({detail})") from None
    columns: dict[str, list[Any]] = {}
    for name, column in zip(table.column_names, table.columns, strict=True):
        try:
            columns[name] = column.to_pylist()
        except (UnicodeDecodeError, ValueError) as e:
            raise DatasetError(
                f"{path}: row {_bad_parquet_row(column)} field {name!r} is not valid UTF-8 text ({e})"
            ) from None
    return [dict(zip(columns, values, strict=True)) for values in zip(*columns.values(), strict=True)]


def _bad_parquet_row(column: Any) -> int | str:
    number = 0
    for chunk in column.chunks:
        for i in range(len(chunk)):
            number += 1
            try:
                chunk[i].as_py()
            except (UnicodeDecodeError, ValueError):
                return number
    return "?"


# ---------------------------------------------------------------------------- checks


def warn(message: str, *args: object) -> None:
    """Log a warning where the person running the command sees it: through verifiers' log
    (console and eval.log) when `eval` has set it up (verifiers/v1/utils/logging.py:40-56),
    else on the `medhal.kit.datasets` logger, which Python prints to stderr by default. Under a
    plain `import verifiers` the library logger holds only a NullHandler, which would
    swallow the message."""
    library = logging.getLogger(LIBRARY_LOGGER)
    if any(not isinstance(h, logging.NullHandler) for h in library.handlers):
        logging.getLogger(f"{LIBRARY_LOGGER}.{__name__}").warning(message, *args)
    else:
        logging.getLogger(__name__).warning(message, *args)


def _where(origin: str, number: int, line: int | None) -> str:
    return f"{origin}:{line}: row {number}" if line is not None else f"{origin}: row {number}"


def _cell_problem(value: Any) -> tuple[str, str] | None:
    if value is None or isinstance(value, (bool, int, float)):
        return None
    if isinstance(value, str):
        problem = text_problem(value)
        return ("", problem) if problem else None
    if isinstance(value, (list, dict, LongNumber)):
        return value_problem(value, MAX_CELL_DEPTH)
    return None


def check_cells(rows: Iterable[Any], origin: str, lines: Sequence[int | None] | None = None) -> None:
    """Every row is an object, and every text in it (nested lists and dicts included) can
    be written as UTF-8; no number is too long to use; no cell is nested absurdly deep.
    The first failure is a DatasetError naming the row, its line when known, and the field
    path (`Knowledge[2]`)."""
    for number, row in enumerate(rows, start=1):
        line = lines[number - 1] if lines else None
        if not isinstance(row, dict):
            raise DatasetError(f"{_where(origin, number, line)} is a {type(row).__name__}, not an object")
        for key, value in row.items():
            if isinstance(key, str) and text_problem(key):
                raise DatasetError(f"{_where(origin, number, line)}: a column name {text_problem(key)}")
            found = _cell_problem(value)
            if found:
                path, problem = found
                field = f"{key}{'' if not path or path.startswith('[') else '.'}{path}"
                raise DatasetError(f"{_where(origin, number, line)} field {field!r} {problem}")


def _warn_extras(rows: list[dict[str, Any]], columns: Iterable[str] | None, origin: str) -> None:
    if columns is None:
        return
    wanted = set(columns)
    extra: dict[str, None] = {}
    for row in rows:
        for key in row:
            # "_note"-style columns annotate a file (our demo rows say who wrote them).
            if key not in wanted and key not in extra and not str(key).startswith("_"):
                extra[key] = None
    if extra:
        warn("%s: column(s) %s are not read by this benchmark (ignored)", origin, ", ".join(map(repr, extra)))


def _read_local(path: Path, columns: Iterable[str] | None = None) -> list[dict[str, Any]]:
    suffix = path.suffix.lower()
    lines: list[int | None] = []
    if suffix == ".parquet":
        rows = _read_parquet(path)
    elif suffix == ".csv":
        duplicated: list[str] = []
        rows, lines = _read_csv(path, duplicated)
        if duplicated:
            warn(
                "%s: the header repeats column(s) %s; the last one of each is used",
                path,
                ", ".join(map(repr, duplicated)),
            )
    elif suffix in (".jsonl", ".json"):
        duplicates = DuplicateKeys()
        rows, lines = _read_json(path, suffix, duplicates)
        if duplicates.keys:
            warn(
                "%s: duplicate JSON key(s) %s in an object; the last value of each is used",
                path,
                ", ".join(map(repr, duplicates.keys)),
            )
    else:
        raise DatasetError(
            f"{path}: unsupported dataset file type {suffix!r}; use one of {', '.join(LOCAL_FORMATS)}"
        )
    if not rows:
        raise DatasetError(f"{path}: no rows (the file holds no data)")
    check_cells(rows, str(path), lines)
    _warn_extras(rows, columns, str(path))
    return rows


def load_rows(
    hub: HubDataset | None,
    dataset_path: str | Path | None = None,
    revision: str | None = None,
    columns: Iterable[str] | None = None,
) -> LoadedRows:
    """Load every row in file order (the order defines `TaskData.idx`), checked as
    described in the module docstring. `columns`, when given, lists what the benchmark
    reads; other columns in a local file are logged once (not an error). `hub` is None for
    a benchmark whose rows ship as a file (then `dataset_path` is required)."""
    if dataset_path is not None:
        path = Path(dataset_path).expanduser()
        if not path.is_file():
            raise DatasetError(f"dataset_path {str(path)!r} does not exist or is not a file")
        return LoadedRows(
            rows=_read_local(path, columns),
            provenance={
                "dataset": hub.id if hub else "",
                "config": (hub.config if hub else None) or "",
                "path": str(path),
                "sha256": sha256_file(path),
            },
            origin=str(path),
        )
    if hub is None:
        raise DatasetError("no dataset_path: this benchmark has no Hub dataset to load instead")
    from datasets import load_dataset

    rev = revision or hub.revision
    origin = f"{hub.id}{'/' + hub.config if hub.config else ''}@{rev}"
    dataset = load_dataset(hub.id, hub.config, split=hub.split, revision=rev)
    rows = dataset.to_list()
    if not rows:
        raise DatasetError(f"{origin}: no rows")
    check_cells(rows, origin)
    return LoadedRows(
        rows=rows,
        provenance={"dataset": hub.id, "config": hub.config or "", "revision": rev},
        origin=origin,
    )


def require_columns(rows: list[dict[str, Any]], columns: tuple[str, ...], origin: str) -> None:
    """Fail on the first row missing a required column, naming it."""
    for number, row in enumerate(rows, start=1):
        missing = [c for c in columns if c not in row]
        if missing:
            raise DatasetError(f"{origin}: row {number} lacks column(s) {', '.join(missing)}")


def require_rows(rows: Rows, origin: str, what: str) -> Rows:
    """An empty selection is an error, as an empty file is: a run of 0 items would report
    nothing and pass every gate. `what` completes the sentence, e.g. "match subset 'medqa'"
    -> "<origin>: no rows match subset 'medqa'; nothing to evaluate"."""
    if not rows:
        raise DatasetError(f"{origin}: no rows {what}; nothing to evaluate")
    return rows
