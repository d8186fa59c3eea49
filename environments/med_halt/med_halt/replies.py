"""Reading the answer out of a Med-HALT reply, under three named conventions.

Med-HALT prompts ask for a dict (`{'cop': ..., 'cop_index': ...}` and the like). Each
reader is a pure function `(reply, answer_keys) -> Reading`: the fields it read and the
set's answer value, or no answer (a format error). README, "How replies are read".

- `medhal` (default): what a careful human reads. Real replies put the dict in a code
  fence or after a `<think>` block, use Python quoting with unescaped apostrophes
  ('it's'), go on with "Stop Here" and a made-up next example, or are cut off mid-value;
  others answer in tags, tables, function calls or prose, in other languages, with
  letters the prompt never used, or hedge, retract and correct themselves. Every answer
  the reply names is found (its dicts, each `{...}` span read as JSON, a Python literal
  or tolerantly; the item's options and indices where answers stand; labelled values)
  and the one the reply commits to is kept (`medhal.kit.commitment`): when two readings
  are possible, there is none.
- `authors`: the authors' own reading, `recreate` in their `evaluate.py`.
- `strict`: exactly one dict literal with the answer key spelled as the set asks.

A null (None, empty) answer value is a format error under `medhal` and `strict`; the
authors' regex reads it as the text "null"/"None", and so does `authors`.
"""

from __future__ import annotations

import ast
import bisect
import functools
import itertools
import json
import re
import warnings
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from med_halt.rows import normalize_text, option_key, same_option
from medhal.kit.commitment import Mention, committed
from medhal.kit.containers import inner_dicts, tag_name, tag_values
from medhal.kit.positions import Places
from medhal.kit.replies import (
    TRANSLATED_ANSWER_LABELS,
    after_leading_reasoning,
    after_reasoning,
    boxed_all,
    label_pattern,
    labelled,
    last_of,
)
from medhal.kit.tables import answer_cells
from medhal.kit.vocabulary import fold, normalize, terms

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


# ------------------------------------------------------------------------------ medhal

QUOTES = "\"'"
_SPAN_TOKEN = re.compile(r"""(?P<lead>\{+|[\[,:])[ \t\r\n]*+(?P<opening>["'])|(?P<open>\{+)|(?P<close>\}+)""")
"""Outside strings: braces, and a quote where a key or value starts (after `{`, `[`, `,` or
`:`, spaces aside)."""
_ENDS_VALUE = r"[ \t\r\n]*+(?:[:,}\]]|\Z)"
_STRING_END = {
    quote: re.compile(
        rf"(?:[^{quote}\\]++|\\.|{quote}(?!{_ENDS_VALUE}))*+{quote}(?={_ENDS_VALUE})", re.DOTALL
    )
    for quote in QUOTES
}
"""From just inside a string to just past its closing quote: one before a delimiter (`:`,
`,`, `}`, `]` or the end, spaces aside); a backslash escapes the next character."""


def span_positions(text: str, quotes: str = QUOTES, limit: int | None = None) -> list[tuple[int, int]]:
    """(start, end) of each top-level `{...}` span in order; an unclosed last span runs to
    the end. Braces inside a quoted string (of the kinds in `quotes`) are text, not
    structure: `{'cop': 'a}b'}` is one span. A quote opens a string only where a key or
    value starts (after `{`, `[`, `,` or `:`, spaces aside) and closes it only where one
    ends (before `:`, `,`, `}`, `]` or the end of the text), so apostrophes inside words
    ('it's', 'Graves' disease') neither open nor close one; a backslash in a string escapes
    the next character. With `quotes=""` every brace counts. Text outside braces is skipped
    at once, and a string is read in one match: each step is a scan of the C engine. At
    most `limit` spans."""
    return _scan_spans(text, quotes, limit, None)[0]


def _scan_spans(
    text: str, quotes: str, limit: int | None, steps: int | None
) -> tuple[list[tuple[int, int]], int | None]:
    """`span_positions`, and where the scan stopped early: after `limit` spans, or after
    `steps` braces, keys and values (a runaway generation); None when it read the whole
    text."""
    spans: list[tuple[int, int]] = []
    depth, start, position = 0, 0, 0
    n = len(text)
    while position < n:
        if depth == 0:
            position = text.find("{", position)
            if position == -1:
                return spans, None
        if steps is not None:
            steps -= 1
            if steps < 0:
                return spans, position
        match = _SPAN_TOKEN.search(text, position)
        if match is None:
            break
        position = match.end()
        braces = match.group("lead") or match.group("open") or ""
        if braces[:1] == "{":
            if depth == 0:
                start = match.start()
            depth += len(braces)
        elif match.group("close"):
            close = match.group("close")
            if len(close) >= depth:
                spans.append((start, match.start() + depth))
                depth = 0
                if len(spans) == limit:
                    return spans, spans[-1][1]
            else:
                depth -= len(close)
            continue
        quote = match.group("opening")
        if quote and quote in quotes and depth:
            string = _STRING_END[quote].match(text, position)
            if string is None:
                break  # a string never closed: the span runs to the end
            position = string.end()
    if depth:
        spans.append((start, n))
    return spans, None


def brace_spans(text: str) -> list[str]:
    """Top-level `{...}` spans in order (`span_positions`); an unclosed last span runs to
    the end."""
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
        with warnings.catch_warnings():  # a reply's "\\X" is no escape worth a warning per rollout
            warnings.simplefilter("ignore")
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
KEYS_READ = 200
"""Keys the tolerant reading reads in one span (a runaway generation of keys costs one
scan, not thousands of fields)."""


def _unquote(value: str) -> str | None:
    value = value.strip().rstrip(",").strip()
    if value[:1] in ('"', "'"):
        quote = value[0]
        value = value[1:-1] if len(value) > 1 and value.endswith(quote) else value[1:]
    elif value.lower() in _NULLS:
        return None  # an unquoted null/None is a missing value, not the text "null"
    return value.strip()


