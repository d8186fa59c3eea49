"""Untrusted text (model replies, dataset text that becomes a group value, model names, paths,
error messages that quote a file) made safe for a person to read: on a terminal, in
report.md and comparison.md, in report.html. One family of functions, used by every writer.

What can go wrong without them: an ESC or OSC sequence in a reply retitles the terminal or
clears the screen; a newline in an error message breaks a one-line message or a table row;
`<script>` or `![](http://...)` in a group value runs or fetches when report.md is rendered
by an ordinary Markdown renderer; a `|` adds table cells; a backtick closes a code span
early. Control characters are shown, not dropped, because they are part of what a reply
held and a reader looking for why a reply was unreadable needs to see them.
"""

from __future__ import annotations

import html
import re
from typing import Any

_CONTROL_CODES = [*range(0x09), 0x0B, 0x0C, *range(0x0D, 0x20), *range(0x7F, 0xA0)]
_INVISIBLE = [0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
"""Line and paragraph separators (they break lines like a newline) and bidirectional
overrides and isolates (they reorder what is shown, hiding what a text says)."""
_SHOWN = {
    **{c: f"\\x{c:02x}" for c in _CONTROL_CODES},
    **{c: f"\\u{c:04x}" for c in _INVISIBLE},
}
_SHOWN_ONE_LINE = {**_SHOWN, 0x09: "\\t", 0x0A: "\\n"}


def _finder(shown: dict[int, str]) -> re.Pattern[str]:
    """One character class of everything `shown` replaces, and lone surrogates: a clean text
    (nearly every one) is scanned once at the regex engine's speed (`str.translate` with a
    mapping looks every character up in a dict: most of a large report's time)."""
    return re.compile("[" + "".join(f"\\u{c:04x}" for c in sorted(shown)) + "\\ud800-\\udfff]")


_FIND = _finder(_SHOWN)
_FIND_ONE_LINE = _finder(_SHOWN_ONE_LINE)


def printable(text: str, *, one_line: bool = False) -> str:
    """`text` with every C0 and C1 control character (ESC, OSC, CR, DEL, ...), line separator
    and bidirectional override shown as a visible escape (`\\x1b`, `\\u202e`), and lone
    surrogates (JSON allows them, UTF-8 cannot encode them) as U+FFFD. Tab and newline are
    kept, unless `one_line`: then they are shown as `\\t` and `\\n` too."""
    shown = _SHOWN_ONE_LINE if one_line else _SHOWN
    return (_FIND_ONE_LINE if one_line else _FIND).sub(lambda m: shown.get(ord(m[0]), "\ufffd"), text)


def one_line(value: Any) -> str:
    """Any value as one printable line, for a terminal message or a log line."""
    return printable(str(value), one_line=True)


def html_text(value: Any) -> str:
    """Any value as printable text escaped for HTML (text or a quoted attribute)."""
    return html.escape(printable(str(value)), quote=True)


_MARKDOWN_CELL = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        "\\": "\\\\",
        "|": "\\|",
        "`": "\\`",
        "[": "\\[",
        "]": "\\]",
    }
)
"""Entities for what makes HTML (`<`, `>`, `&`); a backslash for what makes cells (`|`),
code spans, links and images (`[`, `]`), and for the backslash itself so that none of these
escapes can be undone by the text before it. Emphasis marks (`*`, `_`, `~`) stay: at worst
they slant a word, and escaping them would make every snake_case name unreadable in the
raw file."""


def markdown_text(value: Any) -> str:
    """Any value as literal Markdown inline text that stays inside one table cell: one line,
    no HTML, no link or image, no code span, no extra cell."""
    return printable(str(value), one_line=True).translate(_MARKDOWN_CELL)


_BACKTICKS = re.compile("`+")


def markdown_code(value: Any, *, in_table: bool = True) -> str:
    """Any value as a Markdown code span shown literally: fenced by a run of backticks longer
    than any inside it (padded with a space where it starts or ends with a backtick), on one
    line; in a table cell, `|` escaped as GitHub-flavoured Markdown requires even inside code."""
    text = printable(str(value), one_line=True)
    if not text:
        return "` `"
    if in_table:
        text = text.replace("|", "\\|")
    fence = "`" * (max((len(m) for m in _BACKTICKS.findall(text)), default=0) + 1)
    if text.startswith("`") or text.endswith("`") or (text.startswith(" ") and text.endswith(" ")):
        text = f" {text} "
    return f"{fence}{text}{fence}"
