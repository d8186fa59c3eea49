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
    RETRACTED,
    after_reasoning,
    ascii_digits,
    before_reasoning,
    boxed_all,
    label_pattern,
    labelled,
    last_boxed,
    last_line,
    last_of,
    plain,
    retraction,
    settled,
)

SCORE_TO_LABEL = {2: "SUPPORT", 1: "SUPPORT", 0: "NEI", -1: "CONTRADICT", -2: "CONTRADICT"}
LABELS = ("SUPPORT", "NEI", "CONTRADICT")

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
_FRACTIONS = "\u00bc-\u00be\u2150-\u215e"
"""Vulgar fractions (½, ¼, ⅓, ...): "1½" is one and a half, not 1."""
_NUMBER = re.compile(rf"[\s*_`'\"(\[]*([+\-−]?\d+)(?:\.0+)?(?![\d_{_FRACTIONS}]|[.,]\d)")
_AMBIGUOUS = re.compile(r"\s*(?:or|/|to|and|,|-(?=\s*\d))\s*[+\-−]?\d", re.IGNORECASE)
_TRAILING_NUMBER = re.compile(r"\s*[+\-−]?\d+(?:\.0+)?\s*")
_SCORE_LABEL = label_pattern(("final score", "score", "final answer", "answer", "rating", "verdict"))
_SCORES_READ = 50
"""Stated scores read, from the last back: a runaway generation of thousands of them must
not cost thousands of readings (the final answer is near the end)."""
_SCORE_IS = re.compile(
    r"(?<![\w-])(final\s+)?(?:score|rating)\s+(?:is|would\s+be)\s*:?\s*(?=[+\-−]?\d)", re.IGNORECASE
)
_HEADING = re.compile(
    r"^[ \t]*(?:final[ \t]+)?(?:score|rating|answer|verdict)[ \t]*$", re.IGNORECASE | re.MULTILINE
)
"""A line that is only a score label, as a Markdown heading or bold label leaves it once
its marks are removed ("## Score", "**Final Score**"): the number is on the next line."""
_NEXT_LINE = re.compile(r"\s{0,400}?\n[ \t]{0,200}(?=\S)")
"""From the end of a heading line to the start of the next non-blank line (400 characters
at most: a heading followed by pages of blank lines heads nothing)."""
_NUMBER_LINE = re.compile(r"[ \t]*\W{0,3}[+\-−]?\d+(?:\.\d+)?\W{0,3}(?:[ \t]*[(\[\-–—:][^\n]{0,80})?[ \t]*")
_SCALE_WORDS = re.compile(
    r"[\s*_`'\"(\[]*(?:(strong|partial)[ \t]+(agreement|contradiction)|"
    r"neutral(?:[ \t]*/[ \t]*unrelated)?|unrelated)(?![\w-])",
    re.IGNORECASE,
)
"""The five-point scale in its own words (the prompt names each point: "Strong Agreement",
"Partial Contradiction", "Neutral / Unrelated", ...)."""
_WORD_SCORES = {
    ("strong", "agreement"): 2,
    ("partial", "agreement"): 1,
    ("partial", "contradiction"): -1,
    ("strong", "contradiction"): -2,
}
_WORDS_AFTER_NUMBER = re.compile(r"[\s)\]*_`'\"]*[(\[\-–—:]?")
_NUMBER_AFTER_WORDS = re.compile(r"[\s*_`'\"]*[(\[]\s*([+\-−]?\d+)\s*[)\]]")
_BARE_NUMBER = re.compile(r"\s*\W{0,3}[+\-−]?\d{1,3}(?:\.0+)?\W{0,3}\s*")
"""A reply that is only a number ("2", "**-1**")."""
_ANY_LABELLED_NUMBER = re.compile(r"[^\W\d_]\w*(?: \w+)?[ \t]*[:：]\s*(\W{0,3}[+\-−]?\d+(?:\.0+)?\W{0,3})")
"""A last line `<label in any language>: <number>` ("Puntuación: 1")."""