def key_values(text: str) -> dict[str, str | None]:
    """Tolerant reading: the text between one key and the next is the first key's value
    (the first `KEYS_READ` keys)."""
    text = text.translate(_CURLY).strip()
    if text.startswith("{"):
        text = text[1:]
    closing = text.rfind("}")
    keys = list(itertools.islice(_KEY.finditer(text), KEYS_READ + 1))
    fields: dict[str, str | None] = {}
    for n, match in enumerate(keys[:KEYS_READ]):
        end = keys[n + 1].start() if n + 1 < len(keys) else (closing if closing >= match.end() else len(text))
        key = (match.group("qkey") or match.group("bkey") or "").strip()
        fields.setdefault(key, _unquote(text[match.end() : end]))
    return fields


def _holds_key(fields: dict[str, Any], keys: tuple[str, ...]) -> bool:
    """The answer key is present at all (even with a null value)."""
    lowered = {str(k).strip().lower() for k in fields}
    return any(k in fields or k.lower() in lowered for k in keys)


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

SPANS_READ = 2_000
STEPS_READ = 20_000
"""`{...}` spans, and braces, keys and values in them, read; a reply holding more before
its answer's end is a runaway generation (of braces, boxes, LaTeX or keys), read as no
answer. A dict of the requested format takes a few dozen steps."""
BOXES_SEEN = 1_000
"""`\\boxed{` read at most; more is a runaway generation, read as no answer."""
DICTS_READ = 50
"""Answer dicts read before the model's invented examples; a reply holding more is a
runaway generation, read as no answer (its dicts are not compared one by one)."""
EXPRESSIONS_READ = 50
"""The same bound for answers outside dicts (tags, boxes, table rows, labels), from the
last one back."""

Choices = Mapping[str, str]
"""An item's options by index ('0': 'Vitamin A', ...), as `MedHaltData.choices` holds them."""


# ---- dicts


def _tolerant_end(ends: list[int], length: int) -> int:
    """The cut the tolerant reading reads: the first (quote-aware) one, unless it runs to the
    end of the text while another closes (a quote the cut could not pair)."""
    closed = [end for end in ends if end < length]
    return ends[0] if ends[0] < length or not closed else min(closed)


class _Spans:
    """The `{...}` spans of a text, each start with its ends under the cuts of
    `span_positions` in order of preference (both quotes; double quotes only; every
    brace). The last two cuts are made only when a span of the first does not parse."""

    def __init__(self, text: str) -> None:
        self.text = text
        spans, self.stopped_at = _scan_spans(text, QUOTES, SPANS_READ, STEPS_READ)
        """`stopped_at`: where the scan stopped, a runaway generation (None: it read the
        whole text)."""
        self.ends: dict[int, list[int]] = {start: [end] for start, end in spans}
        self._all_cuts = False
        self._dicts: list[tuple[int, int]] | None = None
        self._first: Reading | None = None

    def _more_cuts(self) -> None:
        if self._all_cuts:
            return
        self._all_cuts = True
        for quotes in ('"', ""):
            for start, end in _scan_spans(self.text, quotes, SPANS_READ, STEPS_READ)[0]:
                if end not in self.ends.setdefault(start, []):
                    self.ends[start].append(end)

    def starts(self) -> list[int]:
        return sorted(self.ends)

    def literal(self, start: int) -> tuple[int, dict | None, str | None]:
        """(end, fields, method) of the first cut at `start` that parses as a literal."""
        first = self.ends[start][0]
        fields, method = _literal(self.text[start:first])
        if fields is not None:
            return first, fields, method
        self._more_cuts()
        for end in self.ends[start][1:]:
            fields, method = _literal(self.text[start:end])
            if fields is not None:
                return end, fields, method
        return first, None, None

    def read(self, start: int) -> tuple[int, dict | None, str]:
        """(end, fields, method): the literal reading, else the tolerant one (fields None
        when that finds no key either)."""
        end, fields, method = self.literal(start)
        if fields is not None:
            return end, fields, method or JSON
        end = _tolerant_end(self.ends[start], len(self.text))
        return end, key_values(self.text[start:end]) or None, KEY_VALUE

    def dicts(self) -> list[tuple[int, int]]:
        """The spans (of the first `DICTS_READ` that could be dicts) that parse as literal
        dicts: structured text, where no answer is looked for outside its keys."""
        if self._dicts is None:
            self._dicts = []
            candidates = [
                start
                for start in self.starts()
                if ":" in self.text[start : self.ends[start][0]]
                or not self.text[start + 1 : self.ends[start][0] - 1].strip()
            ]
            for start in candidates[:DICTS_READ]:
                end, fields, method = self.literal(start)
                if fields is not None:
                    self._dicts.append((start, end))
                    self._first = self._first or Reading(fields, None, None, method)
        return self._dicts

    def first_dict(self) -> Reading | None:
        """The first span that parses as a literal dict, with no answer."""
        self.dicts()
        return self._first

    def mentions(self, start: int, keys: tuple[str, ...]) -> bool:
        """Whether the longest cut at `start` holds one of `keys` as text (a cheap test
        before parsing: spans that cannot hold an answer are not parsed)."""
        lowered = self.text[start : max(self.ends[start])].lower()
        return any(key.lower() in lowered for key in keys)


def _answer_fields(fields: dict, keys: tuple[str, ...], method: str) -> list[dict]:
    """The dicts of a span that hold an answer key: the span's own, else those nested in it
    (`{"name": "submit", "arguments": {...}}`, a list of answers, a JSON string of
    arguments)."""
    if _holds_key(fields, keys):
        return [fields]
    if method == KEY_VALUE:
        return []
    return [inner for inner in inner_dicts(fields) if _holds_key(inner, keys)]


@dataclass(frozen=True)
class _Stated:
    start: int
    end: int
    reading: Reading
    """What one dict (or other container) states: its fields, and its answer resolved
    against the item's options (key None: a null answer, an echoed template)."""
    names_nothing: bool = False
    """An answer was written but names no option (a lone letter, two options)."""


