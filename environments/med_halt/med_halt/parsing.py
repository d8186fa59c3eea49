"""Reading the answer dict out of a model's reply, robustly and without eval.

Models answer Med-HALT prompts with a JSON object or a Python dict, and real replies go
wrong in known ways: the dict sits in a code fence or after a `<think>` block, spans
several lines, uses Python quoting with unescaped apostrophes ('it's'), is followed by
"Stop Here" and a made-up next example, or is cut off mid-value. The reply is read in
three passes over each `{...}` span, first span first (a model that goes on to invent
further examples writes its own answer first):

1. strict JSON;
2. a Python literal (`ast.literal_eval`, which evaluates no code);
3. a tolerant key-value reading that splits the span at its keys (quoted, or bare words
   after `{`, `,` or a line start), so apostrophes and cut-off values do not matter.

The first span that yields one of the expected keys wins; failing that, the first span
that parsed at all (a dict without the expected keys is a format error for the scorer);
failing that, a key-value reading of the whole reply (answers written without braces).
A reply whose `<think>` block never closes has no answer.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

JSON, PYTHON, KEY_VALUE = "json", "python", "key-value"

_FENCE = re.compile(r"```[A-Za-z0-9_-]*")
_KEY = re.compile(
    r"""(?:^|(?<=[{,\n]))[ \t]*(?:(?P<q>["'])(?P<qkey>[^"'\n{}]{1,60}?)(?P=q)|(?P<bkey>[A-Za-z_][\w ]{0,40}?))[ \t]*:""",
    re.MULTILINE,
)
_CURLY = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})


@dataclass(frozen=True)
class ParsedReply:
    fields: dict[str, Any] | None
    """The answer dict, or None when the reply holds nothing dict-like."""
    method: str | None
    """How it was read: `json`, `python`, `key-value`, or None."""


def answer_text(reply: str) -> str | None:
    """The part of a reply that can hold the answer: after the last `</think>`, without
    code-fence markers. None when a `<think>` block is left open (cut off while thinking)."""
    text = reply or ""
    if "</think>" in text:
        text = text.rsplit("</think>", 1)[1]
    elif "<think>" in text:
        return None
    return _FENCE.sub("", text)


def brace_spans(text: str) -> list[str]:
    """Top-level `{...}` spans in order; an unclosed last span runs to the end."""
    spans, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "{":
            if depth == 0:
                start = i
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                spans.append(text[start : i + 1])
    if depth:
        spans.append(text[start:])
    return spans


def _literal(span: str) -> tuple[dict | None, str | None]:
    try:
        value = json.loads(span)
        if isinstance(value, dict):
            return value, JSON
    except (json.JSONDecodeError, RecursionError):
        pass
    try:
        value = ast.literal_eval(span)
        if isinstance(value, dict):
            return value, PYTHON
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    return None, None


def _unquote(value: str) -> str:
    value = value.strip().rstrip(",").strip()
    if value[:1] in ("\"", "'"):
        quote = value[0]
        value = value[1:-1] if len(value) > 1 and value.endswith(quote) else value[1:]
    return value.strip()


def key_values(text: str) -> dict[str, str]:
    """Tolerant reading: the text between one key and the next is the first key's value."""
    text = text.translate(_CURLY).strip()
    if text.startswith("{"):
        text = text[1:]
    closing = text.rfind("}")
    keys = list(_KEY.finditer(text))
    fields: dict[str, str] = {}
    for n, match in enumerate(keys):
        end = keys[n + 1].start() if n + 1 < len(keys) else (closing if closing > match.end() else len(text))
        key = (match.group("qkey") or match.group("bkey")).strip()
        fields.setdefault(key, _unquote(text[match.end() : end]))
    return fields


def find_field(fields: dict[str, Any] | None, keys: tuple[str, ...]) -> tuple[str, Any] | None:
    """The first of `keys` present with a non-null value: exact key first, then ignoring
    case and surrounding whitespace."""
    if not fields:
        return None
    for key in keys:
        if fields.get(key) is not None:
            return key, fields[key]
    loose = {str(k).strip().lower(): k for k in fields}
    for key in keys:
        original = loose.get(key.lower())
        if original is not None and fields[original] is not None:
            return original, fields[original]
    return None


def parse_reply(reply: str, expected: tuple[str, ...]) -> ParsedReply:
    text = answer_text(reply)
    if text is None:
        return ParsedReply(None, None)
    spans = brace_spans(text)
    first: ParsedReply | None = None
    for span in spans:
        fields, method = _literal(span)
        if fields is None:
            continue
        if find_field(fields, expected):
            return ParsedReply(fields, method)
        first = first or ParsedReply(fields, method)
    for span in spans:
        fields = key_values(span)
        if find_field(fields, expected):
            return ParsedReply(fields, KEY_VALUE)
    if first is not None:
        return first
    fields = key_values(text)
    if find_field(fields, expected):
        return ParsedReply(fields, KEY_VALUE)
    return ParsedReply(None, None)
