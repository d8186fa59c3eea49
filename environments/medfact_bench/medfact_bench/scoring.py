"""Parsing and scoring a MedFact-Bench reply.

The model is asked for `<think>…</think><score>…</score>`. Only the first score block
counts, and only an integer from -2 to 2 inside it is a valid answer; the five-point
score collapses to the dataset's three labels. Anything else is INVALID: it scores 0
and stays in every denominator.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SCORE_TO_LABEL = {2: "SUPPORT", 1: "SUPPORT", 0: "NEI", -1: "CONTRADICT", -2: "CONTRADICT"}
LABELS = ("SUPPORT", "NEI", "CONTRADICT")

_SCORE_BLOCK = re.compile(r"<score>(.*?)</score>", re.DOTALL | re.IGNORECASE)
_INTEGER = re.compile(r"[+-]?\d+")
_STRICT = re.compile(r"\s*<think>(?:(?!<think>|</think>).)*</think>\s*<score>(?:(?!<score>|</score>).)*</score>\s*", re.DOTALL)


@dataclass(frozen=True)
class Parsed:
    score: int | None
    """The integer in the first score block, when it is one of -2..2."""

    @property
    def label(self) -> str | None:
        return SCORE_TO_LABEL.get(self.score) if self.score is not None else None


def parse_reply(reply: str) -> Parsed:
    match = _SCORE_BLOCK.search(reply or "")
    if match is None:
        return Parsed(None)
    body = match.group(1).strip()
    if not _INTEGER.fullmatch(body):
        return Parsed(None)
    value = int(body)
    return Parsed(value if value in SCORE_TO_LABEL else None)


def strict_format(reply: str) -> bool:
    """Exactly one think block followed by exactly one score block, nothing else around."""
    return bool(_STRICT.fullmatch(reply or ""))