def _dicts(spans: _Spans, keys: tuple[str, ...], choices: Choices) -> tuple[list[_Stated] | None, int]:
    """What each dict holding an answer key (or, with the item's options, an index key)
    states, in order, among the dicts before the model starts inventing further examples
    ("Stop Here", "Input:"): an echo of the prompt's template comes before the answer,
    invented examples after it. With where the reply's own part ends (the cut). None when
    no dict holds a key; [] for a runaway reply (more than `DICTS_READ` answer dicts, or
    `SPANS_READ` spans before the cut)."""
    text = spans.text
    index_keys = tuple(f"{key}_index" for key in keys) if choices else ()
    wanted = keys + index_keys
    stated: list[_Stated] = []
    read_to, cut = 0, len(text)
    for start in spans.starts():
        if start < read_to or start >= cut or not spans.mentions(start, wanted):
            continue
        end, fields, method = spans.read(start)
        read_to = end
        inner = [
            _dict_states(start, end, Reading(fields, None, None, method), keys, choices)
            for fields in _answer_fields(fields or {}, wanted, method)
        ]
        if not inner and fields is None and _KEY_TEXT.search(text, start, end) is not None:
            # A dict naming the answer key that no reading can parse: stated, unreadable.
            inner = [_Stated(start, end, NO_ANSWER, names_nothing=True)]
        if not inner:
            continue
        if not stated:
            cut = _cut(text, start)
        if len(stated) + len(inner) > DICTS_READ:
            return [], cut
        answers = {None if s.names_nothing else option_key(s.reading.answer or "") for s in inner}
        if len(inner) > 1 and len(answers) > 1:  # nested answers that differ: one statement naming none
            inner = [_Stated(start, end, inner[-1].reading, names_nothing=True)]
        stated += inner[-1:] if len(inner) > 1 else inner
    if spans.stopped_at is not None and spans.stopped_at < cut:
        return [], cut
    return stated or None, cut


_KEY_TEXT = re.compile(
    r"""["'\\]\s*(?:cop|paper_title|url|correct[ _]answer|answer|corrent_answer)\s*\\?["']""", re.I
)
"""An answer key written as a quoted key (of any set), where a dict failed to parse."""


def _cut(text: str, first_answer: int) -> int:
    """Where the model starts inventing further examples after its first answer (the
    first "}" after it, for a dict: "Stop Here" quoted inside it is no cut)."""
    first_end = text.find("}", first_answer)
    invented = _INVENTED.search(text, first_end if first_end != -1 else first_answer)
    return invented.start() if invented else len(text)


def _dict_states(start: int, end: int, reading: Reading, keys: tuple[str, ...], choices: Choices) -> _Stated:
    found = find_field(reading.fields, keys)
    if found is None:
        indexed = _by_index(reading, keys, choices)
        return _Stated(start, end, indexed)
    value = str(found[1]).strip()
    if _placeholder(value, choices):
        return _Stated(start, end, _by_index(reading, keys, choices))
    resolved = _value(value, choices, _names_an_option(value, choices))
    if resolved is None:
        return _Stated(start, end, reading, names_nothing=True)
    return _Stated(start, end, Reading(reading.fields, found[0], resolved, reading.method))


def _by_index(reading: Reading, keys: tuple[str, ...], choices: Choices) -> Reading:
    """A dict whose answer key is missing, null or a placeholder, but whose index key
    (`cop_index`) names an option: that option."""
    found = find_field(reading.fields, tuple(f"{key}_index" for key in keys)) if choices else None
    option = _index(found[1], choices) if found else None
    return (
        reading
        if found is None or option is None
        else Reading(reading.fields, found[0], option, reading.method)
    )


# ---- one value against the item's options

_INDEX_AFTER = re.compile(
    r"(?P<text>.+?)\s*[(\[]\s*(?:option|index|choice|#)?\s*(?P<index>\d{1,3})\s*[)\]]\W*", re.IGNORECASE
)
_INDEX_BEFORE = re.compile(r"\W*?(?:option\s*)?[(\[]?\s*(?P<index>\d{1,3})\s*[)\].:\-–]\s*(?P<text>.+)", re.I)
_LONE_INDEX = re.compile(r"\W*(?:option|index|choice)?\s*[(\[]?\s*(?P<index>\d{1,3})\s*[)\]]?\W*", re.I)
_LETTER = r"[A-Ja-j]"
_LONE_LETTER = re.compile(rf"\W*(?:option\s+|choice\s+)?[(\[]?\s*{_LETTER}\s*[)\]]?\W*", re.IGNORECASE)
_LETTER_BEFORE = re.compile(
    rf"\W*?(?:option\s+|choice\s+)?(?:[(\[]\s*{_LETTER}\s*[)\]][.:]?|{_LETTER}\s*[).:\-–])\s*(?P<text>\S.*)",
    re.IGNORECASE | re.DOTALL,
)
_LETTER_AFTER = re.compile(
    rf"(?P<text>.*?\S)\s*[(\[]\s*(?:option\s+|choice\s+)?{_LETTER}\s*[)\]]\W*", re.IGNORECASE | re.DOTALL
)
_SEVERAL = re.compile(r"\s+(?:or|and|vs\.?)\s+|\s*[,;/|\n]\s*", re.IGNORECASE)
_RESOLVED_LENGTH = 400
"""Longest answer compared with the options (no option is longer; a longer answer is
read as written)."""
_PLACEHOLDERS = {
    "correct option",
    "the correct option",
    "correct option from given options",
    "correct answer",
    "the correct answer",
    "option",
    "option text",
    "answer",
    "your answer",
    "index",
    "its index",
    "index of correct option",
    "title",
    "paper title",
    "the title",
    "pubmed research paper title",
    "pubmed paper title",
    "url",
    "link",
    "pubmed link",
    "pubmed url",
    "yes no",
}
"""Values that name a field's role, not an answer: a template echoed from the prompt
(`{'cop': 'correct option'}`), in `normalize_text`'s form."""


