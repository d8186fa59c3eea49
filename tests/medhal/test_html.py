"""report.html and comparison.html, read back with a parser: every table with its headers
and rows (figures counted by hand), every plot embedded as a PNG, nothing that points
outside the page, untrusted reply text shown as text, and (where Chromium is installed)
the page loaded in a real browser without a single console message.

Reports are built through the library from trace files written here by hand, on a toy
benchmark defined here, as tests/medhal/test_report.py does."""

from __future__ import annotations

import base64
import io
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import NamedTuple

import pytest

from medhal.kit.published import Published
from medhal.kit.report_spec import Columns, ItemView, ReportSpec
from medhal.reports.compare import compare_runs
from medhal.reports.html import ITEM_VIEW_SCRIPT, comparison_html, report_html, script_hash
from medhal.reports.markdown import comparison_markdown, to_markdown
from medhal.reports.report import build_report, read_run
from medhal.reports.report_files import render
from tests.conftest import BIN
from tests.medfact_bench.fixtures import score_demo

# ---------------------------------------------------------------------- a parsed page

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str | None]
    children: list[Node | str] = field(default_factory=list)

    def text(self) -> str:
        """Text content, whitespace collapsed; <br> reads as a space."""
        parts: list[str] = []

        def walk(node: Node) -> None:
            for child in node.children:
                if isinstance(child, str):
                    parts.append(child)
                elif child.tag == "br":
                    parts.append(" ")
                else:
                    walk(child)

        walk(self)
        return " ".join("".join(parts).split())

    def all(self, tag: str | None = None, **attrs: str) -> list[Node]:
        found = []
        for child in self.children:
            if isinstance(child, Node):
                if (tag is None or child.tag == tag) and all(
                    child.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items()
                ):
                    found.append(child)
                found += child.all(tag, **attrs)
        return found

    def one(self, tag: str | None = None, **attrs: str) -> Node:
        found = self.all(tag, **attrs)
        assert len(found) == 1, f"{len(found)} <{tag} {attrs}>"
        return found[0]

    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())


