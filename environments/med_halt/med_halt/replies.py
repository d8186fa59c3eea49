"""Reading the answer dict out of a Med-HALT reply, under three named conventions.

Med-HALT prompts ask for a dict (`{'cop': ..., 'cop_index': ...}` and the like). Each
reader is a pure function `(reply, answer_keys) -> Reading`: the fields it read and the
set's answer value, or no answer (a format error). README, "How replies are read".

- `medhal` (default): what a careful human reads. Real replies put the dict in a code
  fence or after a `<think>` block, use Python quoting with unescaped apostrophes
  ('it's'), run over several lines, go on with "Stop Here" and a made-up next example,
  or are cut off mid-value. Each `{...}` span is tried as JSON, then as a Python literal
  (`ast.literal_eval`, which runs no code), then with a tolerant key-value reading; the
  last span holding the answer key before the model starts inventing further examples
  ("Stop Here", "Input:") wins: an echo of the prompt's template comes before the answer,
  invented examples after it.
- `authors`: the authors' own reading, `recreate` in their `evaluate.py`.
- `strict`: exactly one dict literal with the answer key spelled as the set asks.

A null (None, empty) answer value is a format error under `medhal` and `strict`; the
authors' regex reads it as the text "null"/"None", and so does `authors`.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from med_halt.rows import normalize_text
from medhal.kit.replies import (
    RETRACTED,
    TRANSLATED_ANSWER_LABELS,
    after_leading_reasoning,
    after_reasoning,
    boxed_all,
    label_pattern,
    last_boxed,
    last_labelled,
    last_of,
    retraction,
    settled,
    without_fences,
)

JSON, PYTHON, KEY_VALUE, LABEL, REGEX = "json", "python", "key-value", "label", "authors-regex"


@dataclass(frozen=True)
class Reading:
    fields: dict[str, Any] = field(default_factory=dict)
    """Every key-value pair read from the reply's dict (empty when none was read)."""
    key: str | None = None
    """The key the answer was found under; None: no answer (a format error)."""
    answer: str | None = None
    """The answer value as text; None exactly when `key` is None."""
    method: str | None = None
    """How the dict was read: json, python, key-value, label or authors-regex."""

    def get(self, keys: tuple[str, ...]) -> Any:
        """The first of `keys` present with a usable value (exact spelling first, then
        ignoring case and surrounding spaces), else None."""
        found = find_field(self.fields, keys)
        return found[1] if found else None


NO_ANSWER = Reading()

Reader = Callable[[str | None, tuple[str, ...]], Reading]


_PLACEHOLDER = re.compile(r"<[A-Za-z][A-Za-z _-]{1,58}>")


def usable(value: Any) -> bool:
    """A value that can be an answer: not null/None, not empty, not a container, not a
    template placeholder echoed from the prompt ("<option text>")."""
    if value is None or isinstance(value, (dict, list, tuple, set)):
        return False
    text = str(value).strip()
    return bool(text) and not _PLACEHOLDER.fullmatch(text)


def find_field(fields: dict[str, Any] | None, keys: tuple[str, ...]) -> tuple[str, Any] | None:
    """The first of `keys` present with a usable value: exact key first (in the order of
    `keys`), then ignoring case and surrounding whitespace."""
    if not fields:
        return None
    for key in keys:
        if key in fields and usable(fields[key]):
            return key, fields[key]
    loose = {str(k).strip().lower(): k for k in fields}
    for key in keys:
        original = loose.get(key.lower())
        if original is not None and usable(fields[original]):
            return original, fields[original]
    return None


def _answer(fields: dict[str, Any], keys: tuple[str, ...], method: str) -> Reading | None:
    found = find_field(fields, keys)
    if found is None:
        return None
    return Reading(fields, found[0], str(found[1]).strip(), method)


# ------------------------------------------------------------------------------ medhal


def span_positions(text: str, json_strings: bool = True) -> list[tuple[int, int]]:
    """(start, end) of each top-level `{...}` span in order; an unclosed last span runs to
    the end. With `json_strings`, braces inside a double-quoted string are text, not
    structure (`{"cop": "a}b"}` is one span). Single quotes are never tracked:
    Python-style replies hold unescaped apostrophes ('it's'); and a Python-style dict may
    hold a lone double quote, so readers try the spans both ways."""
    spans: list[tuple[int, int]] = []
    depth, start, quoted, escaped = 0, 0, False, False
    for match in re.finditer(r'[{}"\\]' if json_strings else r"[{}]", text):
        char = match.group()
        if escaped:
            escaped = False
            continue
        if char == "\\":
            escaped = quoted and match.end() < len(text) and text[match.end()] in '"\\'
            continue
        if char == '"':
            quoted = not quoted if depth else False
            continue
        if quoted:
            continue
        if char == "{":
            if depth == 0:
                start = match.start()
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                spans.append((start, match.end()))
    if depth:
        spans.append((start, len(text)))
    return spans


