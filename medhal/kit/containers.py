"""Answers in containers other than the one a prompt asks for: XML-like tags and nested or
function-call JSON (Markdown tables: `medhal.kit.tables`).

Models asked for a JSON dict or a digit also answer `<answer>…</answer>`, or call a function
(`{"name": "submit", "arguments": {…}}`, the arguments often a JSON string, as chat APIs
write them). These functions find the containers; what a container's content means is each
benchmark's reader's business.

Every function is linear in the length of the text: one regular-expression scan without
nested quantifiers, or one pass over lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

_TAG = re.compile(r"<(/?)[ \t]*([A-Za-z][\w.-]{0,40})(?:[ \t][^<>\n]{0,200})?>")


def tag_name(name: str) -> str:
    """A tag name as compared: lower case, `-` and `.` as `_` (`<Final-Answer>` is
    `final_answer`)."""
    return name.lower().replace("-", "_").replace(".", "_")


def tag_values(text: str, names: set[str] | frozenset[str]) -> list[tuple[int, int, str]]:
    """(start, end, content) of every element `<name …>content</name>` whose `tag_name` is
    in `names`, in order of their opening tags. An element holding another listed element
    gives way to it (`<answer><cop>X</cop></answer>` gives the `cop` element only). An
    opening tag never closed holds nothing."""
    open_tags: dict[str, list[tuple[int, int]]] = {}
    found: list[tuple[int, int, int, str]] = []
    for match in _TAG.finditer(text):
        name = tag_name(match.group(2))
        if name not in names:
            continue
        if not match.group(1):
            open_tags.setdefault(name, []).append((match.start(), match.end()))
        elif open_tags.get(name):
            start, inner = open_tags[name].pop()
            found.append((start, match.end(), inner, text[inner : match.start()]))
    found.sort()
    # A holder starts before and ends after the elements it holds: with the elements sorted
    # by start, it is enough to compare each with the next one.
    return [
        (start, end, content.strip())
        for n, (start, end, _, content) in enumerate(found)
        if not (n + 1 < len(found) and found[n + 1][0] < end)
    ]


ARGUMENT_KEYS = frozenset({"arguments", "args", "parameters", "params", "input", "function", "tool_input"})
"""Keys whose value a function call passes as a JSON string (`"arguments": "{\\"cop\\": 1}"`)."""


def inner_dicts(value: Any, depth: int = 6) -> Iterator[dict[Any, Any]]:
    """Every dict inside a parsed JSON value (not the value itself), outer ones first: in
    nested dicts and lists, and in the JSON-string values of `ARGUMENT_KEYS` (function
    calls). At most `depth` levels down."""
    if depth <= 0:
        return
    children: list[Any] = []
    if isinstance(value, dict):
        for key, child in value.items():
            if isinstance(child, str) and str(key).lower() in ARGUMENT_KEYS and child.lstrip()[:1] == "{":
                try:
                    children.append(json.loads(child))
                except (ValueError, RecursionError):
                    continue
            else:
                children.append(child)
    elif isinstance(value, list):
        children = list(value)
    for child in children:
        if isinstance(child, dict):
            yield child
    for child in children:
        if isinstance(child, (dict, list)):
            yield from inner_dicts(child, depth - 1)