def _index(value: Any, choices: Choices) -> str | None:
    """The option an index names ('2', 2, '2.0'), else None."""
    match = re.fullmatch(r"\s*(\d{1,3})(?:\.0+)?\s*", str(value))
    return choices.get(str(int(match.group(1)))) if match else None


def _placeholder(value: str, choices: Choices) -> bool:
    """A value naming a field's role, echoed from the prompt's template: no answer at all
    (unless an option is called that)."""
    return normalize_text(value) in _PLACEHOLDERS and not any(same_option(value, o) for o in choices.values())


def _resolve(value: str, choices: Choices, bare: bool) -> str | None:
    """A value read against the item's options (`choices`):
    - the option as the item writes it, when the value is that option under Med-HALT's
      equality rule (`rows.option_key`), or names it by its index ("2", "(2)", "Option 2",
      "Mitral stenosis (2)"), or by a letter with its text ("C. Mitral stenosis": the
      prompt numbers the options, so a letter counts for nothing beside the text);
    - None (names nothing) for a lone letter ("C", "(C)", "Option C": the prompt never
      used letters), a digit that is one option's text and another's index, or a value
      naming two different options ("A or B", every option listed, one option's text
      with another's index);
    - otherwise the value as written (a letter before it removed), or, for a `bare` reply
      (no label, no container), None: a bare text that is no option is prose.
    Without options, the value as written (None for a bare one)."""
    text = value.strip()
    if not choices or len(text) > _RESOLVED_LENGTH:
        return None if bare else text
    by_key = {option_key(option): option for option in choices.values()}
    named = by_key.get(option_key(text))
    lone = _LONE_INDEX.fullmatch(text)
    if lone is not None:
        by_index = _index(lone.group("index"), choices)
        if named is not None and by_index is not None and named != by_index:
            return None
        return named or by_index or (None if bare else text)
    if named is not None:
        return named
    if _LONE_LETTER.fullmatch(text):
        return None
    for pattern in (_INDEX_AFTER, _INDEX_BEFORE):
        match = pattern.fullmatch(text)
        if match is None:
            continue
        words = match.group("text").strip()
        by_index = _index(match.group("index"), choices)
        by_words = by_key.get(option_key(words))
        if by_words is not None and by_index is not None and by_words != by_index:
            return None
        if by_words is not None:
            return by_words
        if by_index is not None and not bare:
            return words  # an answer in other words with the index: read as written
    for pattern in (_LETTER_BEFORE, _LETTER_AFTER):
        match = pattern.fullmatch(text)
        if match is not None:
            words = match.group("text").strip()
            return by_key.get(option_key(words)) or (None if bare else words)
    parts = {by_key.get(option_key(part)) for part in _SEVERAL.split(text)}
    if len(parts - {None}) > 1:
        return None
    return None if bare else text


def _clean(value: str) -> str:
    """A value without the marks around it (emphasis, code, quotes, a final period, and the
    end of a dict it was cut from: `Unknown"}`)."""
    return value.strip().strip("*`'\".,}").strip()


def _answer_value(value: str | None) -> str | None:
    """A text that can be an answer: not null/None, not empty, with a letter or digit."""
    if value is None or not usable(value):
        return None
    text = _clean(value)
    return text if text and text.lower() not in _NULLS and any(c.isalnum() for c in text) else None


# ---- answers outside dicts

_TAG_NAMES = frozenset(
    {"answer", "final_answer", "finalanswer", "correct_answer", "correct_option", "chosen_option", "cop"}
    | {"option", "choice", "selected_option", "output", "result", "response", "solution"}
)
"""Tag names that hold an answer (`tag_name` form), besides the set's own keys."""
_FENCE_MARK = re.compile(r"```[\w+-]*")
_LEADS = (
    *("correct answer is", "right answer is", "final answer is", "best answer is", "correct option is"),
    *("correct answer would be", "correct answer:"),
)
"""Words after which an option is the answer ("The correct answer is Mitral stenosis"); not
"the answer is", which explanations say of the student's answer."""
_OTHER_NAMED = re.compile(
    r"(?:[,;(]|^|\n)[\s>*•-]*(?:but|though|although|or)\b[^\n]{0,80}?\b(?:could|might|may|possibly|maybe|perhaps|"
    r"possible|plausible)\b|\bor\s+(?:possibly|maybe|perhaps)\b|(?:cannot|can't|can\s+not)\s+be\s+ruled\s+out",
    re.IGNORECASE | re.MULTILINE,
)
"""Words that name another answer as possible ("X, but it could be Y", "X or possibly Y",
"Y cannot be ruled out"): where the other answer is no option of the item, the reading
cannot see it, so the words themselves leave no answer. (A title's own "may be" is none.)"""
_CROSS = re.compile(r"(?<=\|)[ \t*_]*(?:✗|✘|❌|✖|×|no|false)[ \t*_]*(?=\|)")
"""A table cell marking its row not chosen: blank, as `answer_cells` looks for a tick column
(its other rows empty)."""
_DENIED_INDEX = re.compile(r"\b(?:not|no|never)\W+(?:option\s+)?[(\[]?\d{1,3}\b", re.IGNORECASE)
"""An index denied inside a value ("not 2"): it names no one answer."""
_COLON_BEFORE = re.compile(r":[ \t*_`'\"]*$")
_ENDS_ITS_SENTENCE = re.compile(r"[ \t*_`'\")\]]*(?:$|\n|[.!?;,])")
"""An option after a colon that ends its sentence ("Let me correct that: X") stands as an
answer."""
_JOINED = re.compile(r"(?:[/|&+]|\b(?:and|or|vs\.?|versus)\b)[\s*_`'\"]*$")
"""Before an option joined to another in a list ("A / B", "A and B")."""
_ANSWER_TERMS = (*terms("answer"), "correct option", "chosen option", "final answer")