def brace_spans(text: str) -> list[str]:
    """Top-level `{...}` spans in order; an unclosed last span runs to the end."""
    return [text[a:b] for a, b in span_positions(text)]


def _literal(span: str) -> tuple[dict | None, str | None]:
    fields, method = _literal_once(span)
    if fields is None and '\\"' in span:
        fields, method = _literal_once(span.replace('\\"', '"'))  # JSON escaped once too often
    return fields, method


def _literal_once(span: str) -> tuple[dict | None, str | None]:
    try:
        value = json.loads(span)
        if isinstance(value, dict):
            return value, JSON
    except (ValueError, RecursionError):
        pass
    try:
        value = ast.literal_eval(span)
        if isinstance(value, dict):
            return value, PYTHON
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    return None, None


_KEY = re.compile(
    r"""(?:^|(?<=[{,\n]))[ \t]*"""
    r"""(?:(?P<q>["'])(?P<qkey>[^"'\n{}]{1,60}?)(?P=q)|(?P<bkey>[A-Za-z_][\w ]{0,40}?))[ \t]*:""",
    re.MULTILINE,
)
_CURLY = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})
_NULLS = {"null", "none", "nil", "undefined"}


def _unquote(value: str) -> str | None:
    value = value.strip().rstrip(",").strip()
    if value[:1] in ('"', "'"):
        quote = value[0]
        value = value[1:-1] if len(value) > 1 and value.endswith(quote) else value[1:]
    elif value.lower() in _NULLS:
        return None  # an unquoted null/None is a missing value, not the text "null"
    return value.strip()


def key_values(text: str) -> dict[str, str | None]:
    """Tolerant reading: the text between one key and the next is the first key's value."""
    text = text.translate(_CURLY).strip()
    if text.startswith("{"):
        text = text[1:]
    closing = text.rfind("}")
    keys = list(_KEY.finditer(text))
    fields: dict[str, str | None] = {}
    for n, match in enumerate(keys):
        end = keys[n + 1].start() if n + 1 < len(keys) else (closing if closing >= match.end() else len(text))
        key = (match.group("qkey") or match.group("bkey") or "").strip()
        fields.setdefault(key, _unquote(text[match.end() : end]))
    return fields


def _holds_key(fields: dict[str, Any], keys: tuple[str, ...]) -> bool:
    """The answer key is present at all (even with a null value)."""
    lowered = {str(k).strip().lower() for k in fields}
    return any(k in fields or k.lower() in lowered for k in keys)


_ANSWER_LABEL = label_pattern(
    ("final answer", "answer", "correct answer", "correct option", "chosen option", *TRANSLATED_ANSWER_LABELS)
)


_INVENTED = re.compile(r"Stop Here|^[ \t]*Input[ \t]*:", re.MULTILINE)
"""Where a model goes on with examples of its own (the shots end with "Stop Here" and the
next example starts with "Input:")."""
_STATED = re.compile(
    r"\b(?:the\s+)?(?:correct|right|final|best)\s+(?:answer|option)\s+(?:is|would\s+be)\s*+:?[ \t]*+"
    r"(?!that\b|because\b|not\b)([^\n.;]{1,200})",
    re.IGNORECASE,
)
"""A stated answer in prose ("The correct answer is Vitamin D.")."""
_REASON = re.compile(r",?\s+(?:because|since|as|which|due\s+to|given)\b", re.IGNORECASE)
"""Where a stated answer's justification begins ("... is X because ...")."""
_ANY_LABEL_LINE = re.compile(r"[^\W\d_]\w*(?: \w+){0,2}[ \t]*[:：][ \t]+(\S.{0,300})")
"""A reply that is one line `<label in any language>: <answer>` ("Respuesta: Desconocido")."""


