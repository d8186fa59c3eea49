"""Reading a MedFact-Bench score out of a reply, under three named conventions.

The system prompt asks for `<think>…</think><score>n</score>` with n one of -2..2. Each
reader is a pure function `reply -> score | None` (None: INVALID); `label_of` maps a
score to the dataset's three labels. README, "How replies are read", shows examples.

- `medhal` (default): what a careful human reads.
- `authors`: Med-V1's `parse_llm_output` (utils.py), as published.
- `strict`: Med-V1's own format check for its RL reward (compute_score.py), plus a
  score on the scale.

All three are linear in the reply length (the authors' lazy `<score>(.*?)</score>` search
is re-implemented with two `str.find` calls that give the same first match).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable

from medhal.kit.replies import (
    after_reasoning,
    ascii_digits,
    label_pattern,
    labelled,
    last_boxed,
    last_line,
    last_of,
    plain,
)

SCORE_TO_LABEL = {2: "SUPPORT", 1: "SUPPORT", 0: "NEI", -1: "CONTRADICT", -2: "CONTRADICT"}
LABELS = ("SUPPORT", "NEI", "CONTRADICT")
SCALE = (-2, -1, 0, 1, 2)

Reader = Callable[[str | None], int | None]


def label_of(score: int | None) -> str | None:
    return SCORE_TO_LABEL.get(score) if score is not None else None


def _on_scale(value: int | None) -> int | None:
    return value if value in SCORE_TO_LABEL else None


# ------------------------------------------------------------------------------ authors


def _first_block(text: str, opening: str, closing: str) -> str | None:
    """The body of the first `opening…closing` pair, as the lazy regex
    `opening(.*?)closing` (DOTALL) finds it: the first opening tag that has a closing tag
    somewhere after it, up to the first such closing tag."""
    start = text.find(opening)
    if start == -1:
        return None
    end = text.find(closing, start + len(opening))
    return None if end == -1 else text[start + len(opening) : end]


def read_authors(reply: str | None) -> int | None:
    """Med-V1 `utils.py` `parse_llm_output` (commit 9c6c22b, lines 32-48): the first
    `<score>…</score>` of the raw reply, case-sensitive, think block included; the body
    stripped and passed to `int()`. A score off the -2..2 scale has no label: INVALID."""
    if not reply:
        return None
    body = _first_block(reply, "<score>", "</score>")
    if body is None:
        return None
    try:
        # int() refuses strings of more than 4,300 digits before converting them (CPython's
        # guard), so a hostile body costs one linear check, as in the authors' code.
        return _on_scale(int(body.strip()))
    except ValueError:
        return None


# ------------------------------------------------------------------------------- strict

_STRICT_SCORES = {"-2": -2, "-1": -1, "0": 0, "1": 1, "2": 2}
_THINK_THEN_SCORE = re.compile(r"\s*<score>")


def read_strict(reply: str | None) -> int | None:
    """Med-V1's RL format check (`training/grpo/verl/workers/reward_function/
    compute_score.py`, `is_legitimate_format`, lines 3-17): exactly one of each tag, and the
    whole reply `<think>…</think>` then `<score>…</score>` (one final newline tolerated);
    the score body exactly one of -2, -1, 0, 1, 2."""
    text = reply or ""
    if any(text.count(tag) != 1 for tag in ("<think>", "</think>", "<score>", "</score>")):
        return None
    if not text.startswith("<think>"):
        return None
    think_end = text.find("</think>") + len("</think>")
    gap = _THINK_THEN_SCORE.match(text, think_end)
    score_end = text.find("</score>")
    if gap is None or score_end < gap.end() or text[score_end + len("</score>") :] not in ("", "\n"):
        return None
    return _STRICT_SCORES.get(text[gap.end() : score_end].strip())


# ------------------------------------------------------------------------------- medhal

_SCORE_OPEN = re.compile(r"<\s*score\s*>", re.IGNORECASE)
_SCORE_CLOSE = re.compile(r"<\s*/\s*score\s*>", re.IGNORECASE)
_NUMBER = re.compile(r"[\s*_`'\"(\[]*([+\-−]?\d+)(?:\.0+)?(?![\d_]|\.\d)")
_AMBIGUOUS = re.compile(r"\s*(?:or|/|to|and|,|-(?=\s*\d))\s*[+\-−]?\d", re.IGNORECASE)
_TRAILING_NUMBER = re.compile(r"\s*[+\-−]?\d+(?:\.0+)?\s*")
_SCORE_LABEL = label_pattern(("final score", "score", "final answer", "answer", "rating", "verdict"))
_SCORES_READ = 50
"""Stated scores read, from the last back: a runaway generation of thousands of them must
not cost thousands of readings (the final answer is near the end)."""
_SCORE_IS = re.compile(
    r"(?<![\w-])(final\s+)?(?:score|rating)\s+(?:is|would\s+be)\s*:?\s*(?=[+\-−]?\d)", re.IGNORECASE
)
_BARE_NUMBER = re.compile(r"\s*\W{0,3}[+\-−]?\d{1,3}(?:\.0+)?\W{0,3}\s*")
"""A reply that is only a number ("2", "**-1**")."""
_ANY_LABELLED_NUMBER = re.compile(r"[^\W\d_]\w*(?: \w+)?[ \t]*[:：]\s*(\W{0,3}[+\-−]?\d+(?:\.0+)?\W{0,3})")
"""A last line `<label in any language>: <number>` ("Puntuación: 1")."""