@functools.lru_cache(maxsize=16)
def _places(keys: tuple[str, ...]) -> Places:
    """Where a set's answers stand: after an answer label (in any language), the set's own
    keys, a title or link label for the IR sets, "the correct answer is", a tag, a box, a
    table cell, alone on a line (`medhal.kit.positions`)."""
    labels = [*_ANSWER_TERMS, *(k.lower() for k in keys)]
    if any("title" in k.lower() for k in keys):
        labels += terms("title")
    if any(k.lower() == "url" for k in keys):
        labels += terms("url")
    return Places(labels, _LEADS, (), r"\d{1,3}")


_INDEX_MARK = (
    r"(?:option\s+|choice\s+)?(?:[(\[]\s*(?P<{name}>\d{{1,3}})\s*[)\]]|(?P<{name}2>\d{{1,3}})\s*[.):-])"
)
_LETTER_MARK = r"(?:option\s+|choice\s+)?(?:[(\[]\s*[a-j]\s*[)\]]|[a-j]\s*[.):-])"


@functools.lru_cache(maxsize=64)
def _option_pattern(options: tuple[str, ...]) -> re.Pattern[str] | None:
    """An option as replies write it (on `fold`ed text): its text (final punctuation and
    marks aside, any run of spaces between its words), longest first, at word boundaries,
    after an index or a letter ("(2) ", "2. ", "Option 2: ", "C. ") or before one in
    brackets ("(2)", "(C)"); or an index alone."""
    words = sorted({fold(option_key(o)) for o in options if option_key(o)}, key=len, reverse=True)
    if not words:
        return None
    texts = "|".join(r"\s+".join(re.escape(w) for w in word.split()) for word in words)
    before = f"(?:{_INDEX_MARK.format(name='pre')}|{_LETTER_MARK})[ \t]*"
    after = r"[ \t]*(?:[(\[]\s*(?:option\s+)?(?:(?P<post>\d{1,3})|[a-j])\s*[)\]])"
    return re.compile(
        rf"(?<![\w])(?:{before})?(?P<text>{texts})(?![\w])(?:{after})?"
        rf"|(?<![\w.,])(?P<index>\d{{1,3}})(?![\w]|[.,]\d)"
    )


def _occurrence(match: re.Match[str], choices: Choices, by_key: dict[str, str]) -> tuple[bool, str | None]:
    """(whether it is an option at all, the option it names: None when its text and its
    index name two different options)."""
    if match.group("text") is None:
        option = choices.get(str(int(match.group("index"))))
        return option is not None, option
    option = by_key.get(" ".join(match.group("text").split()))
    for index in (match.group("pre"), match.group("pre2"), match.group("post")):
        if index is not None and choices.get(str(int(index))) not in (None, option):
            return True, None
    return option is not None, option


class _Regions:
    """Stretches of text (a dict's, a table's other cells) where no answer is looked for;
    whether a position falls in one, by bisection."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        ordered = sorted(spans)
        self.starts = [a for a, _ in ordered]
        self.reach = list(itertools.accumulate((b for _, b in ordered), max))
        """The furthest end among the spans starting at or before each start."""

    def __contains__(self, position: int) -> bool:
        n = bisect.bisect_right(self.starts, position) - 1
        return n >= 0 and position < self.reach[n]


@dataclass(frozen=True)
class _Found:
    mentions: list[Mention[str | None]]
    readings: dict[str | None, Reading]
    """The reading of each value (the last one found)."""


def _text_answers(
    text: str, keys: tuple[str, ...], choices: Choices, excluded: list[tuple[int, int]]
) -> tuple[list[tuple[Mention[str | None], Reading]], bool]:
    """The answers a reply names outside its dicts (`excluded`), as mentions for
    `medhal.kit.commitment.committed`: every option (its text, or its index) standing where
    replies put an answer (`medhal.kit.positions.Places`: after a label in any language, a
    tag, a box, a table cell, "the correct answer is", an alternative word such as "or",
    "but it could be", "not", "Actually", or alone on a line); and the value of each
    label, tag, box, table answer cell or stated answer that holds no option: a lone letter
    or several options name nothing (a mention of None), another text is read as written
    (None when it names another answer beside it: "X, but it could be Y"). With whether
    any of them is explicit (a statement, or an option alone on its line): options found
    only by the words around them in prose may spoil or correct an answer, not make one."""
    plain = normalize(_FENCE_MARK.sub(lambda m: " " * len(m.group()), text))
    folded = fold(plain)
    places = _places(keys)
    cells, other_cells = answer_cells(_CROSS.sub(lambda m: " " * len(m.group()), folded), places.is_label)
    outside = _Regions(excluded + other_cells)
    found: list[tuple[Mention[str | None], Reading]] = []
    occurrences: list[tuple[int, int, bool, str | None]] = []
    explicit = False
    pattern = _option_pattern(tuple(choices.values())) if choices else None
    by_key = {fold(option_key(o)): o for o in choices.values()}
    if pattern is not None:
        for match in itertools.islice(pattern.finditer(folded), MENTIONS_SEEN):
            start, end = match.span()
            if start in outside:
                continue
            is_option, option = _occurrence(match, choices, by_key)
            if not is_option:
                continue
            joined = _JOINED.search(folded, max(0, start - 40), start) is not None
            after_colon = _COLON_BEFORE.search(folded, max(0, start - 40), start) is not None and bool(
                _ENDS_ITS_SENTENCE.match(folded, end)
            )
            held = joined or after_colon or places.holds(plain, folded, start, end)
            occurrences.append((start, end, held, option))
            explicit = explicit or _ALONE.fullmatch(_line(folded, start, end)) is not None
            if held:
                value = None if option is None else option_key(option)
                found.append(
                    (Mention(start, end, value), _label_reading(keys, option) if option else NO_ANSWER)
                )
    for start, end, raw in _statements(plain, folded, keys, cells):
        inside = [(a, b, held, option) for a, b, held, option in occurrences if start <= a and b <= end]
        if start in outside or any(a < start < b for a, b, _, _ in occurrences):
            continue  # a dict's text, or an option's own words ("... the correct answer is X")
        explicit = explicit or bool(inside)
        if inside and not inside[0][2] and not plain[start : inside[0][0]].strip(" \t*_`'\"\\([{"):
            a, b, _, option = inside[0]  # an option opening the statement's value: its answer
            found.append((Mention(a, b, option and option_key(option)), _label_reading(keys, option)))
            continue
        if any(held for _, _, held, _ in inside):
            continue  # an option said where answers stand (found above)
        value = _answer_value(raw)
        if value is None or _placeholder(value, choices):
            continue
        explicit = True
        resolved = _value(value, choices, bool(inside))
        found.append((Mention(start, end, resolved and option_key(resolved)), _label_reading(keys, resolved)))
    if not choices:
        for hedge in itertools.islice(_OTHER_NAMED.finditer(plain), MENTIONS_SEEN):
            if hedge.start() not in outside and not any(
                a <= hedge.start() < b for (m, _) in found for a, b in [(m.start, m.end)]
            ):
                found.append((Mention(hedge.start(), hedge.end(), None), NO_ANSWER))
    return found, explicit


_ALONE = re.compile(r"[\s>*•#_`'\"-]*x[\s*_`'\".]*")
"""A line holding nothing but one option (`_line` writes it as x)."""


def _line(folded: str, start: int, end: int) -> str:
    """The line of [start, end), the option written as x (a bounded stretch each side)."""
    line_start = folded.rfind("\n", max(0, start - 80), start) + 1
    line_end = folded.find("\n", end, end + 80)
    if line_start == 0 and start > 80:
        return "?"  # a longer line
    return folded[line_start:start] + "x" + folded[end : line_end if line_end != -1 else end + 80]


def _names_an_option(value: str, choices: Choices) -> bool:
    """Whether an option's text stands somewhere inside the value."""
    pattern = _option_pattern(tuple(choices.values())) if choices else None
    return pattern is not None and any(
        m.group("text") is not None for m in itertools.islice(pattern.finditer(fold(value)), 4)
    )


