"""Untrusted text on its way to a person (part of the bad-input suite): replies, dataset text
that becomes a group value (MedHallu categories), model names and error messages go through
report.md, comparison.md and what `medhal report` prints without running, fetching,
breaking a table or driving the terminal.

report.md is checked as an ordinary Markdown renderer shows it (markdown-it-py, CommonMark
with GitHub's tables, raw HTML allowed as CommonMark allows it): that renderer runs
`<script>` and fetches `![](url)` when they arrive raw, as the hostile run found."""

from __future__ import annotations

import json
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from medhal.kit.untrusted import markdown_code, markdown_text, one_line, printable
from tests.medhallu.fixtures import our_row
from tests.medhallu.test_report import medhal_score
from tests.properties import examples
from tests.running import medhal_main
from tests.tables import write_jsonl

SCRIPT = "<script>alert(1)</script>"
IMAGE = "![t](http://evil.example/t.png)"
TAG = '<img src="http://evil.example/p.png">'
OSC_TITLE = "\x1b]0;pwned\x07"
CLEAR = "\x1b[2J\x1b[H"
C1_CSI = "\x9b2J"
PIPES = "a | b || c \\| d"
NEWLINES = "line one\nline two\r\nline three"
BACKTICKS = "``` `x` ``"
BIDI = "\u202eevil"
MATHTEXT = "$\\mathcal{Q$"
"""matplotlib reads `$...$` as mathtext: this one is not even valid mathtext."""
PAYLOADS = [
    SCRIPT,
    IMAGE,
    TAG,
    OSC_TITLE,
    CLEAR,
    C1_CSI,
    PIPES,
    NEWLINES,
    BACKTICKS,
    BIDI,
    "&amp; & <b>",
    MATHTEXT,
]
HOSTILE = " ".join(PAYLOADS)
"""Every payload in one string: a reply, a category, a model name, an error message."""

TERMINAL_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""What must never reach a terminal raw (tab and newline aside): C0, DEL, C1, line
separators, bidirectional overrides."""

RENDERER = MarkdownIt("commonmark").enable("table")
ALLOWED_TAGS = {
    "h2", "h3", "p", "code", "pre", "table", "thead", "tbody", "tr", "th", "td",
    "ul", "li", "blockquote", "strong", "br",
}  # fmt: skip
"""Every tag our Markdown makes; anything else came from the data."""


class Tags(HTMLParser):
    """The tags of rendered HTML, and the text of each table row's cells."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def rendered(markdown: str) -> Tags:
    """`markdown` rendered and parsed; fails when a tag came from the data or a table row
    has more or fewer cells than its header."""
    tags = Tags(RENDERER.render(markdown))
    assert tags.tags <= ALLOWED_TAGS, tags.tags - ALLOWED_TAGS
    return tags


def tables_are_whole(markdown: str) -> None:
    """Every table of `markdown` keeps its shape: as many cells in each row as in its header."""
    block: list[str] = []
    for line in [*markdown.splitlines(), ""]:
        if line.startswith("|"):
            block.append(line)
            continue
        if block:
            rows = rendered("\n".join(block)).rows
            assert rows and all(len(r) == len(rows[0]) for r in rows), block
            block = []


def terminal_safe(text: str) -> None:
    found = TERMINAL_UNSAFE.findall(text)
    assert not found, sorted(set(found))


# ------------------------------------------------------------------------ the functions


@pytest.mark.parametrize("payload", [*PAYLOADS, HOSTILE])
def test_a_markdown_cell_shows_the_text_and_nothing_else(payload):
    tags = rendered(f"| h |\n|---|\n| {markdown_text(payload)} |\n")
    assert tags.tags == {"table", "thead", "tbody", "tr", "th", "td"}
    assert tags.rows[1] == [one_line(payload)]


@pytest.mark.parametrize("payload", [*PAYLOADS, HOSTILE, "`", "x`", " `` ", ""])
def test_a_code_span_shows_the_text_and_nothing_else(payload):
    tags = rendered(f"| h |\n|---|\n| {markdown_code(payload)} |\n")
    assert tags.tags == {"table", "thead", "tbody", "tr", "th", "td", "code"}
    assert tags.rows[1] == [one_line(payload) or " "]
    outside = rendered(f"Source: {markdown_code(payload, in_table=False)}\n")
    assert outside.tags == {"p", "code"}


def test_printable_shows_control_characters():
    assert printable(OSC_TITLE) == "\\x1b]0;pwned\\x07"
    assert printable(C1_CSI + BIDI) == "\\x9b2J\\u202eevil"
    assert printable("tab\tnew\nline\r") == "tab\tnew\nline\\x0d"
    assert one_line("tab\tnew\nline") == "tab\\tnew\\nline"
    assert printable("half \ud800") == "half \ufffd"


# ------------------------------------------------------------------------ through the commands