def _score_of(text: str) -> int | None:
    """A score written as a number, with decoration or an explanation after it
    ("2 (Strong Agreement)", "**-1**", "+2", "0002", "1.0", "Score: 1"); None for "1.5",
    "3", "1 or 2", "1_0", "00002" (a generation running away is not a score)."""
    text = ascii_digits(text)
    match = _NUMBER.match(text)
    if match is None:
        inner = last_of(labelled(text, _SCORE_LABEL))
        if inner is not None:
            match = _NUMBER.match(inner[1])
            text = inner[1]
    if match is None or _AMBIGUOUS.match(text, match.end()):
        return None
    digits = match.group(1).replace("−", "-")
    magnitude = digits.lstrip("+-").lstrip("0") or "0"
    if len(digits) > 4 or len(magnitude) > 1:  # a runaway number or off the scale: no score
        return None
    return _on_scale(-int(magnitude) if digits.startswith("-") else int(magnitude))


def _score_blocks(text: str) -> list[str]:
    """Bodies of the score blocks, in order; a final unclosed `<score>` followed only by a
    number counts (cut off, or the closing tag forgotten)."""
    bodies = []
    position = 0
    while (opening := _SCORE_OPEN.search(text, position)) is not None:
        closing = _SCORE_CLOSE.search(text, opening.end())
        if closing is None:
            rest = text[opening.end() :]
            if _TRAILING_NUMBER.fullmatch(rest):
                bodies.append(rest)
            break
        bodies.append(text[opening.end() : closing.start()])
        position = closing.end()
    return bodies


def _stated_scores(text: str) -> list[tuple[bool, int | None]]:
    """(is it a final score, score) for every labelled score in order ("Score: 1", "The
    score is 2", "Final score: -1"); unreadable ones as None. A "final" score settles the
    reading; otherwise different scores leave nothing to choose between them."""
    found: list[tuple[int, bool, str]] = []
    for start, value in labelled(text, _SCORE_LABEL, last=_SCORES_READ):
        found.append((start, text[start : start + 5].lower() == "final", value))
    for match in deque(_SCORE_IS.finditer(text), maxlen=_SCORES_READ):
        found.append((match.start(), bool(match.group(1)), text[match.end() : match.end() + 40]))
    return [(final, _score_of(value)) for _, final, value in sorted(found)[-_SCORES_READ:]]


def read_medhal(reply: str | None) -> int | None:
    """What a careful human reads: the score blocks after the reasoning (agreeing blocks
    give their score, disagreeing ones none); without a score block, the last `\\boxed{n}`
    or a labelled `Score: n`. A score written only inside the reasoning does not count."""
    text = after_reasoning(reply)
    if text is None:
        return None
    bodies = _score_blocks(text)
    if bodies:
        scores = {_score_of(plain(body)) for body in bodies}
        return scores.pop() if len(scores) == 1 else None
    text = plain(text)
    boxed = last_boxed(text)
    if boxed is not None:
        return _score_of(boxed)
    stated = _stated_scores(text)
    if stated:
        finals = [score for final, score in stated if final]
        if finals:
            return finals[-1]
        scores = {score for _, score in stated}
        return scores.pop() if len(scores) == 1 else None
    generic = _ANY_LABELLED_NUMBER.fullmatch(last_line(text))
    if generic:
        return _score_of(generic.group(1))
    bare = _BARE_NUMBER.fullmatch(text)
    return _score_of(bare.group()) if bare else None


# ------------------------------------------------------------------------- conventions

READERS: dict[str, Reader] = {"medhal": read_medhal, "authors": read_authors, "strict": read_strict}
CONVENTIONS = tuple(READERS)


def read_all(reply: str | None) -> dict[str, int | None]:
    return {name: reader(reply) for name, reader in READERS.items()}