def _value(value: str, choices: Choices, names_an_option: bool) -> str | None:
    """A stated value (a dict's, a label's, a tag's ...) read against the options
    (`_resolve`); a value that is no option reads as written, unless it names an option
    inside (`names_an_option`), denies (with options: "not 2"), names another answer as
    possible ("X, but it could be Y") or revises itself ("Zinc. Actually, iron"): then it
    names no one answer (None)."""
    resolved = _resolve(value, choices, bare=False)
    if resolved is None or resolved != value or resolved in choices.values():
        return resolved
    if (
        names_an_option
        or _OTHER_NAMED.search(value)
        or _REVISED.search(fold(value), 1)
        or (choices and _DENIED_INDEX.search(value))
    ):
        return None
    return value


def _label_reading(keys: tuple[str, ...], answer: str | None) -> Reading:
    if answer is None:
        return NO_ANSWER
    answer = answer.strip()
    return Reading({keys[0]: answer}, keys[0], answer, LABEL)


_LABEL_ROW = re.compile(r"^[ \t>*•-]*\|(?P<label>[^|\n]{1,60})\|(?P<value>[^|\n]{1,300})\|", re.MULTILINE)
"""A table row `| <answer label> | <value> |`, also alone (outside a table `answer_cells`
recognises: a row under a broken header)."""
_SEPARATOR_LINE = re.compile(r"[ \t>*•-]*\|?[ \t]*:?-{2,}")
"""The line under a table's header row."""
_HEADING = re.compile(
    r"^[ \t>*-]*#{1,6}[ \t]*(?P<label>[^\n#]{1,40}?)[ \t:]*\n\s*(?P<value>\S[^\n]{0,300})", re.M
)


def _statements(
    plain: str, folded: str, keys: tuple[str, ...], cells: list[tuple[int, int]]
) -> list[tuple[int, int, str]]:
    """(start, end, value) of every explicit answer outside dicts: tags, boxes, table
    answer cells, labels, headings and "the correct answer is ..." (the last
    `EXPRESSIONS_READ` of each kind). One that holds another gives way to it ("Answer:
    \\boxed{X}" is the box)."""
    found = [
        (*tag, 0) for tag in tag_values(plain, _TAG_NAMES | {tag_name(k.replace(" ", "_")) for k in keys})
    ]
    found = found[-EXPRESSIONS_READ:]
    if plain.count("\\boxed") + plain.count("\\fbox") > BOXES_SEEN:
        return [(0, len(plain), "")]  # a runaway generation of boxes: one statement naming nothing
    found += [(start, end, content, 0) for start, end, content in boxed_all(plain)]
    found += [(start, end, plain[start:end], 0) for start, end in cells[-EXPRESSIONS_READ:]]
    places = _places(keys)
    for row in itertools.islice(_LABEL_ROW.finditer(plain), EXPRESSIONS_READ):  # a row alone
        line_end = plain.find("\n", row.end())
        header = line_end != -1 and _SEPARATOR_LINE.match(plain, line_end + 1) is not None
        if (
            places.is_label(row.group("label"))
            and not header
            and (row.start("value"), row.end("value")) not in cells
        ):
            found.append((row.start("value"), row.end("value"), row.group("value"), 0))
    for start, value in _last_labels(plain, keys):
        value_start = plain.find(value, start)  # the label before it may mark a correction
        found.append((value_start, value_start + len(value), value, 1))
    for heading in itertools.islice(_HEADING.finditer(plain), EXPRESSIONS_READ):
        if places.is_label(heading.group("label")):
            found.append((heading.start("value"), heading.end("value"), heading.group("value"), 1))
    stated = last_of(_STATED.finditer(plain))
    if stated is not None:
        value = _REASON.split(stated.group(1), maxsplit=1)[0]
        found.append((stated.start(1), stated.start(1) + len(value), value, 1))
    found.sort()

    def holds_another(item: tuple[int, int, str, int]) -> bool:
        return any(
            o[0] >= item[0] and o[1] <= item[1] and (o[:2] != item[:2] or o[3] < item[3]) for o in found
        )

    return [
        (start, end, value)
        for start, end, value, rank in found
        if not holds_another((start, end, value, rank))
    ]