class Page(HTMLParser):
    """The page as a tree; unbalanced tags are recorded (the page must have none)."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]
        self.unbalanced: list[str] = []
        self.doctype: list[str] = []
        self.comments: list[str] = []
        self.feed(html)
        self.close()
        if len(self.stack) != 1:
            self.unbalanced += [f"unclosed <{n.tag}>" for n in self.stack[1:]]

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag, attrs):
        self.stack[-1].children.append(Node(tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if self.stack[-1].tag != tag:
            self.unbalanced.append(f"</{tag}> closes <{self.stack[-1].tag}>")
            return
        self.stack.pop()

    def handle_data(self, data):
        self.stack[-1].children.append(data)

    def handle_decl(self, decl):
        self.doctype.append(decl)

    def handle_comment(self, data):
        self.comments.append(data)


def parse(html: str) -> Node:
    page = Page(html)
    assert not page.unbalanced, page.unbalanced
    assert page.doctype == ["DOCTYPE html"]
    return page.root


def a_table(root: Node, name: str) -> tuple[list[str], list[list[str]], Node]:
    """(header texts, row texts, the <table>) of the table named `name` (data-table)."""
    node = root.one("table", data_table=name)
    header = [th.text() for th in node.one("thead").all("th")]
    rows = [
        [cell.text() for cell in tr.children if isinstance(cell, Node)] for tr in node.one("tbody").all("tr")
    ]
    assert all(len(row) == len(header) for row in rows), (header, rows)
    return header, rows, node


def first_number(cell: str) -> str:
    """A figure cell reads 'value [lo, hi]': the value."""
    return cell.split(maxsplit=1)[0]


def interval_of(cell: str) -> tuple[float, float]:
    lo, hi = re.search(r"\[(-?[\d.]+), (-?[\d.]+)\]", cell).groups()
    return float(lo), float(hi)


# Attributes that make a browser fetch or navigate somewhere.
URL_ATTRIBUTES = {
    "src",
    "href",
    "action",
    "formaction",
    "poster",
    "background",
    "srcset",
    "data",
    "xlink:href",
    "manifest",
    "ping",
    "cite",
    "longdesc",
    "codebase",
    "archive",
    "lowsrc",
    "dynsrc",
    "imagesrcset",
}
FORBIDDEN_TAGS = {
    "script",
    "link",
    "iframe",
    "frame",
    "object",
    "embed",
    "base",
    "form",
    "applet",
    "audio",
    "video",
    "source",
    "svg",
    "math",
}


BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def allowed_script(root: Node, node: Node) -> bool:
    """The two kinds of <script> a report may hold: the item view's data blocks (a type the
    browser never runs, base64 text only) and inline scripts whose hash the page's
    Content-Security-Policy lists (the only ones it lets run)."""
    text = "".join(c for c in node.children if isinstance(c, str))
    if node.attrs.get("type") == "application/octet-stream":
        return set(node.attrs) <= {"type", "data-items-part", "data-chunk"} and bool(BASE64.fullmatch(text))
    csp = [
        m.attrs.get("content") or ""
        for m in root.all("meta")
        if m.attrs.get("http-equiv") == "Content-Security-Policy"
    ]
    return not node.attrs and len(csp) == 1 and script_hash(text) in csp[0].split("script-src", 1)[-1]


def outside_references(root: Node) -> list[str]:
    """Everything in the page that could load or run something from outside it: URL
    attributes other than an embedded PNG or a link within the page, event handlers, tags
    that fetch or script (but the scripts `allowed_script` admits), a meta refresh, and CSS
    url(...)/@import in <style> or style attributes."""
    found = []
    for node in root.all():
        if node.tag == "script" and allowed_script(root, node):
            continue
        if node.tag in FORBIDDEN_TAGS:
            found.append(f"<{node.tag}>")
        if node.tag == "meta" and (node.attrs.get("http-equiv") or "").lower() == "refresh":
            found.append("meta refresh")
        for name, value in node.attrs.items():
            if name.startswith("on"):
                found.append(f"{node.tag}[{name}]")
            if name in URL_ATTRIBUTES and not (
                (node.tag == "img" and name == "src" and (value or "").startswith("data:image/png;base64,"))
                or (
                    node.tag == "a"
                    and name == "href"
                    and re.fullmatch(r"#[\w-]+|[\w-]+/report\.html", value or "")
                )
            ):
                found.append(f"{node.tag}[{name}={value!r}]")
            if name == "style" and re.search(r"url\s*\(|@import|expression\s*\(", value or "", re.I):
                found.append(f"{node.tag}[style]")
        if node.tag == "style":
            css = node.text()
            if re.search(r"url\s*\(|@import|@font-face", css, re.I):
                found.append("<style> with url(, @import or @font-face")
    return found


def test_the_reference_check_finds_references():
    """The check below must be able to fail: a page with every kind of outside reference."""
    hostile = (
        '<!DOCTYPE html><html><head><link rel="stylesheet" href="https://cdn.example/x.css">'
        "<style>@import 'x.css'; body{background:url(https://example.com/a.png)}</style></head><body>"
        '<img src="https://example.com/p.png"><img src="data:image/png;base64,AAAA" onerror="alert(1)">'
        '<a href="https://example.com/">x</a><a href="../report.html">up</a>'
        '<p style="background:url(x.png)">x</p><script>1</script></body></html>'
    )
    found = outside_references(parse(hostile))
    for expected in (
        "<link>",
        "<script>",
        "img[onerror]",
        "a[href='https://example.com/']",
        "a[href='../report.html']",
        "p[style]",
        "img[src='https://example.com/p.png']",
        "<style> with url(, @import or @font-face",
    ):
        assert expected in found, found


# ------------------------------------------------------------------ a toy benchmark


class Counts(NamedTuple):
    said_yes: float


def toy_counts(item: ItemView) -> Counts:
    return Counts(said_yes=float(item.pred == "yes"))


COLUMNS = Columns(Counts)


BOLD = "<b>bold</b> & co"
"""A group value with markup in it: a field's values come from the data, untrusted."""

TOY = ReportSpec(
    benchmark="toy",
    title="Toy <benchmark>",
    columns=COLUMNS,
    item_counts=toy_counts,
    statistics={"yes_rate": COLUMNS.ratio("said_yes", "n")},
    headline=("accuracy", "yes_rate"),
    group_fields=("part", "topic"),
    macro_field="part",
    macro_groups=("a", "b"),
    cluster_field="src",
    gold_field="gold",
    classes=("yes", "no"),
    full_size=5,
    notes=("A note with <i>markup</i> & an ampersand.",),
    published=(
        Published("Paper model", (), "accuracy", "a", 1.0, "Toy paper, Table 2"),
        Published("Paper model", (), "accuracy", "b", 0.1, "Toy paper, Table 2"),
    ),
    group_sizes={"a": 3, "b": 2},  # complete groups: their published figures are comparable
    figure_labels={"yes_rate": "said <yes>"},  # shown as text
)

PROVENANCE = {"dataset": "toy", "options": {"parser": "medhal"}, "code": {"environment_version": "1.0"}}


def selection(n_expected: int) -> dict:
    return {
        "n_expected": n_expected,
        "contiguous": True,
        "num_tasks": None,
        "shuffle": False,
        "idx_sha256": "x",
    }


