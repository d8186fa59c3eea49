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

from medhal.kit.commitment import MENTIONS_READ, Mention, committed
from medhal.kit.positions import Intervals, Places, empty_spans, spread
from medhal.kit.replies import after_reasoning, before_reasoning, boxed_all
from medhal.kit.tables import answer_cells
from medhal.kit.vocabulary import fold, phrases, terms, without_footnotes

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
#
# The `medhal` reading finds every score the reply names (`mentions`): a number where a
# reply puts its answer (a `<score>` block, any tag named for a score, a box, a label in any
# language, a heading, a JSON value, a table's answer cell, a line of its own, after "the
# score is", or as an alternative: "or 1", "could be 1", "not 2", "Actually, 1"), and the
# scale's own words there ("Strong Agreement"; "neutral" in any language). A gloss after a
# number ("2 (Strong Agreement)", "2 (supports)", "-1 – contradice") must name the same
# point or side. A place that states a score it does not give (`<score>two</score>`,
# `Score: N/A`, `3`) is an unreadable score. `medhal.kit.commitment.committed` decides
# which the reply stands by: when two readings are possible, there is none.

INT_DIGITS_LIMIT = 4300
"""Digits read in one number: int()'s own limit (CPython's default), so a zero-padded score
reads as the authors' reading takes it; a longer run is a generation running away."""

_SCALE_WORDS = {
    "strong agreement": 2,
    "partial agreement": 1,
    "neutral / unrelated": 0,
    "neutral/unrelated": 0,
    "neutral": 0,
    "unrelated": 0,
    "partial contradiction": -1,
    "strong contradiction": -2,
}
_NEUTRAL_WORDS = tuple(w for w in terms("neutral") if " " not in w or w.startswith("not"))
_LABEL_WORDS = {
    **dict.fromkeys(terms("support"), "SUPPORT"),
    **dict.fromkeys(terms("contradict"), "CONTRADICT"),
    **dict.fromkeys(_NEUTRAL_WORDS, "NEI"),
}
_PLACES = Places(
    terms("score", "answer", "verdict"),
    leads=(
        *("score is", "score would be", "rating is", "rating would be", "i would give", "i'd give"),
        *("i give", "give it", "give it a", "i rate it", "rate it", "a score of", "score of", "rated"),
    ),
    followers=(*_SCALE_WORDS, *_LABEL_WORDS, "out of"),
    token=r"[+-]?\d+",
)
"""Where a MedFact-Bench reply puts its score (`medhal.kit.positions`)."""
_NUMBER = re.compile(
    r"[-+0-9](?<![^\W_][-+0-9])(?<!\.[-+0-9])(?<![^\W_]_[-+0-9])(?:(?<=[-+])[0-9]+|(?<=[0-9])[0-9]*)(?:[.,][0-9]+)?"
    r"[\u00bc-\u00be\u2150-\u215e]?(?![^\W_]|_[^\W_]|[.,][0-9])"
)
"""A signed number, with its decimals or a vulgar fraction (read, then refused: 1.5, 1½);
underscores around it are emphasis (`__-2__`), not one glued to a word or number (`1_0`).
It opens with the sign or a digit, so the regex engine skips to them at once."""
_INTEGER = re.compile(r"([+-]?\d+)(?:[.,](\d+))?")
_WORDS = re.compile(phrases((*_SCALE_WORDS, *_NEUTRAL_WORDS)))
"""The scale's own words, and "neutral" in every language (NEI has one score, 0)."""
_GLOSS = re.compile(
    r"[ \t*_`'\"]*(?:(?:\(|\[|[-–—:])[ \t*_`'\"]*)?("
    + "|".join(
        sorted(
            (re.escape(w).replace(r"\ ", r"\s+") for w in (*_SCALE_WORDS, *_LABEL_WORDS)),
            key=len,
            reverse=True,
        )
    )
    + r")(?!\w)"
)
"""A gloss right after a number: the scale's words or a label word, in a bracket or after a
dash or colon ("2 (Strong Agreement)", "-1 – contradice")."""
_NUMBER_GLOSS = re.compile(r"[ \t*_`'\"]*[(\[][ \t]*([+-]?\d+(?:\.\d+)?)[ \t]*[)\]]")
"""A number in brackets after the scale's words ("Strong Agreement (2)")."""
_OPEN_SCORE = re.compile(r"<\s*score\s*>")
_CLOSE_SCORE = re.compile(r"<\s*/\s*score\s*>?")
_TRAILING_NUMBER = re.compile(r"\s*[+-]?\d+(?:\.0+)?\s*")
_NAMED_TAG = re.compile(
    r"<\s*(rating|final_score|answer|verdict|result)\s*>(.{0,400}?)<\s*/\s*\1\s*>", re.DOTALL
)
_LABEL = re.compile(
    "(?:" + phrases(terms("score", "answer", "verdict")) + r")[\"'#]?[ \t]*(?:[:=]|->|[ \t][-–—][ \t])[ \t]*"
)
"""A score label and its separator, in any language ("Score:", "Puntuación:", "分数:")."""
_NEXT_LINE = re.compile(r"[ \t]*\n(?:[ \t>]*\n){0,3}[ \t>]*(?=\S)")
_HEADING = re.compile(
    r"^[ \t#*_>]*(?:final[ \t]+)?(?:score|rating|answer|verdict)[ \t*_:]*$\n"
    r"(?:[ \t>]*\n){0,3}[ \t>]*([^\n]{1,200})",
    re.MULTILINE,
)
"""A line that is only a score label ("## Score", "**Final Score**"), and the first non-blank
line under it."""
_LABELS_READ = 50