_TAIL = 65_536


def _last_labels(text: str, keys: tuple[str, ...]) -> list[tuple[int, str]]:
    """`labelled(text, <answer labels>, last=EXPRESSIONS_READ)`, read on the text's last
    64 KB first: when those hold that many labels (past the 200 characters a label may look
    back at), they are the last ones, and a runaway generation of labels is not scanned
    whole."""
    pattern = _label_pattern(keys)
    if len(text) > _TAIL:
        offset = len(text) - _TAIL
        tail = text[offset:]
        last = deque(pattern.finditer(tail), maxlen=EXPRESSIONS_READ)
        if len(last) == EXPRESSIONS_READ and last[0].start() >= 200:
            found = labelled(tail, pattern, last=EXPRESSIONS_READ)
            return [(offset + position, value) for position, value in found]
    return list(labelled(text, pattern, last=EXPRESSIONS_READ))


@functools.lru_cache(maxsize=16)
def _label_pattern(keys: tuple[str, ...]) -> re.Pattern[str]:
    words = [*_ANSWER_TERMS, *TRANSLATED_ANSWER_LABELS, *(k for k in keys if not k.startswith("is_"))]
    if any("title" in k.lower() for k in keys):
        words += terms("title")
    if any(k.lower() == "url" for k in keys):
        words += terms("url")
    return label_pattern(words)


# ---- the reading

MENTIONS_SEEN = 200
"""Option mentions looked at (`medhal.kit.commitment` reads at most 64: more is a runaway
generation, no answer)."""


def read_medhal(reply: str | None, keys: tuple[str, ...], choices: Choices | None = None) -> Reading:
    """What a careful human reads; see the module docstring. Every answer the reply names
    is found (its dicts; options, indices and values standing where answers stand) and the
    one it commits to is read (`medhal.kit.commitment.committed`): several that differ,
    a denied, conditional, hedged or retracted answer leave none; a marked correction
    replaces what it corrects. With the item's options (`choices`), answers are read
    against them (`_resolve`)."""
    text = after_reasoning(reply)
    if text is None:
        return NO_ANSWER
    return _read(text, keys, choices or {})


def _read(text: str, keys: tuple[str, ...], choices: Choices) -> Reading:
    spans = _Spans(text)
    stated, cut = _dicts(spans, keys, choices)
    if stated == []:
        return NO_ANSWER  # a runaway generation
    readings: dict[str | None, Reading] = {}
    mentions: list[Mention[str | None]] = []
    dict_regions = [(s.start, s.end) for s in stated or ()] + spans.dicts()
    last_null: _Stated | None = None
    for statement in stated or ():
        if statement.names_nothing:
            mentions.append(Mention(statement.start, statement.end, None))
        elif statement.reading.answer is not None:
            value = option_key(statement.reading.answer)
            mentions.append(Mention(statement.start, statement.end, value))
            readings[value] = statement.reading
        else:
            last_null = statement
            continue
        last_null = None
    if stated is None:
        lowered = text.lower()
        fields = key_values(text) if any(key.lower() in lowered for key in keys) else {}
        if _holds_key(fields, keys):  # the set's own key written without braces
            bare_key = _dict_states(0, len(text), Reading(fields, None, None, KEY_VALUE), keys, choices)
            return bare_key.reading if not bare_key.names_nothing else Reading(fields, None, None, KEY_VALUE)
    if stated and _only_dicts(text, dict_regions, cut):
        # Nothing but the dicts (and invented examples after the cut): no words that could
        # deny, hedge or correct them; they agree or name two answers.
        values = {m.value for m in mentions}
        if not mentions or (last_null is not None and last_null.start > mentions[-1].start):
            return stated[-1].reading
        if len(values) == 1 and None not in values:
            return readings[mentions[-1].value]
        last = stated[-1].reading
        return Reading(last.fields, None, None, last.method)
    answers, explicit = _text_answers(text, keys, choices, dict_regions)
    if explicit or stated:
        for mention, reading in answers:
            mentions.append(mention)
            if mention.value is not None:
                readings[mention.value] = reading
    if stated is None and mentions:
        cut = _cut(text, min(m.start for m in mentions))
    mentions = [m for m in mentions if m.start < cut]
    if not mentions:
        if last_null is not None or stated:
            return (stated or [])[-1].reading  # only nulls: a format error, with its fields
        first = spans.first_dict()
        if first is not None:
            return first  # a dict without the answer key: a format error, with its fields
        return _bare(text, keys, choices)
    if last_null is not None and last_null.start > max(m.start for m in mentions):
        return last_null.reading  # a null stated last: no answer
    last_end = max(m.end for m in mentions)
    revised = _REVISED.search(fold(text), last_end, cut)
    if revised is not None and revised.start() not in _Regions(dict_regions):
        value = None  # revised after the last answer found, to something no reading sees
    else:
        value = committed(_masked(normalize(text), mentions), mentions)
    if value is None:
        last = (stated or [None])[-1]  # type: ignore[list-item]
        return Reading(last.reading.fields, None, None, last.reading.method) if last else NO_ANSWER
    return readings[value]


def _only_dicts(text: str, dicts: list[tuple[int, int]], cut: int) -> bool:
    """Whether the reply's own part (before `cut`) holds nothing but the dicts, code-fence
    marks and punctuation."""
    blank = _FENCE_MARK.sub(lambda m: " " * len(m.group()), text[:cut])
    position = 0
    for start, end in sorted(dicts):
        if start > position and _WORD.search(blank, position, min(start, cut)):
            return False
        position = max(position, end)
    return position >= cut or _WORD.search(blank, position, cut) is None


_WORD = re.compile(r"[^\W_]")