def _keyed(text: str, keys: tuple[str, ...], parse, json_aware_first: bool) -> Reading | None:
    """The reading of the last `{...}` span that holds an answer key, among the spans
    before the model starts inventing further examples (after its own answer). An echo of
    the prompt's template comes before the answer, invented examples after it."""
    by_start: dict[int, Reading] = {}
    aware, naive = span_positions(text, True), span_positions(text, False)
    spans = dict.fromkeys([*aware, *naive] if json_aware_first else [*naive, *aware])
    for start, end in spans:
        if start in by_start:
            continue  # the preferred span of this start already gave a reading
        fields, method = parse(text[start:end])
        if fields is None or not _holds_key(fields, keys):
            continue
        by_start[start] = _answer(fields, keys, method) or Reading(fields, None, None, method)
    found = sorted(by_start.items())
    if not found:
        return None
    first_end = text.find("}", found[0][0])
    invented = _INVENTED.search(text, first_end if first_end != -1 else found[0][0])
    cut = invented.start() if invented else len(text)
    kept = [reading for start, reading in found if start < cut] or [found[0][1]]
    return kept[-1]


Choices = Mapping[str, str]
"""An item's options by index ('0': 'Vitamin A', ...), as `MedHaltData.choices` holds them."""

_INDEX_AFTER = re.compile(
    r"(?P<text>.+?)\s*[(\[]\s*(?:option|index|choice|#)?\s*(?P<index>\d{1,3})\s*[)\]]\W*"
)
_INDEX_BEFORE = re.compile(r"\W*?(?:option\s*)?[(\[]?\s*(?P<index>\d{1,3})\s*[)\].:\-–]\s*(?P<text>.+)", re.I)
_SEVERAL = re.compile(r"\s+(?:or|and|vs\.?)\s+|\s*[,;/|\n]\s*", re.IGNORECASE)
_RESOLVED_LENGTH = 400
"""Longest answer compared with the options (no option is longer; a longer answer is
read as written)."""
TWO_ANSWERS = ""
"""`_against_choices`' answer when a value names two different options."""


def _index(value: Any, choices: Choices) -> str | None:
    """The option an index names ('2', 2, '2.0'), else None."""
    match = re.fullmatch(r"\s*(\d{1,3})(?:\.0+)?\s*", str(value))
    return choices.get(str(int(match.group(1)))) if match else None


def _against_choices(value: str, choices: Choices, bare: bool = False) -> str | None:
    """A value read against the item's options: the option as the item writes it when the
    value is that option (any case, decoration or final period: "none of the above.") or
    the option with its index in brackets ("Mitral stenosis (2)", "(2) Mitral stenosis");
    TWO_ANSWERS when it names two different options ("A or B", every option listed, the
    text of one option with the index of another). Otherwise the value as written (or,
    for a `bare` reply, None: a bare text that is no option is prose, not an answer)."""
    if not choices or len(value) > _RESOLVED_LENGTH:
        return None if bare else value
    by_text = {normalize_text(text): text for text in choices.values()}
    named = by_text.get(normalize_text(value))
    if named is not None:
        return named
    for pattern in (_INDEX_AFTER, _INDEX_BEFORE):
        match = pattern.fullmatch(value.strip())
        if match is None:
            continue
        text = match.group("text").strip()
        by_index = _index(match.group("index"), choices)
        by_words = by_text.get(normalize_text(text))
        if by_words is not None and by_index is not None and by_words != by_index:
            return TWO_ANSWERS
        if by_words is not None:
            return by_words
        if by_index is not None and not bare:
            return text  # an answer in other words with the index: read as written
    parts = {by_text.get(normalize_text(part)) for part in _SEVERAL.split(value)}
    if len(parts - {None}) > 1:
        return TWO_ANSWERS
    return None if bare else value


def _by_index(reading: Reading, keys: tuple[str, ...], choices: Choices) -> Reading:
    """A dict whose answer key is missing or null but whose index key (`cop_index`) names
    an option: that option."""
    if reading.answer is not None or not choices:
        return reading
    found = find_field(reading.fields, tuple(f"{key}_index" for key in keys))
    option = _index(found[1], choices) if found else None
    return (
        reading
        if found is None or option is None
        else Reading(reading.fields, found[0], option, reading.method)
    )