def _integer(digits: str) -> int | None:
    """A signed integer written with leading zeros (`00002` is 2) up to `INT_DIGITS_LIMIT`
    digits; None when its magnitude has more than one digit (off the scale, whatever its
    length: never converted)."""
    unsigned = digits.lstrip("+-")
    magnitude = unsigned.lstrip("0") or "0"
    if len(magnitude) > 1 or len(unsigned) > INT_DIGITS_LIMIT:
        return None
    return -int(magnitude) if digits.startswith("-") else int(magnitude)


def _value(token: str) -> int | None:
    """The score a number names: an integer on the scale (`2.0` and `-1.00` are integers);
    None off the scale or between two points (`1.5`, `1,5`, `1½`): a value between two of
    the five points is none of them."""
    match = _INTEGER.fullmatch(token)
    if match is None or (match.group(2) and match.group(2).strip("0")):
        return None
    return _on_scale(_integer(match.group(1)))


def _numbers(text: str, folded: str) -> list[Mention[int | None]]:
    """Every number where a reply puts its score, and every number listed with one ("-2,
    -1, 0, 1 or 2"), each with its gloss ("2 (Strong Agreement)": a second mention, the same
    point; "2 (contradicts)": an unreadable one)."""
    tokens = list(_NUMBER.finditer(folded))
    spans = [m.span() for m in tokens]
    held: list[bool] = []
    count = 0
    for start, end in spans:  # past MENTIONS_READ scores the reply is a runaway: no reading
        held.append(count <= MENTIONS_READ and _PLACES.holds(text, folded, start, end))
        count += held[-1]
    held = spread(folded, spans, held)
    found: list[Mention[int | None]] = []
    for m in (m for m, h in zip(tokens, held, strict=True) if h):
        score = _value(m.group())
        found.append(Mention(m.start(), m.end(), score))
        gloss = _GLOSS.match(folded, m.end())
        if gloss is not None:
            found.append(Mention(gloss.start(1), gloss.end(1), _glossed(score, gloss.group(1))))
    return found


def _glossed(score: int | None, word: str) -> int | None:
    """The score a gloss names beside `score`: its own point (scale words), or `score` when
    a label word names `score`'s side; None when they disagree."""
    words = " ".join(word.split())
    if words in _SCALE_WORDS:
        return _SCALE_WORDS[words]
    return score if _LABEL_WORDS.get(words) == label_of(score) else None


def _scale_words(folded: str, taken: list[Mention[int | None]]) -> list[Mention[int | None]]:
    """The scale's words where a score goes (not a gloss already read), each with a number
    glossing it ("Strong Agreement (2)")."""
    glossed = {m.start for m in taken}
    found: list[Mention[int | None]] = []
    for m in _WORDS.finditer(folded):
        if m.start() in glossed or not _PLACES.holds_word(folded, m.start(), m.end()):
            continue
        found.append(Mention(m.start(), m.end(), _SCALE_WORDS.get(" ".join(m.group().split()), 0)))
        number = _NUMBER_GLOSS.match(folded, m.end())
        if number is not None:
            found.append(Mention(number.start(1), number.end(1), _value(number.group(1))))
    return found


