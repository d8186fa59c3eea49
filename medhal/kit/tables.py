"""Markdown tables in replies: which cells a table gives as its answer.

Models answer in tables: a label/value row (`| Verdict | 1 |`), a column whose header
names the answer (`| Verdict | Reason |` over `| 1 | ... |`), or every option listed with
the chosen one ticked or bold (`| 1 | hallucinated | ✓ |`). A reader that takes every
cell as a candidate answer reads the list of options as a reply naming all of them; one
that ignores tables misses the answer. `answer_cells` tells the two kinds of cells apart,
naming no benchmark: the reader says what a label is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise

_ROW = re.compile(r"^[ \t>*•-]*\|.*\|[ \t]*$", re.MULTILINE)
"""A table row (in a quote block or a list too: "> | a | b |")."""
_SEPARATOR = re.compile(r"\|?(?:[ \t]*:?-{2,}:?[ \t]*\|)+[ \t]*:?-*:?[ \t]*")
_CELL = re.compile(r"(?<!\\)\|")
_TICK = re.compile(r"[\s*_`]*(?:[✓✔☑✅]|\[x\]|x|yes|chosen|selected|<--|←)[\s*_`]*", re.IGNORECASE)
_BOLD = re.compile(r"[ \t]*(?:\*\*|__).+(?:\*\*|__)[ \t]*")
_DECORATION = " \t*_`#:"

Span = tuple[int, int]


@dataclass(frozen=True)
class _Table:
    rows: list[list[Span]]
    """Each row's cells, as (start, end) in the text (between the pipes)."""
    header: bool
    """Whether the first row is a header (a separator row follows it)."""


def _tables(text: str) -> list[_Table]:
    """Every run of two or more table rows, separator rows left out."""
    found: list[_Table] = []
    run: list[list[Span]] = []
    header = False
    last_end = -2
    for line in _ROW.finditer(text):
        if line.start() != last_end + 1 and run:
            found += [_Table(run, header)] if len(run) > 1 or header else []
            run, header = [], False
        last_end = line.end()
        body = line.group()
        if _SEPARATOR.fullmatch(body.strip().lstrip("> \t*•-")):
            header = header or len(run) == 1
            continue
        pipes = [m.start() + line.start() for m in _CELL.finditer(body)]
        run.append([(a + 1, b) for a, b in pairwise(pipes)])
    if run:
        found += [_Table(run, header)] if len(run) > 1 or header else []
    return found


def answer_cells(text: str, is_label: Callable[[str], bool]) -> tuple[list[Span], list[Span]]:
    """(answer cells, other cells) of every Markdown table in `text`, as (start, end).

    The answer cells: under a header cell that `is_label` accepts (the cell's text, stripped
    of decoration); the cell after a row's first cell that `is_label` accepts; the cells of
    the rows a tick column marks (✓, [x], "yes", "chosen" in a column empty in other rows),
    or of the one row written in bold. Every other cell of a table is listed, not answered.
    Linear in the text: one pass over its lines."""
    answers: list[Span] = []
    others: list[Span] = []
    for table in _tables(text):
        chosen = _chosen(text, table, is_label)
        for row in table.rows:
            for cell in row:
                (answers if cell in chosen else others).append(cell)
    return answers, others


def _words(text: str, cell: Span) -> str:
    return text[cell[0] : cell[1]].strip(_DECORATION)


def _chosen(text: str, table: _Table, is_label: Callable[[str], bool]) -> set[Span]:
    rows = table.rows
    data = rows[1:] if table.header else rows
    if table.header:
        columns = [n for n, cell in enumerate(rows[0]) if is_label(_words(text, cell))]
        if columns:
            return {row[n] for row in data for n in columns if n < len(row)}
    chosen: set[Span] = set()
    for row in data:
        filled = [cell for cell in row if _words(text, cell)]
        if len(filled) >= 2 and is_label(_words(text, filled[0])):
            chosen.add(filled[1])
    if chosen:
        return chosen
    return _ticked(text, data) or _bold(text, data)


def _ticked(text: str, data: list[list[Span]]) -> set[Span]:
    """The cells (other than the tick) of rows marked in a column that some rows leave empty."""
    width = max((len(row) for row in data), default=0)
    for n in range(1, width):
        marks = [n < len(row) and bool(_TICK.fullmatch(text[row[n][0] : row[n][1]])) for row in data]
        empty = [n < len(row) and not _words(text, row[n]) for row in data]
        if any(marks) and all(m or e for m, e in zip(marks, empty, strict=True)) and not all(marks):
            return {
                cell for row, m in zip(data, marks, strict=True) if m for k, cell in enumerate(row) if k != n
            }
    return set()


def _bold(text: str, data: list[list[Span]]) -> set[Span]:
    """The cells of the one row whose filled cells are all bold, when the others are not."""
    bold = [row for row in data if all(_BOLD.fullmatch(text[a:b]) for a, b in row if text[a:b].strip())]
    return set(bold[0]) if len(bold) == 1 and len(data) > 1 else set()