def read_medhal(reply: str | None, keys: tuple[str, ...], choices: Choices | None = None) -> Reading:
    """What a careful human reads; see the module docstring. A dict that holds the answer
    key with a null value settles the reading as a format error: later, looser passes
    never turn that null into text. With the item's options (`choices`), an answer given
    by index alone (`{"cop_index": 2}`), as an option's bare text, or as an option with
    its index in brackets reads as that option; one that names two options reads none.
    A last sentence taking the answer back ("No, that's wrong.") leaves none."""
    text = after_reasoning(reply)
    if text is None:
        return NO_ANSWER
    text = without_fences(text)
    reading = _read(text, keys, choices or {})
    if reading.answer is None:
        return reading
    taken_back = retraction(text)
    if taken_back == RETRACTED or (
        taken_back and normalize_text(taken_back) == normalize_text(reading.answer)
    ):
        return NO_ANSWER
    return reading


def _read(text: str, keys: tuple[str, ...], choices: Choices) -> Reading:
    literal = _keyed(text, keys, _literal, json_aware_first=True)
    if literal is not None:
        return _by_index(literal, keys, choices)
    # A strict parse needs the JSON-aware span (a brace inside a string); the tolerant
    # reading, used when nothing parsed, is safer on the plain one (a lone double quote in
    # a Python-style dict would make the JSON-aware span run to the end).
    tolerant = _keyed(text, keys, lambda span: (key_values(span), KEY_VALUE), json_aware_first=False)
    if tolerant is not None:
        return _by_index(tolerant, keys, choices)
    index_keys = tuple(f"{key}_index".lower() for key in keys)
    lowered = text.lower() if choices else ""
    if choices and any(key in lowered for key in index_keys):  # a cheap scan before parsing spans
        indexed = _keyed(text, index_keys, _literal, json_aware_first=True) or _keyed(
            text, index_keys, lambda span: (key_values(span), KEY_VALUE), json_aware_first=False
        )
        if indexed is not None:
            return _by_index(Reading(indexed.fields, None, None, indexed.method), keys, choices)
    first = next(
        (Reading(f, None, None, m) for f, m in map(_literal, brace_spans(text)) if f is not None), None
    )
    if first is not None:
        return first  # a dict without the answer key: a format error, with its fields
    fields = key_values(text)
    if _holds_key(fields, keys):
        return _answer(fields, keys, KEY_VALUE) or Reading(fields, None, None, KEY_VALUE)
    value = _boxed(text)
    if value is None:
        value = last_labelled(text, _ANSWER_LABEL)
    if value is None:
        stated = last_of(_STATED.finditer(text))
        value = _REASON.split(stated.group(1), maxsplit=1)[0] if stated else None
    if value is None and "\n" not in text.strip():
        line = _ANY_LABEL_LINE.fullmatch(text.strip())
        value = line.group(1) if line else None
    if value is None:
        bare = _against_choices(text.strip(), choices, bare=True)
        value = None if bare == TWO_ANSWERS else bare
    elif value:
        value = _against_choices(value.strip().strip("*`'\".").strip(), choices)
    if value and usable(value) and value.strip().lower() not in _NULLS and any(c.isalnum() for c in value):
        return Reading({keys[0]: value}, keys[0], value.strip().strip("*`'\".").strip(), LABEL)
    return NO_ANSWER


def _boxed(text: str) -> str | None:
    """The last `\\boxed{…}`'s content; "" (no answer) when the boxes name different
    answers without a marked correction."""
    last = last_boxed(text)
    if last is None:
        return None
    boxes = [(start, end, normalize_text(content)) for start, end, content in boxed_all(text)]
    return last if settled(text, boxes) is not None else ""


# ------------------------------------------------------------------------------ authors

AUTHORS_READ_LIMIT = 65_536
"""The authors' regex is read on at most this many leading characters of a reply (their
code has no limit; longer replies exist only as runaway generations, and the bound keeps
scoring fast; the answer dict of a well-behaved reply comes first)."""

_QUOTES = "'\""