_REVISED = re.compile(
    r"(?:^|[.!?;:,]|\n)[ \t*_>-]*(?:actually|correction|corrected|i\s+meant|on\s+second\s+thoughts?|"
    r"let\s+me\s+correct|wait(?!\s*,?\s*no\b)|en\s+realidad|en\s+fait|eigentlich|na\s+verdade|in\s+realtà|"
    r"на\s+самом\s+деле|实际上|其实|実は|사실은)\b[^\n]*?\w",
    re.MULTILINE,
)
"""A marked self-correction ("Actually, ...", "I meant ...") with words after it: found
after the last answer a reply names, it revises that answer to something no reading sees
("Answer: Zinc. Actually, it is iron deficiency."): no answer."""


def _masked(text: str, mentions: list[Mention[str | None]]) -> str:
    """The text with each mention's own words blanked (one character for one): an option
    is read by its place and the words around it, never by its own words ("None of the
    above" denies nothing; a dict's explanation hedges nothing)."""
    chars = list(text)
    for mention in mentions:
        chars[mention.start : mention.end] = "x" * (mention.end - mention.start)
    return "".join(chars)


def _bare(text: str, keys: tuple[str, ...], choices: Choices) -> Reading:
    """A reply that is one line `<label in any language>: <answer>`, or (with the item's
    options) is an option and nothing else."""
    plain = normalize(_FENCE_MARK.sub(" ", text)).strip()
    if "\n" not in plain:
        line = _ANY_LABEL_LINE.fullmatch(plain)
        if line is not None:
            value = _answer_value(line.group(1))
            if value is not None and not _placeholder(value, choices):
                return _label_reading(keys, _value(value, choices, _names_an_option(value, choices)))
    resolved = _resolve(_clean(plain), choices, bare=True)
    return NO_ANSWER if resolved is None else _label_reading(keys, resolved)


# ------------------------------------------------------------------------------ authors

AUTHORS_READ_LIMIT = 65_536
"""The authors' regex is read on at most this many leading characters of a reply (their
code has no limit; longer replies exist only as runaway generations, and the bound keeps
scoring fast; the answer dict of a well-behaved reply comes first)."""

_VALUE_END = re.compile(r"""[,}]\s*+['"]*+""")
"""On the reversed text: a `[,}]` with the whitespace, then the quotes, before it."""
_COMMA_OR_BRACE = re.compile(r"[,}]")
_CLOSER = re.compile(r"""['"]\s*+:""")
_VALUE_START = re.compile(r"""\s*+['"]*+""")
_QUOTE = re.compile(r"""['"]""")


class _ValueEnds:
    """Where a value of the authors' regex can end: `['"]*\\s*[,}]` matches at e for every
    e from the start of the quotes-then-whitespace run before a `,` or `}` up to it. Asked
    in increasing order, so each stretch of text is scanned once."""

    def __init__(self, text: str) -> None:
        self.text, self.reverse = text, text[::-1]
        self.cached = (-1, -1, -1)  # (asked from, first end, match end)

    def first_from(self, index: int) -> tuple[int, int]:
        """(the first value end at or after `index`, the end of the match there), or
        (len(text), -1)."""
        asked, end, match_end = self.cached
        if asked <= index <= end:
            return max(index, end), match_end
        n = len(self.text)
        found = _COMMA_OR_BRACE.search(self.text, index)
        if found is None:
            self.cached = (index, n, -1)
            return n, -1
        comma = found.start()
        run = _VALUE_END.match(self.reverse, n - 1 - comma)
        run_start = n - run.end() if run else comma
        self.cached = (index, max(index, run_start), comma + 1)
        return self.cached[1:]


class _Positions:
    """Sorted positions in a text, with the first one at or after a given index."""

    def __init__(self, positions: list[int], past_end: int) -> None:
        self.positions = positions
        self.past_end = past_end

    def first_from(self, index: int) -> int:
        n = bisect.bisect_left(self.positions, index)
        return self.positions[n] if n < len(self.positions) else self.past_end


def authors_key_values(text: str) -> list[tuple[str, str]]:
    """`re.findall(r'''['"](.*?)['"]\\s*:\\s*['"]*(.*?)['"]*\\s*[,}]''', text)`, the
    regex of the authors' `parse_key_values` (evaluate.py, lines 27-31), computed from the
    positions of quotes, colons, commas and braces instead of by backtracking (which is
    cubic on hostile input, and slow on long replies).

    A value can end where `['"]*\\s*[,}]` matches (`_ValueEnds`). A quote at k can close a
    key when `\\s*:` follows and the value after it (past whitespace and quotes) reaches
    such an end before its line does. A match from an opening quote is then the first such
    closing quote on the same line, exactly as the lazy `(.*?)` finds it; the next match
    starts where it ended. Each step is a scan of the C regular-expression engine, and
    scans do not overlap: linear."""
    n = len(text)
    closers: list[int] = []
    closes: dict[int, tuple[int, int, int]] = {}
    ends: _ValueEnds | None = None
    newlines: _Positions | None = None
    for match in _CLOSER.finditer(text):
        if ends is None or newlines is None:
            ends = _ValueEnds(text)
            newlines = _Positions([m.start() for m in re.finditer("\n", text)], n)
        start = _VALUE_START.match(text, match.end()).end()  # type: ignore[union-attr]
        end, match_end = ends.first_from(start)
        if end <= newlines.first_from(start) and end < n:
            closers.append(match.start())
            closes[match.start()] = (start, end, match_end)
    if not closers or newlines is None:
        return []
    closer_at = _Positions(closers, n)
    pairs: list[tuple[str, str]] = []
    quote = _QUOTE.search(text)
    while quote is not None:
        p = quote.start()
        k = closer_at.first_from(p + 1)
        line_end = newlines.first_from(p + 1)
        if k < line_end:
            start, end, match_end = closes[k]
            pairs.append((text[p + 1 : k], text[start:end]))
            quote = _QUOTE.search(text, match_end)
        else:  # no closer on this line after p, so none after any later quote of it
            quote = _QUOTE.search(text, line_end + 1) if k < n else None
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
    return {
        name: read_medhal(reply, keys, choices) if name == "medhal" else reader(reply, keys)
        for name, reader in READERS.items()
    }