Answer = tuple[int, int, "int | None"]
"""(start, end, score) of a score stated in the reply; the score None when unreadable."""


def _words_score(match: re.Match[str]) -> int:
    if match.group(1):
        return _WORD_SCORES[(match.group(1).lower(), match.group(2).lower())]
    return 0  # neutral, unrelated


def _scale_words(text: str) -> tuple[int | None, int] | None:
    """(score, length) of a score given in the scale's words at the start of `text`
    ("Strong Agreement", "**Partial Contradiction**"); a number in brackets after them must
    agree ("Strong Agreement (2)"). None when `text` does not open with them."""
    words = _SCALE_WORDS.match(text)
    if words is None:
        return None
    score = _words_score(words)
    number = _NUMBER_AFTER_WORDS.match(text, words.end())
    if number is not None and _on_scale(_integer(number.group(1))) != score:
        return None, words.end()  # the words and the number name different points
    return score, words.end()


INT_DIGITS_LIMIT = 4300
"""Digits read in one number: int()'s own limit (CPython's default), so a zero-padded score
reads as the authors' reading takes it; a longer run is a generation running away."""


def _integer(digits: str) -> int | None:
    """A signed integer written with leading zeros (`00002` is 2) up to `INT_DIGITS_LIMIT`
    digits; None when its magnitude has more than one digit (off the scale, whatever its
    length: never converted)."""
    digits = digits.replace("−", "-")
    unsigned = digits.lstrip("+-")
    magnitude = unsigned.lstrip("0") or "0"
    if len(magnitude) > 1 or len(unsigned) > INT_DIGITS_LIMIT:
        return None
    return -int(magnitude) if digits.startswith("-") else int(magnitude)


def _score_span(text: str) -> tuple[int | None, int] | None:
    """(score, length of what was read) of a score written at the start of `text`: a
    number with decoration or an explanation after it ("2 (Strong Agreement)", "**-1**",
    "+2", "00002", "1.0"), or the scale's words ("Partial Agreement"). The score is None for
    "1.5", "1½", "3", "1 or 2", "1_0", and for a number whose scale words name another
    point ("1 (Strong Agreement)"). None when `text` opens with neither."""
    text = ascii_digits(text)
    match = _NUMBER.match(text)
    if match is None:
        return _scale_words(text)
    if _AMBIGUOUS.match(text, match.end()):
        return None, match.end()
    score = _on_scale(_integer(match.group(1)))
    after = _WORDS_AFTER_NUMBER.match(text, match.end())
    words = _SCALE_WORDS.match(text, after.end() if after else match.end())
    if words is not None and _words_score(words) != score:
        return None, match.end()
    return score, match.end()


def _score_of(text: str) -> int | None:
    """The score of a short answer (a block's body, a box, a labelled value): as
    `_score_span` reads it, or the value of a label inside it ("<score>Score: 1</score>")."""
    span = _score_span(text)
    if span is None:
        inner = last_of(labelled(ascii_digits(text), _SCORE_LABEL))
        span = _score_span(inner[1]) if inner is not None else None
    return None if span is None else span[0]


def _score_blocks(text: str) -> list[tuple[int, int, str]]:
    """(start, end, body) of the score blocks, in order; a final unclosed `<score>` followed
    only by a number counts (cut off, or the closing tag forgotten)."""
    blocks = []
    position = 0
    while (opening := _SCORE_OPEN.search(text, position)) is not None:
        closing = _SCORE_CLOSE.search(text, opening.end())
        if closing is None:
            rest = text[opening.end() :]
            if _TRAILING_NUMBER.fullmatch(rest):
                blocks.append((opening.start(), len(text), rest))
            break
        blocks.append((opening.start(), closing.end(), text[opening.end() : closing.start()]))
        position = closing.end()
    return blocks