def authors_key_values(text: str) -> list[tuple[str, str]]:
    """`re.findall(r'''['"](.*?)['"]\\s*:\\s*['"]*(.*?)['"]*\\s*[,}]''', text)`, the
    regex of the authors' `parse_key_values` (evaluate.py, lines 27-31), computed in one
    right-to-left pass instead of by backtracking (which is cubic on hostile input).

    For each position it precomputes whether the value part can end there (`['"]*\\s*[,}]`
    follows) and whether a quote there can close a key (`\\s*:` follows and a value can be
    completed before the end of its line); a match from an opening quote is then the first
    such closing quote on the same line, exactly as the lazy `(.*?)` finds it."""
    n = len(text)
    # end[i]: index just past the `[,}]` that a value ending at i reaches, or -1.
    end = [-1] * (n + 1)
    # next_end[i]: the smallest e >= i with end[e] != -1 (n when none).
    next_end = [n] * (n + 1)
    # newline[i]: index of the first "\n" at or after i (n when none).
    newline = [n] * (n + 1)
    space_end = list(range(n + 1))
    quote_end = list(range(n + 1))
    for i in range(n - 1, -1, -1):
        char = text[i]
        newline[i] = i if char == "\n" else newline[i + 1]
        space_end[i] = space_end[i + 1] if char.isspace() else i
        quote_end[i] = quote_end[i + 1] if char in _QUOTES else i
        after = space_end[quote_end[i]]
        end[i] = after + 1 if after < n and text[after] in ",}" else -1
        next_end[i] = i if end[i] != -1 else next_end[i + 1]
    # closer[k]: (value start, value end, match end) when a quote at k can close a key.
    next_closer = [n] * (n + 1)
    closers: dict[int, tuple[int, int, int]] = {}
    for k in range(n - 1, -1, -1):
        next_closer[k] = next_closer[k + 1]
        if text[k] not in _QUOTES:
            continue
        colon = space_end[k + 1] if k + 1 <= n else n
        if colon >= n or text[colon] != ":":
            continue
        value_start = quote_end[space_end[colon + 1]]
        value_end = next_end[value_start]
        if value_end <= newline[value_start] and value_end < n:
            closers[k] = (value_start, value_end, end[value_end])
            next_closer[k] = k
    pairs: list[tuple[str, str]] = []
    p = 0
    while p < n:
        if text[p] in _QUOTES:
            k = next_closer[p + 1]
            if k < newline[p + 1]:
                value_start, value_end, match_end = closers[k]
                pairs.append((text[p + 1 : k], text[value_start:value_end]))
                p = match_end
                continue
        p += 1
    return pairs


def read_authors(reply: str | None, keys: tuple[str, ...]) -> Reading:
    """The authors' reading. `clean_output` (evaluate.py, lines 37-57) first calls
    `np.isnan` on the reply text, which raises TypeError for every string, so its `except`
    branch always runs: `recreate(reply)` on the whole raw reply (think blocks, "Stop Here"
    and all), i.e. the regex pairs as a dict, backslashes removed from keys, later keys
    winning. Values are always strings. Their scorer (eval_full.py) takes the first answer
    key present (FCT, lines 39-50) or the one key of the set; a missing key is an
    exception, left out of the counts: a format error."""
    text = (reply or "")[:AUTHORS_READ_LIMIT]
    fields = {key.replace("\\", ""): value for key, value in authors_key_values(text)}
    for key in keys:
        if key in fields:
            return Reading(fields, key, fields[key], REGEX)
    return Reading(fields, None, None, REGEX) if fields else NO_ANSWER


# ------------------------------------------------------------------------------- strict

STOP_HERE = "Stop Here"


def read_strict(reply: str | None, keys: tuple[str, ...]) -> Reading:
    """Exactly one dict literal (JSON or Python), after at most one leading reasoning
    block and before at most one "Stop Here" (the shots end with it), holding one of the
    set's answer keys spelled exactly, with a string or number value."""
    text = after_leading_reasoning(reply)
    if text is None:
        return NO_ANSWER
    text = text.strip()
    if text.endswith(STOP_HERE):
        text = text[: -len(STOP_HERE)].rstrip()
    if not (text.startswith("{") and text.endswith("}")):
        return NO_ANSWER
    fields, method = _literal_once(text)
    if fields is None:
        return NO_ANSWER
    for key in keys:
        value = fields.get(key)
        if isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value).strip():
            return Reading(fields, key, str(value).strip(), method)
    return Reading(fields, None, None, method)


# ------------------------------------------------------------------------- conventions

READERS: dict[str, Reader] = {"medhal": read_medhal, "authors": read_authors, "strict": read_strict}
CONVENTIONS = tuple(READERS)


def read_all(reply: str | None, keys: tuple[str, ...], choices: Choices | None = None) -> dict[str, Reading]:
    """The reading under every convention; the item's options are the `medhal` reading's
    (the authors' regex and the exact format read the dict as written)."""
    readings = {name: reader(reply, keys) for name, reader in READERS.items()}
    if choices:
        readings["medhal"] = read_medhal(reply, keys, choices)
    return readings