def trace(
    idx: int,
    part: str,
    gold: str,
    readings: dict,
    correct: dict,
    *,
    topic: str = "plain",
    reply: str = "r",
    error: str | None = None,
    src: str | None = None,
    n_expected: int = 5,
    provenance: dict = PROVENANCE,
    model: str = "toy-model",
) -> dict:
    """A verifiers trace line as eval writes it, reduced to what reports read."""
    metrics = {}
    for convention in ("medhal", "authors", "strict"):
        metrics[f"correct_{convention}"] = float(correct[convention])
        metrics[f"parsed_{convention}"] = float(readings[convention] is not None)
    return {
        "task": {
            "type": "ToyTask",
            "data": {
                "idx": idx,
                "benchmark": "toy",
                "part": part,
                "topic": topic,
                "gold": gold,
                "src": src or f"s{idx}",
                "parser": "medhal",
                "selection": selection(n_expected),
                "provenance": provenance,
                "prompt": "q",
            },
        },
        "nodes": [] if error else [{"message": {"role": "assistant", "content": reply}, "sampled": True}],
        "metrics": {} if error else metrics,
        "rewards": {},
        "info": {} if error else {"readings": readings},
        "errors": [{"type": "ProviderError", "message": error}] if error else [],
        "agent": {"model": model, "sampling": {"temperature": 0.0}},
    }


def same(value) -> dict:
    return {"medhal": value, "authors": value, "strict": value}


# Complete and paper-comparable. medhal right: 0, 1, 3; authors right: 0, 1, 2; strict right: 0, 1, 3.
CLEAN = [
    trace(0, "a", "yes", same("yes"), same(1), topic=BOLD, src="q1"),
    trace(1, "a", "no", same("no"), same(1), src="q1"),
    trace(
        2,
        "a",
        "yes",
        {"medhal": "no", "authors": "yes", "strict": None},
        {"medhal": 0, "authors": 1, "strict": 0},
    ),
    trace(
        3,
        "b",
        "no",
        {"medhal": "no", "authors": "yes", "strict": "no"},
        {"medhal": 1, "authors": 0, "strict": 1},
        topic=BOLD,
    ),
    trace(4, "b", "yes", {"medhal": None, "authors": "no", "strict": None}, same(0), reply="I cannot tell"),
]

SCRIPT = "<script>alert(1)</script>"
CONTROL = "\x1b[31mred\x7f"
"""A terminal escape sequence and a DEL: control characters HTML has no business showing raw."""
DEMO = {**PROVENANCE, "prompts": {"written_by": "medhal demo"}}


def demo_trace(idx: int, part: str, gold: str, **kwargs) -> dict:
    """A trace of a demo run of 6 tasks that read nothing, by a model with markup in its name."""
    return trace(
        idx, part, gold, same(None), same(0), n_expected=6, provenance=DEMO, model="<em>m</em>", **kwargs
    )


# Demo prompts, 2 of 6 tasks missing (4, 5), idx 2 twice, idx 3 errored with markup in the
# message, replies with markup and control characters, a model name with markup.
MESSY = [
    trace(0, "a", "yes", same("yes"), same(1), n_expected=6, provenance=DEMO, model="<em>m</em>"),
    demo_trace(1, "a", "no", reply=SCRIPT),
    demo_trace(2, "a", "yes", reply=CONTROL),
    demo_trace(2, "a", "yes", reply=CONTROL),
    demo_trace(3, "b", "no", error="<img src=x onerror=alert(1)> upstream 502"),
]


