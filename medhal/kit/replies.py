"""Finding the answer inside a model's reply: the pieces every benchmark's reader shares.

Models rarely answer with the bare format a prompt asks for. Reasoning models wrap
their thoughts in `<think>` blocks and box the result; instruct models add markdown,
labels ("Final answer:") and explanations; some echo the prompt first. Each benchmark
reads its own answer format (`environments/<name>/<pkg>/replies.py`), but they all
locate the answer the same way, with the functions here, so a reasoning block or a
`\\boxed{}` means the same thing in every benchmark.

Every function is linear in the length of the reply: they scan once, or use regular
expressions without nested quantifiers, so a hostile 1 MB reply cannot stall the event
loop that scores it.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from typing import TypeVar

T = TypeVar("T")


_REASONING_TAG = re.compile(r"<(/?)\s*(?:think|thinking|reasoning)\s*>", re.IGNORECASE)
"""Opening and closing tags of reasoning blocks (think, thinking, reasoning), any letter case."""
_FENCE = re.compile(r"```[\w+-]*")
BULLETS = "•◦▪▫‣∙→⇒➜➔►▸▶"
"""Marks that open a list line ("• Answer: 1", "→ Final score: 2"): decoration, like `*`
and `#`. Dashes are not among them: a line may open with a negative number."""
_DECORATION = re.compile(
    rf"\*{{1,3}}|_{{2,3}}|`+|^[ \t]*#{{1,6}}[ \t]*|^[ \t]*>[ \t]?|^[ \t]*[{BULLETS}]+[ \t]*", re.MULTILINE
)
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
_LATEX_WRAPPER = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|mbox|operatorname)\s*\{")


def last_of(items: Iterable[T]) -> T | None:
    """The last item of an iterable (None when empty), in constant memory."""
    tail = deque(items, maxlen=1)
    return tail[0] if tail else None


def after_reasoning(reply: str | None) -> str | None:
    """The reply without its reasoning: the text after the last closing reasoning tag.

    A closing tag without an opening one still ends the reasoning (some chat templates
    open the block inside the prompt). An opening tag that is never closed means the
    model was cut off, or stopped, while still thinking: it never answered, so the
    result is None. A reply without reasoning tags is returned unchanged.
    """
    if reply is None:
        return None
    answer_start = 0
    left_open = False
    for match in _REASONING_TAG.finditer(reply):
        if match.group(1):
            answer_start, left_open = match.end(), False
        else:
            left_open = True
    return None if left_open else reply[answer_start:]


def before_reasoning(reply: str | None) -> str | None:
    """The text before the reply's first reasoning block: an answer given before the model
    started to reason ("<score>2</score><think>…"). None when the reply has no reasoning
    tag, or when its first tag is a closing one (then the text before it is reasoning that
    the chat template opened)."""
    if reply is None:
        return None
    first = _REASONING_TAG.search(reply)
    if first is None or first.group(1):
        return None
    return reply[: first.start()]


def after_leading_reasoning(reply: str | None) -> str | None:
    """The reply after one well-formed reasoning block at its very start (the strict
    reading allows a model's native thinking, and nothing else, before the answer).
    None when that block is never closed; the reply unchanged when it has none."""
    if reply is None:
        return None
    opening = _REASONING_TAG.match(reply, len(reply) - len(reply.lstrip()))
    if opening is None or opening.group(1):
        return reply
    closing = next((m for m in _REASONING_TAG.finditer(reply, opening.end()) if m.group(1)), None)
    return None if closing is None else reply[closing.end() :]


def without_fences(text: str) -> str:
    """Code-fence markers removed, their content kept (```json … ``` -> …)."""
    return _FENCE.sub("", text)


def plain(text: str) -> str:
    """Markdown decoration removed: emphasis, inline code, heading and quote marks, and
    the bullets that open a list line."""
    return _DECORATION.sub("", without_fences(text))


def _closing_brace(text: str, start: int) -> int | None:
    """Index of the `}` closing the group that starts at `start` (just after a `{`)."""
    depth = 1
    for index in range(start, len(text)):
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index
    return None


def unwrap_latex(text: str) -> str:
    """`\\text{…}`, `\\mathrm{…}`, `$…$` and `\\(…\\)` wrappers removed, content kept."""
    text = text.strip()
    for _ in range(8):  # wrappers nest a few levels at most; bounded so this stays linear
        before = text
        match = _LATEX_WRAPPER.match(text)
        if match is not None:
            end = _closing_brace(text, match.end())
            if end is not None and not text[end + 1 :].strip():
                text = text[match.end() : end].strip()
        for opening, closing in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
            if (
                len(text) >= len(opening) + len(closing)
                and text.startswith(opening)
                and text.endswith(closing)
            ):
                text = text[len(opening) : len(text) - len(closing)].strip()
                break
        if text == before:
            break
    return text


BOXES_READ = 50
"""Boxes read, from the last one back (a runaway generation of thousands of boxes costs
one scan, not thousands of readings)."""


def boxed_all(text: str) -> list[tuple[int, int, str]]:
    """(start, end, content) of every closed `\\boxed{…}` (or `\\fbox{…}`) in order, the
    content with LaTeX wrappers removed; a box holding another box gives way to it (the
    inner one is the answer, as `last_boxed` reads it). At most the last `BOXES_READ`.
    Braces are matched in one pass, so many unclosed boxes cost linear time."""
    starts = [(m.start(), m.end()) for m in _BOXED.finditer(text)]
    if not starts:
        return []
    closing: dict[int, int] = {}
    stack: list[int] = []
    for match in re.finditer(r"[{}]", text):
        if match.group() == "{":
            stack.append(match.start())
        elif stack:
            closing[stack.pop()] = match.start()
    found: list[tuple[int, int, str]] = []
    for n in range(len(starts) - 1, -1, -1):  # from the last box back: only those kept are unwrapped
        if len(found) == BOXES_READ:
            break
        start, inner = starts[n]
        end = closing.get(inner - 1)  # the box's `{` ends its match
        if end is None or (n + 1 < len(starts) and starts[n + 1][0] < end):
            continue  # unclosed, or holding the next box
        found.append((start, end + 1, unwrap_latex(text[inner:end])))
    return found[::-1]


def settled(text: str, answers: Sequence[tuple[int, int, T]]) -> T | None:
    """The answer a reply settles on, given every answer it states in order as (start, end,
    value), where a value may be None (stated but unreadable). Answers that all agree give
    their value. Otherwise the last answer that the text before it marks as a correction or
    a final answer (`marks_correction`, looked for since the previous answer, the
    answer's own label included) counts, when every later answer agrees with it. Otherwise
    the reply names different answers without settling on one: None."""
    if not answers:
        return None
    values = {value for _, _, value in answers}
    if len(values) == 1:
        return answers[0][2]
    for n in range(len(answers) - 1, 0, -1):
        if marks_correction(text[answers[n - 1][1] : answers[n][0]]):
            value = answers[n][2]
            return value if all(later == value for _, _, later in answers[n + 1 :]) else None
    return None


def last_boxed(text: str) -> str | None:
    """The content of the last `\\boxed{…}` (or `\\fbox{…}`), LaTeX wrappers removed.
    None when there is none, or when the last one is never closed (cut off)."""
    last = last_of(_BOXED.finditer(text))
    if last is None:
        return None
    end = _closing_brace(text, last.end())
    return None if end is None else unwrap_latex(text[last.end() : end])


ANSWER_LABELS = (
    "final answer",
    "answer",
    "final verdict",
    "verdict",
    "judgement",
    "judgment",
    "output",
    "classification",
    "label",
    "prediction",
    "result",
)
"""Words that introduce an explicit answer, as models write them."""

TRANSLATED_ANSWER_LABELS = (
    # Spanish, Portuguese, French, Italian, German, Dutch
    "respuesta",
    "respuesta final",
    "juicio",
    "veredicto",
    "resposta",
    "resposta final",
    "julgamento",
    "veredito",
    "réponse",
    "réponse finale",
    "jugement",
    "risposta",
    "risposta finale",
    "giudizio",
    "verdetto",
    "antwort",
    "endgültige antwort",
    "urteil",
    "antwoord",
    "oordeel",
    # Russian, Polish, Turkish
    "ответ",
    "окончательный ответ",
    "вердикт",
    "odpowiedź",
    "werdykt",
    "cevap",
    "yanıt",
    "karar",
    # Chinese, Japanese, Korean
    "答案",
    "最终答案",
    "回答",
    "答复",
    "判断",
    "判断结果",
    "最终判断",
    "你的判断",
    "判定",
    "結論",
    "结论",
    "答え",
    "最終回答",
    "답",
    "답변",
    "정답",
    "판단",
    "판정",
)
"""The answer labels of `ANSWER_LABELS` as models write them in other languages (a model
asked in English often answers in the language of its system prompt or its fine-tuning)."""


def label_pattern(labels: Iterable[str]) -> re.Pattern[str]:
    """A pattern finding `<label>:` (also `=`, or a dash), any case, at a word boundary.
    Longer labels are tried first, so "final answer" wins over "answer". "The answer is"
    is deliberately not a label: prompt echoes and explanations say it all the time."""
    words = sorted({w.strip().lower() for w in labels if w.strip()}, key=len, reverse=True)
    alternatives = "|".join(re.escape(w).replace(r"\ ", r"[ \t]+") for w in words)
    # The lookahead on the labels' first letters lets the engine skip every other position
    # at once (without it, each position of a long reply tries every label in turn).
    first = re.escape("".join(sorted({w[0] for w in words})))
    return re.compile(
        rf"(?=[{first}])(?<![\w-])(?:{alternatives})[\"']?[ \t]*[:：=\-–—][ \t]*",
        re.IGNORECASE,
    )


def labelled(
    text: str, pattern: re.Pattern[str], limit: int = 200, last: int | None = None
) -> Iterator[tuple[int, str]]:
    """(position, value) for every label matched by `pattern` (see `label_pattern`), in
    order. The value is the rest of the label's line, or the next non-blank line when the
    label starts and ends its line ("Answer:\n1"; a sentence ending "... the correct
    answer:" introduces an explanation, not an answer), cut at `limit` characters so that
    reading every label stays linear in the length of the reply."""
    matches: Iterable[re.Match[str]] = pattern.finditer(text)
    if last is not None:
        matches = deque(matches, maxlen=last)  # only the last labels are read: a runaway
        # generation of thousands of labels costs one regex scan, not thousands of readings
    for match in matches:
        window = text[match.end() : match.end() + limit]
        end = window.find("\n")
        value = (window if end == -1 else window[:end]).strip()
        # Does the label head its line (only decoration before it)? Looked for within
        # `limit` characters back: a line start further back means it does not (and no
        # label may cost a copy of everything before it).
        back = max(0, match.start() - limit)
        line_start = text.rfind("\n", back, match.start()) + 1
        heads_line = (line_start > 0 or back == 0) and not text[line_start : match.start()].strip(
            " \t*#>-_`" + BULLETS
        )
        if not value and end != -1 and heads_line:
            rest = window[end:].lstrip()
            stop = rest.find("\n")
            value = (rest if stop == -1 else rest[:stop]).strip()
        if value:
            yield match.start(), value


_CORRECTION = re.compile(
    r"\b(?:wait|correction|corrected|correcting|final(?:ly)?|revised|updated|on\s+(?:second\s+thoughts?|"
    r"reflection|closer\s+(?:look|reading))|scratch\s+that|let\s+me\s+(?:correct|revise|reconsider)|"
    r"i\s+(?:made\s+a\s+mistake|was\s+wrong|meant)|corrección|correção|korrektur|correzione|"
    r"but|however|instead|rather|so|therefore|thus|hence|overall|in\s+(?:conclusion|summary))\b|"
    r"(?:^|[.!?;:,])\s*actually\b",
    re.IGNORECASE | re.MULTILINE,
)


def marks_correction(between: str) -> bool:
    """Whether the text between two answers marks the second as the model's correction or
    its final word ("Wait, actually", "Correction:", "Final score:", "On second thought",
    "but", "so", "therefore": what follows them replaces or concludes what came before).
    "Actually" counts only opening a sentence or clause: inside one it is emphasis ("the
    article actually reports ...")."""
    return _CORRECTION.search(between) is not None


_RETRACTION = re.compile(
    r"[\W_]*(?P<lead>(?:(?:no|nope|wait|actually|hmm+|oh|sorry|oops)\b[\W_]*)+)?"
    r"(?:(?P<bare>(?:it|that|this)\s*(?:isn['’]?t|is\s+not|['’]s\s+not|wasn['’]?t|was\s+not)(?:\s+(?:it|so))?|"
    r"not\s+really|scratch\s+that|just\s+kidding|(?:i\s+)?take\s+(?:that|it)\s+back|"
    r"(?:ignore|disregard)\s+(?:that|this)|never\s*mind)"
    r"|(?P<wrong>(?:that|this)(?:['’]s|\s+is|\s+was)\s+(?:wrong|incorrect|not\s+right|a\s+mistake))"
    r"|not\s+(?P<value>[+\-−]?\d+(?:[.,]\d+)?|(?<=[\W_])\w+(?:[ \t]+\w+){0,4}))[\W_]*",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.!?\n]+(?=[^\S\n]*\S)")
RETRACTED = ""
"""`retraction`'s answer when the last sentence takes back whatever came before it."""


def retraction(text: str) -> str | None:
    """What the reply's last sentence takes back, when it is a bare retraction of what came
    before: RETRACTED ("No, it isn't.", "Scratch that.", "Just kidding.", "No, that's
    wrong."), or the value it denies ("Not 1." and "No, not 2." give "1" and "2", "No, not
    Desmin." gives "Desmin"; the reader compares it with the answer it read: "(not -2)"
    after a 0 clarifies, it does not retract). None when the last sentence is anything
    else. "That's wrong" and "not" with words retract only after "No"/"Wait"/...: alone
    they may be a verdict on the judged answer ("Not correct."). Reads only the last 200
    characters."""
    tail = text[-200:].strip()
    boundary = last_of(_SENTENCE_END.finditer(tail))
    sentence = tail[boundary.end() :].strip() if boundary is not None else tail
    match = _RETRACTION.fullmatch(sentence)
    if match is None or (match.group("wrong") and not match.group("lead")):
        return None
    if match.group("value") and not match.group("lead") and not match.group("value")[-1].isdigit():
        return None  # "Not correct." alone is a verdict; "Not 1." or "No, not Desmin." takes one back
    value = match.group("value")
    if value is None or value.strip().lower() in ("it", "that", "this", "so"):
        return RETRACTED
    return value.strip()


def last_labelled(text: str, pattern: re.Pattern[str], limit: int = 200) -> str | None:
    """The value of the last label matched by `pattern`; None when there is none."""
    found = last_of(labelled(text, pattern, limit, last=1))
    return None if found is None else found[1]


@cache
def _digit_table() -> dict[int, str]:
    """Every non-ASCII decimal digit -> its ASCII digit (built once, on first need)."""
    import sys
    import unicodedata

    return {c: str(unicodedata.decimal(chr(c))) for c in range(128, sys.maxunicode + 1) if chr(c).isdecimal()}


def ascii_digits(text: str) -> str:
    """Decimal digits of any script (full-width １, Arabic-Indic ٠, ...) as ASCII 0-9, as a
    reader of the number sees them."""
    return text if text.isascii() else text.translate(_digit_table())


def last_line(text: str) -> str:
    """The last non-blank line."""
    stripped = text.rstrip()
    return stripped[stripped.rfind("\n") + 1 :].strip()


def answer_text(reply: str | None) -> str | None:
    """The part of a reply that can hold the answer, as a careful reader sees it: after the
    reasoning, without code fences or markdown decoration. None when the model never left
    its reasoning block."""
    text = after_reasoning(reply)
    return None if text is None else plain(text)