def _stated(folded: str) -> list[tuple[int, int]]:
    """The places that state a score (score blocks, named tags, boxes, labels, headings), as
    (start, end) of what they hold: each must hold a readable score, or it is unreadable."""
    places = _score_blocks(folded)[0]
    places += [m.span(2) for m in _NAMED_TAG.finditer(folded)]
    places += [(start, end) for start, end, _ in boxed_all(folded)]
    places += [_label_value(folded, m.end()) for m in deque(_LABEL.finditer(folded), maxlen=_LABELS_READ)]
    places += [m.span(1) for m in _HEADING.finditer(folded)]
    return places


def _label_value(folded: str, at: int) -> tuple[int, int]:
    """Where a label's value stands: the rest of its line, or the next non-blank line when
    the label ends its line ("Score:\n2")."""
    end = folded.find("\n", at)
    end = len(folded) if end == -1 else end
    if folded[at:end].strip() or end == len(folded):
        return at, end
    below = _NEXT_LINE.match(folded, end)
    if below is None:
        return at, end
    stop = folded.find("\n", below.end())
    return below.end(), len(folded) if stop == -1 else stop


def _score_blocks(folded: str) -> tuple[list[tuple[int, int]], re.Match[str] | None]:
    """(the bodies of the `<score>…</score>` blocks, the opening tag left open after them):
    each opening paired with the first closing tag after it, in one pass over both (a lazy
    `<score>(.*?)</score>` search is quadratic on a reply of thousands of open tags)."""
    closings = [(m.start(), m.end()) for m in _CLOSE_SCORE.finditer(folded)]
    bodies: list[tuple[int, int]] = []
    n = 0
    position = 0
    for opening in _OPEN_SCORE.finditer(folded):
        if opening.start() < position:
            continue
        while n < len(closings) and closings[n][0] < opening.end():
            n += 1
        if n == len(closings):
            return bodies, opening
        bodies.append((opening.end(), closings[n][0]))
        position = closings[n][1]
    return bodies, None


def _cut_off(folded: str) -> Mention[int | None] | None:
    """A `<score>` left open at the end with more than a number after it: cut off while
    stating the score (`<score>2 because the trial`), so what it states is unreadable."""
    last_open = _score_blocks(folded)[1]
    if last_open is None:
        return None
    if _TRAILING_NUMBER.fullmatch(folded, last_open.end()):
        return None
    return Mention(last_open.start(), last_open.end(), None)


def mentions(text: str) -> list[Mention[int | None]]:
    """Every score the reply names, where it names it (see the section comment), except
    those in a table's cells that are not its answer; an unreadable score for each place
    that states one and gives none."""
    folded = fold(text)
    found = _numbers(text, folded)
    found += _scale_words(folded, found)
    answers, others = answer_cells(folded, _PLACES.is_label)
    listed = Intervals(others)
    found = [m for m in found if m.start not in listed]
    if len(found) > MENTIONS_READ:
        return found  # a runaway generation: no reading
    for start, end in empty_spans(_stated(folded) + answers, (m.start for m in found)):
        found.append(Mention(start, max(start + 1, end), None))
    cut_off = _cut_off(folded)
    return found + ([cut_off] if cut_off else [])


def _read_part(text: str) -> tuple[bool, int | None]:
    """(whether the text states a score at all, the score it commits to) for one part of a
    reply outside its reasoning."""
    text = without_footnotes(text)
    found = mentions(text)
    return bool(found), committed(text, found) if found else None


def read_medhal(reply: str | None) -> int | None:
    """What a careful human reads (README, "How replies are read"): the score stated after
    the reasoning; when nothing after it states one, the score stated before the reasoning
    began. A score written only inside the reasoning does not count. Among the scores a
    part states, the one it commits to (`medhal.kit.commitment.committed`: a denied,
    conditional, hedged or retracted score is none; a marked correction replaces what came
    before; two scores, none)."""
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