def write_traces(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def toy_report(tmp_path: Path, rows: list[dict], name: str = "run") -> dict:
    report = build_report(read_run(write_traces(tmp_path / name / "traces.jsonl", rows), TOY))
    report["headline"] = list(TOY.headline)
    return report


@pytest.fixture
def clean(tmp_path) -> dict:
    return toy_report(tmp_path, CLEAN)


@pytest.fixture
def messy(tmp_path) -> dict:
    return toy_report(tmp_path, MESSY)


# ------------------------------------------------------------------------ one report


def test_tables_have_their_headers_and_hand_counted_rows(clean):
    root = parse(report_html(clean, {}))

    header, rows, _ = a_table(root, "summary")
    assert header == ["figure", "value"]
    assert [r[0] for r in rows] == [
        "accuracy (95% CI)",  # the toy's headline: it declares none, so accuracy
        "n",
        "errored rollouts",
        "reading convention of the run",
        "micro accuracy (95% CI)",
        "parse rate",
        "macro accuracy over part (95% CI)",
        "paper-comparable (complete set, no errors)",
    ]
    # n 5; medhal right 0, 1, 3 -> 3/5; read 0-3 -> 4/5; macro (2/3 + 1/2) / 2 = 7/12 = 0.583
    assert [first_number(r[1]) for r in rows] == [
        "0.600",
        "5",
        "0",
        "medhal",
        "0.600",
        "0.800",
        "0.583",
        "yes",
    ]

    header, rows, table = a_table(root, "headline")
    assert header == ["figure", "medhal this run's reading", "authors", "strict"]
    assert [r[0] for r in rows] == [  # the headline (accuracy) first, then the macro figures
        "accuracy",
        "accuracy, mean over part macro_accuracy",
        "said <yes> yes_rate",
    ]
    assert [c.text() for c in table.one("tbody").all("code")] == ["macro_accuracy", "yes_rate"]
    # accuracy: 3/5 under all three; macro: medhal a 2/3, b 1/2 -> 0.583; authors a 3/3, b 0/2
    # -> 0.500; strict as medhal -> 0.583; yes_rate: medhal {0} 1/5, authors {0, 2, 3} 3/5, strict {0} 1/5
    assert [[first_number(c) for c in r[1:]] for r in rows] == [
        ["0.600", "0.600", "0.600"],
        ["0.583", "0.500", "0.583"],
        ["0.200", "0.600", "0.200"],
    ]
    assert all(re.fullmatch(r"[\d.]+ \[[\d.]+, [\d.]+\]", c) for r in rows for c in r[1:]), rows
    assert all("own" in tr.all("td")[1].classes() for tr in table.one("tbody").all("tr"))

    header, rows, _ = a_table(root, "group:part")
    assert header == [
        "part",
        "n",
        "accuracy (95% CI)",
        "failed rollouts (count) n_errors",
        "replies read parse_rate",
        "failed rollouts error_rate",
        "said <yes> yes_rate",
    ]
    # a: items 0, 1, 2: right 2, read 3, yes 1 (item 0); b: items 3, 4: right 1, read 1, yes 0; no errors
    assert [[r[0], r[1], first_number(r[2]), *r[3:]] for r in rows] == [
        ["a", "3", "0.667", "0", "1.000", "0.000", "0.333"],
        ["b", "2", "0.500", "0", "0.500", "0.000", "0.000"],
    ]
    header, rows, _ = a_table(root, "group:topic")
    # BOLD: items 0, 3, both right; plain: items 1, 2, 4, one right. The value is text.
    assert [[r[0], r[1], first_number(r[2])] for r in rows] == [[BOLD, "2", "1.000"], ["plain", "3", "0.333"]]

    header, rows, _ = a_table(root, "classes")
    assert header == ["class", "precision", "recall", "f1", "support"]
    # yes: tp 1 of 1 predicted, 3 gold -> P 1, R 1/3, F1 0.5
    # no: tp 2 of 3 predicted, 2 gold -> P 2/3, R 1, F1 0.8
    assert rows == [["yes", "1.000", "0.333", "0.500", "3"], ["no", "0.667", "1.000", "0.800", "2"]]

    header, rows, table = a_table(root, "confusion")
    assert header == ["gold \\ predicted", "yes", "no", "INVALID", "ERROR"]
    # gold yes: 0 -> yes, 2 -> no, 4 -> INVALID; gold no: 1 -> no, 3 -> no
    assert rows == [["yes", "1", "1", "1", "0"], ["no", "0", "2", "0", "0"]]
    diagonal = [
        (r, c)
        for r, tr in enumerate(table.one("tbody").all("tr"))
        for c, td in enumerate(tr.all("td"))
        if "diag" in td.classes()
    ]
    assert diagonal == [(0, 1), (1, 2)]

    header, rows, _ = a_table(root, "unreadable")
    assert header == ["count", "reply (first 120 characters, whitespace collapsed)", "e.g. idx"]
    assert rows == [["1", "I cannot tell", "4"]]
    assert root.one("section", id="errors").text().endswith("None.")
    assert root.one("section", id="notes").all("li")[0].text() == "A note with <i>markup</i> & an ampersand."


def test_published_figures_are_marked_inside_or_outside_the_runs_interval(clean):
    header, rows, _ = a_table(parse(report_html(clean, {})), "published")
    assert header == [
        "kind",
        "model",
        "statistic",
        "group",
        "reading",
        "published",
        "this run (95% CI)",
        "agrees",
        "source",
    ]
    # authors' reading: part a right 3 of 3 -> 1.000 [1.000, 1.000], contains 1.0;
    # part b right 0 of 2 -> 0.000 [0.000, 0.000], excludes 0.1
    assert rows == [
        [
            "paper",
            "Paper model",
            "accuracy",
            "a",
            "authors",
            "1.000",
            "1.000 [1.000, 1.000]",
            "✓ inside",
            "Toy paper, Table 2",
        ],
        [
            "paper",
            "Paper model",
            "accuracy",
            "b",
            "authors",
            "0.100",
            "0.000 [0.000, 0.000]",
            "✗ outside",
            "Toy paper, Table 2",
        ],
    ]


def test_sections_follow_report_md(clean):
    """The page's sections come in report.md's order (the page adds a Summary heading and
    always shows the unreadable and error sections)."""
    root = parse(report_html(clean, {}))
    ids = [s.attrs.get("id") for s in root.all("section")]
    assert ids == [
        "summary",
        "headline",
        "published",
        "group-part",
        "group-topic",
        "classes",
        "confusion",
        "unreadable",
        "errors",
        "notes",
        None,
    ]  # None: the printed copy of the provenance
    headings = [h.text() for h in root.all("h2")]
    md_headings = [
        line[4:] for line in to_markdown(clean, clean["headline"]).splitlines() if line.startswith("### ")
    ]
    assert [" ".join(h.split()[:2]) for h in md_headings] == [
        "Headline figures",
        "Published figures",
        "By part",
        "By topic",
        "Per class",
        "Confusion (rows:",
        "Unreadable replies",
        "Provenance",
    ]
    positions = []
    for heading in md_headings:
        words = " ".join(heading.split()[:2])
        matches = [i for i, h in enumerate(headings) if h.startswith(words)]
        assert matches, (heading, headings)
        positions.append(matches[0])
    assert positions == sorted(positions), (md_headings, headings)


def test_plots_are_embedded_pngs_beside_their_tables(clean):
    """Through the real pipeline (medhal.reports.report_files.render): each plot file also sits in
    the page, byte for byte, under the table it illustrates."""
    from PIL import Image

    files = render(clean)
    images = {name: data for name, data in files.items() if name.endswith(".png")}
    assert set(images) == {"confusion.png", "by_part.png", "by_topic.png"}
    root = parse(files["report.html"])
    assert len(root.all("img")) == 3
    where = {"by_part.png": "group-part", "by_topic.png": "group-topic", "confusion.png": "confusion"}
    for name, section_id in where.items():
        img = root.one("section", id=section_id).one("figure", data_plot=name).one("img")
        prefix = "data:image/png;base64,"
        assert img.attrs["src"].startswith(prefix) and img.attrs["alt"]
        data = base64.b64decode(img.attrs["src"][len(prefix) :], validate=True)
        assert data == images[name] and data.startswith(b"\x89PNG\r\n\x1a\n")
        with Image.open(io.BytesIO(data)) as png:
            png.verify()
            assert png.format == "PNG" and png.size[0] > 100 and png.size[1] > 100
    assert outside_references(root) == []


def test_other_plots_and_no_plots(clean):
    png = render(clean)["confusion.png"]
    root = parse(report_html(clean, {"extra.png": png}))
    assert root.one("section", id="plots").one("figure", data_plot="extra.png")
    bare = parse(report_html(clean, {}))
    assert bare.all("img") == [] and not [s for s in bare.all("section") if s.attrs.get("id") == "plots"]
    with pytest.raises(ValueError, match=r"'fake\.png' is not a PNG"):
        report_html(clean, {"fake.png": b"<svg onload=alert(1)>"})


def test_nothing_points_outside_the_page(clean, messy):
    for report in (clean, messy):
        images = {name: data for name, data in render(report).items() if name.endswith(".png")}
        root = parse(report_html(report, images))
        assert outside_references(root) == []
        policy = root.one("meta", http_equiv="Content-Security-Policy").attrs["content"]
        assert "default-src 'none'" in policy and "img-src data:" in policy
        assert root.all("a") == [] and root.all("script") == []


def test_banners_for_an_incomplete_demo_run(messy):
    root = parse(report_html(messy, {}))
    body = root.one("body")
    banners = {node.attrs["data-banner"]: node for node in body.all() if "data-banner" in node.attrs}
    assert set(banners) == {"demo-prompts", "incomplete", "errors"}
    assert "alert" in banners["demo-prompts"].classes() and "alert" in banners["incomplete"].classes()
    assert banners["demo-prompts"].text().startswith("Demo prompts.")
    # idx 0, 1, 2, 2, 3 of 6: 4 and 5 missing, one repeat
    assert [li.text() for li in banners["incomplete"].all("li")] == [
        "2 of 6 tasks have no trace (first: 4, 5)",
        "the task ids present are not the ones the run selected (their hash differs)",
        "1 trace repeats the same trace of a task (same task id, same trace id: duplicated lines?)",
    ]
    assert banners["errors"].text().startswith("1 of 5 rollouts failed (20.0%)")
    # every banner comes before the first figure
    order = [n for n in body.all() if "data-banner" in n.attrs or n.tag == "h2"]
    assert [n.tag for n in order[:3]] == ["div", "div", "p"] and order[3].tag == "h2"
    assert "published" not in [s.attrs.get("id") for s in root.all("section")]  # not paper-comparable


def test_a_complete_run_has_only_the_complete_line(clean):
    root = parse(report_html(clean, {}))
    banners = [n for n in root.all() if "data-banner" in n.attrs]
    assert [(b.attrs["data-banner"], b.text()) for b in banners] == [
        ("complete", "Complete: 5 of 5 tasks, each once, one provenance.")
    ]


def test_untrusted_text_is_shown_as_text(messy):
    html = report_html(messy, {})
    root = parse(html)
    assert "<script" not in html.lower() and "<img" not in html.lower()  # no plots given: no <img> at all
    assert root.all("script") == [] and root.all("img") == [] and root.all("em") == []
    _, rows, _ = a_table(root, "unreadable")
    # idx 2 twice (shown with its control characters made visible), idx 1 once
    assert rows == [["2", "\\x1b[31mred\\x7f", "2"], ["1", SCRIPT, "1"]]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    _, rows, _ = a_table(root, "errors")
    assert rows == [["1", "ProviderError: <img src=x onerror=alert(#)> upstream #"]]
    assert "<em>m</em>" in root.one("header").text()


def test_a_lone_surrogate_becomes_a_replacement_character(messy):
    """The trace reader refuses lone surrogates, but report_html takes any report dict (one
    read back from elsewhere, say): the page must still encode as UTF-8."""
    messy["unreadable"][0]["shape"] = "half \ud800 a pair"
    html = report_html(messy, {})
    html.encode("utf-8")
    _, rows, _ = a_table(parse(html), "unreadable")
    assert rows[0][1] == "half \ufffd a pair"


def test_provenance_is_folded_on_screen_and_printed_in_full(messy):
    root = parse(report_html(messy, {}))
    details = root.one("details", id="provenance")
    assert "open" not in details.attrs and details.one("summary").text().startswith("Provenance")
    assert json.loads(details.one("pre").text()) == json.loads(json.dumps(messy["provenance"]))
    printed = root.one("section", **{"class": "print-only"})
    assert printed.one("pre").text() == details.one("pre").text()
    css = root.one("style").text()
    print_rules = css[css.index("@media print") :]
    assert ".print-only{display:block}" in print_rules and "details.screen-only{display:none}" in print_rules
    assert ".print-only{display:none}" in css[: css.index("@media print")]


def test_html_imports_nothing_heavy():
    code = (
        "import sys, medhal.reports.html; "
        "heavy = [m for m in ('matplotlib', 'numpy', 'verifiers', 'medhal.reports.report', "
        "'medhal.reports.plots') "
        "if m in sys.modules]; "
        "print(heavy)"
    )
    out = subprocess.run(
        [str(BIN / "python"), "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "[]"


# ------------------------------------------------------------------------ comparisons

# Ten tasks of one part, each its own cluster, gold yes. Run A says no to all (all wrong),
# run B yes to all (all right); run C is run A under another prompt; run D is run A's
# first five tasks only.


def ten(readings, correct, *, provenance=PROVENANCE, count: int = 10) -> list[dict]:
    return [
        trace(i, "a", "yes", same(readings), same(correct), n_expected=count, provenance=provenance)
        for i in range(count)
    ]


@pytest.fixture
def comparison(tmp_path) -> tuple[str, list[dict]]:
    sets = {
        "A": ten("no", 0),
        "B": ten("yes", 1),
        "C": ten("no", 0, provenance={**PROVENANCE, "prompt": "v2"}),
        "D": ten("no", 0, count=5),
    }
    runs, reports = [], []
    for name, rows in sets.items():
        run = read_run(write_traces(tmp_path / name / "traces.jsonl", rows), TOY, keep_items=True)
        runs.append(run)
        reports.append(build_report(run))
    comparisons = [compare_runs(runs, reports)]
    text = comparison_markdown(comparisons)
    return comparison_html(text, comparisons), comparisons


def test_comparison_tables(comparison):
    html, comparisons = comparison
    root = parse(html)
    assert outside_references(root) == []

    header, rows, table = a_table(root, "runs")
    assert header == [
        "#",
        "model",
        "n",
        "reading",
        "compared with run 1",
        "McNemar exact p (b : c)",
        "differs from run 1 in",
        "traces",
    ]
    assert [r[0] for r in rows] == ["1", "2", "3", "4"]
    assert [r[2] for r in rows] == ["10", "10", "10", "5"]
    assert [r[4] for r in rows] == ["reference", "paired (same tasks)", "paired (same tasks)", "unpaired"]
    # B vs A: right only in A 0, only in B 10 -> p = 2 * (1/2)^10 = 0.001953125
    # C vs A: no discordant item -> p = 1
    assert [r[5] for r in rows] == ["—", "0.001953 (0 : 10)", "1 (0 : 0)", "—"]
    assert [r[6] for r in rows] == ["—", "—", "⚠ prompt", "—"]
    assert [r[7].split("/")[-2:] for r in rows] == [
        ["A", "traces.jsonl"],
        ["B", "traces.jsonl"],
        ["C", "traces.jsonl"],
        ["D", "traces.jsonl"],
    ]
    assert ["differs" in tr.classes() for tr in table.one("tbody").all("tr")] == [False, False, True, False]
    notes = [li.text() for li in root.one("ul", **{"class": "notes"}).all("li")]
    assert (
        notes[0] == "run 2 vs run 1, accuracy: McNemar exact p = 0.001953 "
        "(0 items right only in run 1, 10 only in run 2)."
    )
    assert (
        notes[1]
        == "run 3 vs run 1, accuracy: McNemar exact p = 1 (0 items right only in run 1, 0 only in run 3)."
    )
    assert notes[2].startswith(
        "run 4 covers other tasks than run 1, so it is compared unpaired: the runs cover different items"
    )
    assert len(notes) == 3

    header, rows, _ = a_table(root, "figures")
    assert header == ["figure", "run 1", "run 2", "run 3 ⚠", "run 4"]
    assert [r[0] for r in rows] == ["accuracy", "yes_rate"]
    # B is right and says yes on every task, A on none: +1 in every resample, so [1, 1] excludes 0;
    # C and D are A again: 0 everywhere, [0, 0], which does not exclude 0.
    for row in rows:
        assert first_number(row[1]) == "0.000"
        assert row[2].startswith("1.000") and row[2].endswith("Δ +1.000* [1.000, 1.000]")
        assert row[3].endswith("Δ +0.000 [0.000, 0.000]") and row[4].endswith("Δ +0.000 [0.000, 0.000]")

    banner = root.one("div", data_banner="differs")
    assert [li.text() for li in banner.all("li")] == [
        "run 3 differs from run 1 in prompt: prompt prompt: unset in run 1, v2 in run 3",
        "prompt prompt: unset in run 1, v2 in run 3",
    ]
    markdown = root.one("details").one("pre").text()
    assert markdown == " ".join(comparison_markdown(comparisons).split())


def test_a_star_needs_an_interval_excluding_zero(comparison):
    """Every Δ in the page carries * exactly when its printed interval excludes 0."""
    html, _ = comparison
    figures = parse(html).one("table", data_table="figures").text()
    deltas = re.findall(r"Δ ([+-][\d.]+)(\*?) \[(-?[\d.]+), (-?[\d.]+)\]", figures)
    assert len(deltas) == 6
    for _, star, lo, hi in deltas:
        assert bool(star) == (float(lo) > 0 or float(hi) < 0)


# --------------------------------------------------------------- the real benchmark


@pytest.fixture(scope="module")
def medfact_page(tmp_path_factory) -> Path:
    """`medhal score` on the six MedFact-Bench demo rows, one reply a script tag, plots on."""
    root = tmp_path_factory.mktemp("medfact")
    replies = [
        "<score>2</score>",
        SCRIPT,
        "<score>0</score>",
        "no score",
        "<score>1</score>",
        "<score>-1</score>",
    ]
    return score_demo(replies, root / "run")


def test_medhal_score_writes_a_self_contained_page(medfact_page):
    html = (medfact_page / "report.html").read_text(encoding="utf-8")
    report = json.loads((medfact_page / "report.json").read_text())
    root = parse(html)
    assert outside_references(root) == []
    assert root.one("h1").text() == report["title"]
    assert len(root.all("img")) == len(report["plots"]) == len(list(medfact_page.glob("*.png"))) >= 2
    header, rows, _ = a_table(root, "headline")
    assert header[1:] == ["medhal this run's reading", "authors", "strict"]
    assert [r[0] for r in rows][:2] == ["accuracy, mean over dataset macro_accuracy", "accuracy"]
    header, rows, _ = a_table(root, "confusion")
    assert (
        header == ["gold \\ predicted", "SUPPORT", "NEI", "CONTRADICT", "INVALID", "ERROR"] and len(rows) == 3
    )
    _, rows, _ = a_table(root, "unreadable")
    assert SCRIPT in [r[1] for r in rows]
    runs = [n for n in root.all("script") if n.attrs.get("type") != "application/octet-stream"]
    assert [n.children for n in runs] == [[ITEM_VIEW_SCRIPT]]  # the item view's, nothing from a reply


# ------------------------------------------------------------------- in a browser


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome-stable", "google-chrome"):
        if path := shutil.which(name):
            return path
    return None


def browse(page: Path, tmp_path: Path, *extra: str, fragment: str = "") -> subprocess.CompletedProcess:
    """Open a file (at `#fragment`, when given) in headless Chromium with console logging on
    stderr, and nothing allowed to reach a network (flags as in the machine notes; every host
    name resolves to nothing)."""
    browser = chromium()
    if browser is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install -y chromium)")
    profile = tmp_path / f"profile-{page.stem}"
    args = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        *extra,
        page.as_uri() + (f"#{fragment}" if fragment else ""),
    ]
    return subprocess.run(
        args,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
        env={**os.environ, "HOME": str(tmp_path)},
    )


def console_lines(proc: subprocess.CompletedProcess) -> list[str]:
    """Chromium logs every console message, errors and blocked loads included, as
    `...:CONSOLE(...)` lines; a page without script should cause none."""
    return [line for line in proc.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


def dumped(proc: subprocess.CompletedProcess) -> str:
    """The DOM Chromium printed (some versions leave out the doctype)."""
    text = proc.stdout.lstrip()
    return text if text.lower().startswith("<!doctype") else "<!DOCTYPE html>" + text


def test_the_console_check_sees_errors(tmp_path):
    """The check must be able to fail: a page that throws and loads from outside."""
    page = tmp_path / "bad.html"
    page.write_text(
        "<!DOCTYPE html><html><head>"
        '<meta http-equiv="Content-Security-Policy" content="img-src data:"></head>'
        '<body><img src="https://example.com/a.png"><script>undefinedFunction()</script></body></html>'
    )
    proc = browse(page, tmp_path, "--dump-dom")
    lines = console_lines(proc)
    assert any("Uncaught ReferenceError" in line for line in lines), proc.stderr[-3000:]
    assert any("Content Security Policy" in line for line in lines), proc.stderr[-3000:]


def test_report_and_comparison_load_in_chromium_without_console_messages(messy, comparison, tmp_path):
    images = {k: v for k, v in render(messy).items() if k.endswith(".png")}
    pages = {"report.html": report_html(messy, images), "comparison.html": comparison[0]}
    for name, html in pages.items():
        page = tmp_path / name
        page.write_text(html, encoding="utf-8")
        proc = browse(page, tmp_path, "--dump-dom")
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert console_lines(proc) == [], console_lines(proc)
        dom = parse(dumped(proc))
        assert dom.all("script") == []
        assert dom.one("h1").text() == parse(html).one("h1").text()
    dom = parse(dumped(browse(tmp_path / "report.html", tmp_path, "--dump-dom")))
    assert len(dom.all("img")) == 3
    _, rows, _ = a_table(dom, "unreadable")
    assert rows[1][1] == SCRIPT


def test_the_report_prints(messy, tmp_path):
    """Printed to PDF by Chromium (print CSS applied): a PDF with at least one page."""
    page = tmp_path / "report.html"
    page.write_text(
        report_html(messy, {k: v for k, v in render(messy).items() if k.endswith(".png")}), encoding="utf-8"
    )
    pdf = tmp_path / "report.pdf"
    proc = browse(page, tmp_path, f"--print-to-pdf={pdf}", "--no-pdf-header-footer")
    assert proc.returncode == 0 and console_lines(proc) == [], proc.stderr[-3000:]
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF-") and len(re.findall(rb"/Type\s*/Page\b", data)) >= 1


def test_a_comparison_keeps_each_runs_warnings_and_names_the_values_that_differ(tmp_path):
    """Run 2: demo prompts, temperature 0.7 instead of 0.0, a top_p run 1 never set."""
    hot = ten("no", 0, provenance=DEMO)
    for row in hot:
        row["agent"]["sampling"] = {"temperature": 0.7, "top_p": 0.9}
    runs, reports = [], []
    for name, rows in {"cold": ten("no", 0), "hot": hot}.items():
        run = read_run(write_traces(tmp_path / name / "traces.jsonl", rows), TOY, keep_items=True)
        runs.append(run)
        reports.append(build_report(run))
    comparisons = [compare_runs(runs, reports)]
    first, second = comparisons[0]["runs"]
    assert first["warnings"] == [] and first["differences"] == []
    assert second["warnings"] == ["demo prompts: a pipeline check, not benchmark results"]
    assert second["differs_in"] == ["sampling"]
    assert second["differences"] == [
        {"field": "sampling", "setting": "temperature", "first": 0.0, "this": 0.7},
        {"field": "sampling", "setting": "top_p", "first": None, "this": 0.9},
    ]
    text = comparison_markdown(comparisons)
    assert "sampling temperature: 0.0 in run 1, 0.7 in run 2" in text
    assert "sampling top_p: unset in run 1, 0.9 in run 2" in text
    assert "- run 2: demo prompts: a pipeline check, not benchmark results." in text
    root = parse(comparison_html(text, comparisons))
    differs = [li.text() for li in root.one("div", data_banner="differs").all("li")]
    assert "sampling temperature: 0.0 in run 1, 0.7 in run 2" in differs
    warned = [li.text() for li in root.one("div", data_banner="run-warnings").all("li")]
    assert warned == ["run 2: demo prompts: a pipeline check, not benchmark results"]


def test_a_combined_page_for_several_reports(clean, messy):
    """The demo's report.html: a table of every report, then each one's warnings, summary and
    headline figures, linked to its own report.html."""
    from medhal.reports.html import combined_html

    messy = {**messy, "benchmark": "other"}
    html = combined_html(
        "medhal demo <x>", ["Two toy runs.", ""], [clean, messy], ["toy/report.html", "other/report.html"]
    )
    root = parse(html)
    assert outside_references(root) == []
    assert root.one("h1").text() == "medhal demo <x>"
    header, rows, _ = a_table(root, "combined")
    assert header == [
        "benchmark",
        "headline (as the paper names it)",
        "value (95% CI)",
        "items",
        "errors",
        "replies read",
    ]
    assert [[r[0], r[1], *r[3:5]] for r in rows] == [
        ["toy", "accuracy", "5", "0"],
        ["other", "accuracy", "5", "1"],
    ]
    assert [first_number(r[2]) for r in rows] == ["0.600", "0.200"]
    sections = root.all("section")
    assert [s.attrs["id"] for s in sections] == ["bench-toy", "bench-other"]
    assert [s.one("a").attrs["href"] for s in sections] == ["toy/report.html", "other/report.html"]
    assert sections[1].one("div", data_banner="demo-prompts") is not None
    assert sections[0].all("div", data_banner="demo-prompts") == []
    assert len(root.all("table", data_table="headline")) == 2
