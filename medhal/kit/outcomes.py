"""Names of what a task records on its trace and a report reads back: defined once here,
so the two sides cannot drift apart.

Every benchmark's task scores a reply once, in one metric that returns all of these at
once (verifiers records each key); its reward reads them from the trace.
"""

from __future__ import annotations

from typing import Literal, get_args

Convention = Literal["medhal", "authors", "strict"]
"""The three named ways every benchmark reads a reply: `medhal` (what a careful human
reads; the default), `authors` (the benchmark authors' published code, rule for rule)
and `strict` (only the exact format the prompt asks for). A task records its outcomes under
each (`correct_key`, `parsed_key`, `READINGS`) and a report shows each."""
CONVENTIONS: tuple[str, ...] = get_args(Convention)
"""The conventions, in the order reports show them."""

CORRECT = "correct"
"""1.0 when the item is answered right under the run's reading convention."""
PARSED = "parsed"
"""1.0 when a reading (a label, a score, an answer) could be made of the reply."""
READINGS = "readings"
"""`trace.info` key: the reading under every convention ({convention: label or None})."""


def correct_key(convention: str) -> str:
    """The metric that is 1.0 when the reading under `convention` is right."""
    return f"{CORRECT}_{convention}"


def parsed_key(convention: str) -> str:
    """The metric that is 1.0 when `convention` could read the reply."""
    return f"{PARSED}_{convention}"