def _stated(text: str, start: int, value: str) -> Answer:
    """A stated score whose value `value` begins at or after `start` (on the label's line,
    or the next): the span runs from `start` (so that the gap before it holds the label)
    to the end of the number or words read, so a correction marker after it on the same
    line falls in the next gap."""
    at = text.find(value[:20], start, start + 400)
    span = _score_span(value)
    length = span[1] if span is not None else 1
    return start, (start if at == -1 else at) + length, _score_of(value)


def _stated_scores(text: str) -> list[Answer]:
    """Every stated score in order ("Score: 1", "The score is 2", "Final score: -1", a
    "## Score" heading with the number on the next line); unreadable ones as None."""
    found: list[Answer] = []
    for start, value in labelled(text, _SCORE_LABEL, last=_SCORES_READ):
        label = _SCORE_LABEL.match(text, start)
        found.append(_stated(text, label.end() if label else start, value))
    for match in deque(_SCORE_IS.finditer(text), maxlen=_SCORES_READ):
        found.append(_stated(text, match.end(), text[match.end() : match.end() + 40]))
    for match in deque(_HEADING.finditer(text), maxlen=_SCORES_READ):
        below = _NEXT_LINE.match(text, match.end())
        line = text[below.end() : below.end() + 200].split("\n", 1)[0] if below else ""
        if line and _NUMBER_LINE.fullmatch(line):
            found.append(_stated(text, below.end(), line))
    return sorted(found)[-_SCORES_READ:]


def _read_part(text: str) -> tuple[bool, int | None]:
    """(whether the text states a score at all, the score it settles on) for one part of a
    reply outside its reasoning. In order: score blocks; the last `\\boxed{}` (all boxes);
    stated scores; a last line `<label>: n`; a reply that is only a number or the scale's
    words. Several scores that differ settle on one only through a marked correction or
    final score (`medhal.kit.replies.settled`); a last sentence that takes the score back
    ("No, not 2.") leaves none."""
    blocks = _score_blocks(text)
    if blocks:
        score = settled(text, [(start, end, _score_of(plain(body))) for start, end, body in blocks])
        return True, _unless_retracted(plain(text), score)
    text = plain(text)
    if last_boxed(text) is not None:
        boxes = [(start, end, _score_of(content)) for start, end, content in boxed_all(text)]
        return True, _unless_retracted(text, settled(text, boxes))
    stated = _stated_scores(text)
    if stated:
        return True, _unless_retracted(text, settled(text, stated))
    generic = _ANY_LABELLED_NUMBER.fullmatch(last_line(text))
    if generic:
        return True, _score_of(generic.group(1))
    bare = _BARE_NUMBER.fullmatch(text)
    if bare:
        return True, _score_of(bare.group())
    words = _scale_words(text.strip())
    if words is not None and not text.strip()[words[1] :].strip(" \t.!*_`'\""):
        return True, words[0]
    return False, None


def _unless_retracted(text: str, score: int | None) -> int | None:
    taken_back = retraction(text)
    if score is None or taken_back is None:
        return score
    return None if taken_back == RETRACTED or _score_of(taken_back) == score else score


def read_medhal(reply: str | None) -> int | None:
    """What a careful human reads (README, "How replies are read"): the score stated after
    the reasoning; when nothing after it states one, the score stated before the reasoning
    began. A score written only inside the reasoning does not count."""
    after = after_reasoning(reply)
    if after is not None:
        found, score = _read_part(after)
        if found:
            return score
    before = before_reasoning(reply)
    return _read_part(before)[1] if before is not None else None


# ------------------------------------------------------------------------- conventions

READERS: dict[str, Reader] = {"medhal": read_medhal, "authors": read_authors, "strict": read_strict}
CONVENTIONS = tuple(READERS)


def read_all(reply: str | None) -> dict[str, int | None]:
    return {name: reader(reply) for name, reader in READERS.items()}