@pytest.fixture(scope="module")
def hostile_runs(shared_data, tmp_path_factory) -> tuple[Path, Path, subprocess.CompletedProcess]:
    """Two MedHallu runs scored offline: categories, replies, the model name and one error
    message carry every payload."""
    tmp = tmp_path_factory.mktemp("hostile")
    rows = [our_row(0, "easy", HOSTILE), our_row(1, "hard", "Plain | category"), our_row(2, "hard", SCRIPT)]
    dataset = write_jsonl(tmp / "pqa_labeled.jsonl", rows)
    replies = {0: HOSTILE, 1: SCRIPT + IMAGE, 2: OSC_TITLE + CLEAR, 3: "1", 4: NEWLINES}
    runs = []
    for name in ("first", "second"):
        out = tmp / name
        proc = medhal_score(shared_data, dataset, replies, out, "--no-plots", "--model", HOSTILE + name)
        assert proc.returncode == 0, proc.stderr[-3000:]
        terminal_safe(proc.stdout + proc.stderr)
        traces = out / "traces.jsonl"
        lines = [json.loads(line) for line in traces.read_text(encoding="utf-8").splitlines()]
        for line in lines:
            if line["errors"]:  # idx 5: no prediction; its message made hostile
                line["errors"][0]["message"] = HOSTILE
        traces.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        runs.append(out)
    proc = medhal_main(
        "report", str(runs[0]), str(runs[1]), "-o", str(tmp / "cmp"), "--no-plots", "--max-error-rate", "1"
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return tmp / "cmp", runs[0], proc


def test_report_md_renders_no_payload(hostile_runs):
    out, _, _ = hostile_runs
    markdown = (out / "run1" / "report.md").read_text(encoding="utf-8")
    tags = rendered(markdown)
    tables_are_whole(markdown)
    terminal_safe(markdown)
    cells = {cell for row in tags.rows for cell in row}
    assert one_line(HOSTILE) in cells  # the category's group row
    assert any(one_line(HOSTILE) in cell for cell in cells)  # the unreadable reply
    assert any(cell.startswith("MissingPrediction: <script>alert(#)</script> ![t]") for cell in cells)


def test_comparison_md_renders_no_payload(hostile_runs):
    out, _, _ = hostile_runs
    markdown = (out / "comparison.md").read_text(encoding="utf-8")
    tags = rendered(markdown)
    tables_are_whole(markdown)
    terminal_safe(markdown)
    models = [row[1] for row in tags.rows[1:]]
    assert models == [one_line(HOSTILE + "first"), one_line(HOSTILE + "second")]


def test_what_medhal_report_prints_is_terminal_safe(hostile_runs):
    _, _, proc = hostile_runs
    terminal_safe(proc.stdout + proc.stderr)
    assert "\\x1b]0;pwned\\x07" in proc.stdout  # shown, not sent


def test_a_failing_gate_prints_error_messages_on_one_line_each(hostile_runs):
    _, run, _ = hostile_runs
    proc = medhal_main("report", str(run), "--no-plots", "--max-error-rate", "0")
    assert proc.returncode == 1
    terminal_safe(proc.stderr)
    error_lines = [line for line in proc.stderr.splitlines() if "MissingPrediction" in line]
    assert len(error_lines) == 1 and "line two" in error_lines[0]


def test_an_error_message_quoting_the_file_is_one_terminal_safe_line(tmp_path):
    traces = tmp_path / "traces.jsonl"
    traces.write_text('{"task": 1}\n' + HOSTILE + "\n", encoding="utf-8")
    proc = medhal_main("report", str(traces), "--no-plots", "--env", "medhallu")
    assert proc.returncode == 2
    terminal_safe(proc.stderr)
    assert len(proc.stderr.strip().splitlines()) == 1


def test_plots_draw_every_label_literally(hostile_runs, tmp_path):
    """A group value holding `$\\mathcal{Q$` stopped the whole report (matplotlib's mathtext)."""
    _, run, _ = hostile_runs
    proc = medhal_main("report", str(run), "-o", str(tmp_path), "--max-error-rate", "1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "by_category.png").read_bytes().startswith(b"\x89PNG")
    assert (tmp_path / "confusion.png").read_bytes().startswith(b"\x89PNG")


def test_a_mathtext_group_value_alone_is_drawn(tmp_path):
    from medhal.reports.plots import render_plots

    report = {
        "benchmark": "b",
        "convention": "medhal",
        "n": 2,
        "micro_accuracy": 0.5,
        "groups": {"category": {MATHTEXT: {"n": 1, "accuracy": 1.0}, "$x^2$": {"n": 1, "accuracy": 0.0}}},
        "confusion": {MATHTEXT: {"$\\frac{": 1}},
    }
    assert set(render_plots(report)) == {"confusion.png", "by_category.png"}


def test_figure_names_render_as_a_name_and_a_code_span():
    """A figure's reader name and its code name in report.md: the code name is a code span
    in the rendered table, not backticks shown as text; a hostile label stays text."""
    from medhal.reports.markdown import label, table

    report = {"figure_labels": {"macro_accuracy": "accuracy, mean over test_set", "f1": HOSTILE}}
    rendered = RENDERER.render(
        "\n".join(
            table(["figure", "value"], [[label(report, "macro_accuracy"), 0.5], [label(report, "f1"), 1.0]])
        )
    )
    assert "<td>accuracy, mean over test_set (<code>macro_accuracy</code>)</td>" in rendered
    assert "\\`" not in rendered and "<script>" not in rendered and "<img" not in rendered
    assert rendered.count("<tr>") == 3 and rendered.count("<td>") == 4
    assert label({}, "parse_rate") == "parse_rate"


_ALPHABET = st.sampled_from(
    [chr(c) for c in (*range(0xA2), 0x2027, *range(0x2028, 0x2030), *range(0x2065, 0x206B), 0xFFFD)]
    + ["\ud800", "\udbff", "\udc00", "\udfff", "é", "字", "\U0001f600"]
)


@settings(max_examples=examples(500), derandomize=True, database=None, deadline=None)
@given(st.text(_ALPHABET, max_size=60), st.booleans())
def test_printable_replaces_each_character_on_its_own(text, one_line_flag):
    """Character by character: a control character, separator or bidi mark becomes its
    visible escape, a lone surrogate U+FFFD, everything else stays (one regex pass does it)."""
    from medhal.kit.untrusted import _SHOWN, _SHOWN_ONE_LINE

    shown = _SHOWN_ONE_LINE if one_line_flag else _SHOWN
    expected = "".join(shown.get(ord(c), "\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c) for c in text)
    assert printable(text, one_line=one_line_flag) == expected
