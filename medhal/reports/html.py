"""report.html and comparison.html: one self-contained page per report and per comparison.

Why a page at all when report.md exists: a reader who opens a run's folder wants the
figures, their intervals and the warnings at a glance, with the plots beside the tables
they illustrate, in a file that can be mailed, archived or printed as it is. So the page
holds everything itself: inline CSS, plots embedded as PNG data URIs, no link, no font or
image fetched from anywhere (a Content-Security-Policy in the page forbids it even to a
browser that would try), and one script only, the per-item view's, allowed by its hash. It holds what report.md holds, in the same order:
completeness and demo warnings, the headline figures under every reading convention,
published figures beside the run's, the breakdowns, unreadable replies, errors, notes,
and the provenance (folded away on screen, printed in full).

Every text that comes from a run (replies, error messages, group values, model names,
paths) is untrusted: it is escaped once, here, on its way into the page, and control
characters and lone surrogates are made visible instead of passed through.

Light on purpose: the standard library only (no matplotlib, no numpy, no verifiers); the
plots arrive as bytes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from html import escape
from importlib import resources
from typing import TYPE_CHECKING, Any, overload

from medhal.reports.markdown import (
    TRUNCATED_NOTE,
    TRUNCATED_TITLE,
    agreement,
    complete_text,
    completeness_problems,
    count_text,
    difference_text,
    figure_names,
    scored_by,
    test_text,
)
from medhal.kit.outcomes import CONVENTIONS
from medhal.kit.untrusted import html_text
from medhal.kit.published import KINDS
from medhal.reports.headline import DEMO_COLUMNS, lead_rows, ordered_names

if TYPE_CHECKING:
    from medhal.reports.items import ItemData

READING_NOTES = {
    "medhal": "what a careful human reads",
    "authors": "the benchmark authors' published parsing, rule for rule",
    "strict": "only the exact format the prompt asks for",
}
"""One line per reading convention, shown under the headline table."""

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
"""Nothing may load or run: styles only inline, images only from data: URIs."""

ITEM_VIEW_SCRIPT = resources.files("medhal.reports").joinpath("item_view.js").read_text(encoding="utf-8")
"""The per-item view's script, inlined in the page and allowed to run by its hash alone."""


def script_hash(script: str) -> str:
    """The CSP source that lets exactly this inline script run."""
    return (
        "'sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii") + "'"
    )


STYLE = """
:root{color-scheme:light;--ink:#1b1b1b;--muted:#5f6368;--line:#d0d4d9;--head:#f1f3f5;
--alert:#b3261e;--alert-bg:#fdecea;--warn:#9a5b00;--warn-bg:#fff4e0;--ok:#1e6b34;--ok-bg:#eaf5ec;--own:#eef4ff}
*{box-sizing:border-box}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
color:var(--ink);background:#fff;margin:2rem auto;max-width:76rem;padding:0 1.25rem}
h1{font-size:1.6rem;margin:0 0 .25rem}
h2{font-size:1.2rem;margin:2.2rem 0 .6rem;padding-bottom:.2rem;border-bottom:1px solid var(--line)}
.meta{color:var(--muted);margin:.1rem 0}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:.85em}
code{background:#f6f8fa;padding:0 .25rem;border-radius:3px;overflow-wrap:break-word}
td code{overflow-wrap:anywhere}td.path{min-width:16rem}
pre{background:#f6f8fa;padding:.75rem;white-space:pre-wrap;overflow-wrap:anywhere;border-radius:4px}
.banner{padding:.6rem 1rem;margin:.8rem 0;border-left:6px solid;border-radius:3px}
.banner p{margin:.2rem 0}.banner ul{margin:.3rem 0 .2rem 1.2rem;padding:0}
.alert{border-color:var(--alert);background:var(--alert-bg);color:#5c0f0b;font-size:1.05rem}
.alert strong{color:var(--alert)}
.warn{border-color:var(--warn);background:var(--warn-bg)}
.ok{border-color:var(--ok);background:var(--ok-bg);color:var(--ok)}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:.4rem 0 1rem;font-variant-numeric:tabular-nums}
caption{caption-side:top;text-align:left;color:var(--muted);font-size:.9rem;padding:.2rem 0}
th,td{border:1px solid var(--line);padding:.3rem .6rem;text-align:left;vertical-align:top}
thead th{background:var(--head);font-weight:600}
td.num{text-align:right;white-space:nowrap}
.ci{color:var(--muted);font-size:.88em;white-space:nowrap}
.own{background:var(--own)}th.own{background:#dce8ff}
.diag{font-weight:700;background:#eaf5ec}
.inside{color:var(--ok);font-weight:600}.outside{color:var(--alert);font-weight:600}
.sig{font-weight:700}.delta{display:block;font-size:.88em;color:var(--muted)}.delta.sig{color:var(--ink)}
tr.differs td{background:var(--warn-bg)}.flag{color:var(--warn);font-weight:700}
figure{margin:.5rem 0 1.5rem}figure img{max-width:100%;height:auto;border:1px solid var(--line)}
figcaption{color:var(--muted);font-size:.9rem}
.legend{color:var(--muted);font-size:.9rem;margin:.2rem 0 1rem}
details{margin:1rem 0}summary{cursor:pointer;font-weight:600}
.controls{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;margin:.5rem 0}
.controls input[type=search]{width:22rem;max-width:100%}
.item{border:1px solid var(--line);border-radius:4px;padding:.5rem .8rem;margin:.6rem 0}
.item-head{margin:.1rem 0 .4rem}.item-head .tag{margin-left:.6rem}
.tag{font-size:.85em;color:var(--muted)}.tag.bad,.bad{color:var(--alert)}.tag.good,.good{color:var(--ok)}
.warnflag{color:var(--warn);font-weight:700}.item table{margin:.2rem 0 .4rem}
.item dl{display:grid;grid-template-columns:max-content 1fr;gap:.1rem .8rem;margin:.2rem 0}
.item dt{color:var(--muted)}.item dd{margin:0;overflow-wrap:anywhere}
.item .label{margin:.3rem 0 0;color:var(--muted)}.item details{margin:.3rem 0}
h3.item-group{font-size:1rem;margin:1.2rem 0 .2rem}
.item table.rollouts td{min-width:12rem}.item table.rollouts pre{max-height:18rem;overflow:auto;margin:0}
.print-only{display:none}
footer{margin-top:3rem;color:var(--muted);font-size:.8rem;border-top:1px solid var(--line);padding-top:.5rem}
@page{margin:14mm}
@media print{
body{margin:0;max-width:none;padding:0;font-size:10pt}
h2{break-after:avoid;page-break-after:avoid}
tr,figure,.banner,.keep{break-inside:avoid;page-break-inside:avoid}
thead{display:table-header-group}
.scroll{overflow:visible}
figure img{max-height:11cm;width:auto}
.banner,.own,.diag,tr.differs td,thead th{-webkit-print-color-adjust:exact;print-color-adjust:exact}
details.screen-only{display:none}.print-only{display:block}
}
"""


# ------------------------------------------------------------------------------ text


class Markup(str):
    """HTML that is already safe (built here from escaped parts); `table` inserts it as is."""

    numeric = False


class Figure(Markup):
    """A number (with its interval) as markup: right-aligned in a table."""

    numeric = True


def esc(value: Any) -> str:
    """Any value as escaped, cleaned text."""
    return html_text(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_interval(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and len(value) == 2 and all(_is_number(v) for v in value)


def text(value: Any) -> str:
    """A report value as plain text (floats to 3 decimals, intervals as [lo, hi], None as
    a dash). Unlike report.md's `fmt`, nothing is escaped for Markdown."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}" if math.isfinite(value) else str(value)
    if _is_interval(value):
        return f"[{text(float(value[0]))}, {text(float(value[1]))}]"
    if value is None:
        return "—"
    return str(value)


def figure_cell(value: Any, interval: Any = None) -> Figure:
    """A figure with its interval in smaller type beside it."""
    shown = esc(text(value))
    if _is_interval(interval):
        return Figure(f'{shown} <span class="ci">{esc(text(interval))}</span>')
    return Figure(shown)


def code(value: Any) -> Markup:
    return Markup(f"<code>{esc(value)}</code>")


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-") or "x"


# ----------------------------------------------------------------------------- blocks


def _cell(value: Any, css: str = "") -> str:
    classes = [css] if css else []
    if isinstance(value, Markup):
        body = str(value)
        if value.numeric:
            classes.append("num")
    else:
        body = esc(text(value))
        if _is_number(value) or _is_interval(value):
            classes.append("num")
    attr = f' class="{" ".join(classes)}"' if classes else ""
    return f"<td{attr}>{body}</td>"


def table(
    header: Sequence[Any],
    rows: Iterable[Sequence[Any]],
    caption: str | None = None,
    *,
    name: str | None = None,
    column_classes: Mapping[int, str] | None = None,
    row_classes: Sequence[str] | None = None,
) -> str:
    """A table; cells that are `Markup` go in as they are, everything else is escaped.
    `name` becomes data-table (what tests and stylesheets find a table by)."""
    column_classes = column_classes or {}
    head = "".join(
        f'<th scope="col"{_class_attr(column_classes.get(i, ""))}>'
        f"{h if isinstance(h, Markup) else esc(h)}</th>"
        for i, h in enumerate(header)
    )
    body = []
    for r, row in enumerate(rows):
        css = row_classes[r] if row_classes and r < len(row_classes) else ""
        cells = "".join(_cell(v, column_classes.get(i, "")) for i, v in enumerate(row))
        body.append(f"<tr{_class_attr(css)}>{cells}</tr>")
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    data = f' data-table="{esc(name)}"' if name else ""
    rows_html = "".join(body)
    return (
        f'<div class="scroll"><table{data}>{cap}<thead><tr>{head}</tr></thead>'
        f"<tbody>{rows_html}</tbody></table></div>"
    )


def _class_attr(css: str) -> str:
    return f' class="{esc(css)}"' if css else ""


def section(key: str, title: str, *content: str) -> str:
    return f'<section id="{esc(_slug(key))}"><h2>{esc(title)}</h2>{"".join(content)}</section>'


def plot(name: str, data: bytes, caption: str) -> str:
    """A PNG embedded as a data URI (only PNG: the bytes are checked, never trusted by name)."""
    if not isinstance(data, (bytes, bytearray)) or not bytes(data).startswith(PNG_SIGNATURE):
        raise ValueError(f"plot {name!r} is not a PNG image")
    encoded = base64.b64encode(bytes(data)).decode("ascii")
    return (
        f'<figure data-plot="{esc(name)}"><img alt="{esc(caption)}" src="data:image/png;base64,{encoded}">'
        f"<figcaption>{esc(caption)}</figcaption></figure>"
    )


def page(title: str, body: str, script: str | None = None) -> str:
    """The whole page; `script`, when given, is inlined at the end of the body and is the
    only script the Content-Security-Policy lets run (by its hash)."""
    csp = CSP if script is None else f"{CSP}; script-src {script_hash(script)}"
    tail = "" if script is None else f"<script>{script}</script>"
    said = (
        "no script"
        if script is None
        else "one inline script (the item view), allowed by its hash, and its data inside the page"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>{body}"
        f"<footer>Written by medhal. This page is self-contained: {said}; nothing loaded from "
        f"elsewhere.</footer>{tail}</body></html>\n"
    )


# ----------------------------------------------------------------------------- report


def banners(report: Mapping[str, Any]) -> str:
    """The warnings a reader must see before any figure."""
    parts = []
    if report.get("demo_prompts"):
        parts.append(
            '<div class="banner alert" data-banner="demo-prompts"><p><strong>Demo prompts.</strong> Prompts '
            "written by medhal stood in for the benchmark's own: these figures are a pipeline check, not "
            "benchmark results.</p></div>"
        )
    problems = completeness_problems(report)
    if problems:
        items = "".join(f"<li>{esc(p)}</li>" for p in problems)
        parts.append(
            '<div class="banner alert" data-banner="incomplete"><p><strong>Incomplete run.</strong> Figures '
            f"below cover only what is there.</p><ul>{items}</ul></div>"
        )
    else:
        parts.append(f'<p class="banner ok" data-banner="complete">{esc(complete_text(report))}</p>')
    if report.get("n_errors"):
        share = report["n_errors"] / report["n"] if report.get("n") else 0.0
        parts.append(
            f'<p class="banner warn" data-banner="errors">{esc(report["n_errors"])} of {esc(report["n"])} '
            f"rollouts failed ({share:.1%}); they count as wrong in every figure (see Errored rollouts).</p>"
        )
    return "".join(parts)


def _models(report: Mapping[str, Any]) -> str:
    models = report.get("provenance", {}).get("models") or {}
    return ", ".join(f"{name} ({count})" if len(models) > 1 else str(name) for name, count in models.items())


def summary_table(report: Mapping[str, Any]) -> str:
    """report.md's summary; values left-aligned (the column mixes words and numbers)."""

    def left(value: Any, interval: Any = None) -> Markup:
        return Markup(str(figure_cell(value, interval)))

    rows: list[list[Any]] = [
        *([lead_label(report, row), left(row["value"], row["ci"])] for row in lead_rows(report)),
        ["n", left(report["n"])],
        ["errored rollouts", left(report["n_errors"])],
        ["reading convention of the run", report["convention"]],
        ["micro accuracy (95% CI)", left(report["micro_accuracy"], report.get("micro_accuracy_ci"))],
        ["parse rate", left(report["parse_rate"])],
    ]
    if report.get("macro_over"):
        rows.append(
            [
                f"macro accuracy over {report['macro_over']} (95% CI)",
                left(report["macro_accuracy"], report.get("macro_accuracy_ci")),
            ]
        )
    rows.append(["paper-comparable (complete set, no errors)", report["paper_comparable"]])
    return table(["figure", "value"], rows, name="summary")


def lead_label(report: Mapping[str, Any], row: Mapping[str, Any]) -> Markup:
    """A headline row's name in the summary table, the statistic's code name beside it."""
    statistic = (report.get("lead") or {}).get("statistic", "accuracy")
    if statistic == row["label"]:
        return Markup(f"{esc(statistic)} (95% CI)")
    return Markup(f"{esc(row['label'])} (<code>{esc(statistic)}</code>, 95% CI)")


def headline_names(report: Mapping[str, Any], headline: Iterable[str]) -> list[str]:
    """The benchmark's headline, the macro figures, then the other headline statistics the
    report has (report.md's order)."""
    return ordered_names(report, headline)


def headline_table(report: Mapping[str, Any], headline: Iterable[str]) -> str:
    """One row per figure, one column per reading convention (the run's own highlighted):
    the conventions are what a reader compares, so they sit side by side."""
    own = report.get("convention")
    header = [
        "figure",
        *(
            Markup(f"{esc(c)}<br><small>this run&#39;s reading</small>") if c == own else c
            for c in CONVENTIONS
        ),
    ]
    rows = []
    for name in headline_names(report, headline):
        cells = []
        for convention in CONVENTIONS:
            figures = report["conventions"][convention]
            cells.append(figure_cell(figures.get(name), figures.get(f"{name}_ci")))
        rows.append([labelled(report, name), *cells])
    own_column = {1 + CONVENTIONS.index(own): "own"} if own in CONVENTIONS else {}
    legend = "; ".join(f"<strong>{esc(c)}</strong>: {esc(READING_NOTES.get(c, ''))}" for c in CONVENTIONS)
    return (
        table(
            header, rows, "Value [95% cluster-bootstrap interval]", name="headline", column_classes=own_column
        )
        + f'<p class="legend">{legend}.</p>'
    )


def published_table(report: Mapping[str, Any]) -> str:
    """The published points beside the run's figures, each labelled as what it is."""
    marks = {
        "inside CI": '<span class="inside">&#10003; inside</span>',
        "equal": '<span class="inside">&#10003; equal</span>',
        "outside CI": '<span class="outside">&#10007; outside</span>',
        "differs": '<span class="outside">&#10007; differs</span>',
    }
    rows = []
    for r in report["published"]:
        agrees = agreement(r)
        rows.append(
            [
                r["kind"],
                r["model"],
                r["statistic"],
                r.get("group") or "all",
                r["reading"],
                r["published"],
                figure_cell(r.get("run"), r.get("run_ci")),
                Markup(marks.get(agrees, esc(agrees))),
                r["source"],
            ]
        )
    kinds = "; ".join(
        f"{kind}: {KINDS[kind]}" for kind in dict.fromkeys(r["kind"] for r in report["published"])
    )
    return table(
        [
            "kind",
            "model",
            "statistic",
            "group",
            "reading",
            "published",
            "this run (95% CI)",
            "agrees",
            "source",
        ],
        rows,
        f"Same setting; the run's value under each point's reading. {kinds}.",
        name="published",
    )


def labelled(report: Mapping[str, Any], name: str, sep: str = " ") -> Markup:
    """A figure's name for readers, its code name beside it (in code type) when they differ."""
    human = (report.get("figure_labels") or {}).get(name)
    if not human or human == name:
        return Markup(esc(name))
    return Markup(f"{esc(human)}{sep}<code>{esc(name)}</code>")


def group_table(report: Mapping[str, Any], fld: str, values: Mapping[str, Mapping[str, Any]]) -> str:
    others = [k for k in figure_names(values.values()) if k != "accuracy"]
    rows = [
        [value, g.get("n"), figure_cell(g.get("accuracy"), g.get("accuracy_ci")), *[g.get(k) for k in others]]
        for value, g in values.items()
    ]
    header = [fld, "n", "accuracy (95% CI)", *(labelled(report, k, "<br>") for k in others)]
    return table(header, rows, name=f"group:{fld}")


class Page:
    """A page written in parts: its text, and a run's item data read back from the file the
    items were written to as they were read (`medhal.reports.items.ItemData`), so that the page
    of a 100,000-item run is never whole in memory. Iterating gives its UTF-8 bytes."""

    def __init__(self, parts: Sequence[str | ItemData]) -> None:
        self.parts = list(parts)

    def __iter__(self) -> Iterator[bytes]:
        for part in self.parts:
            if isinstance(part, str):
                yield part.encode("utf-8")
            else:
                yield from part.blocks()

    def text(self) -> str:
        """The whole page as text (for a small page: tests, a look in memory)."""
        return b"".join(self).decode("utf-8")


@overload
def report_html(report: Mapping[str, Any], images: Mapping[str, bytes], items: None = None) -> str: ...
@overload
def report_html(report: Mapping[str, Any], images: Mapping[str, bytes], items: ItemData) -> Page: ...
def report_html(
    report: Mapping[str, Any], images: Mapping[str, bytes], items: ItemData | None = None
) -> str | Page:
    """The page for one report. `images`: file name -> PNG bytes (`medhal.reports.plots.render_plots`);
    `by_<field>.png` is shown under its group table, `confusion.png` under the confusion
    table, any other at the end of the breakdowns. `items`: the per-item view's data
    (`medhal.reports.items.ItemLog.finish`), which makes the page a `Page`; without them the
    page is text, with no item view and no script."""
    headline = report.get("headline") or ("accuracy",)
    parts = [
        _header(report),
        banners(report),
        section("summary", "Summary", summary_table(report)),
        section(
            "headline",
            "Headline figures by reading convention",
            f'<div class="keep">{headline_table(report, headline)}</div>',
        ),
    ]
    if report.get("published"):
        parts.append(section("published", "Published figures", published_table(report)))
    parts += _breakdowns(report, dict(images))
    parts.append(_unreadable(report))
    if report.get("n_truncated"):
        parts.append(_truncated(report))
    parts.append(_errors(report))
    if report.get("notes"):
        parts.append(
            section(
                "notes", "Notes", "<ul>" + "".join(f"<li>{esc(n)}</li>" for n in report["notes"]) + "</ul>"
            )
        )
    if items is None:
        parts.append(_provenance(report.get("provenance", {})))
        return page(report["title"], "".join(parts), None)
    before, after = item_view(report, items)
    parts.append(before)
    parts.append(DATA_MARK)
    parts.append(after)
    parts.append(_provenance(report.get("provenance", {})))
    head, tail = page(report["title"], "".join(parts), ITEM_VIEW_SCRIPT).split(DATA_MARK)
    return Page([head, items, tail])


DATA_MARK = "\x00items\x00"
"""Where the item data goes in a page's text: no text of a run can put it there (every text
is cleaned, which shows a NUL as an escape)."""


def item_view(report: Mapping[str, Any], items: ItemData) -> tuple[str, str]:
    """The per-item view, before and after its data: its controls and list are built by the
    page's script from the data blocks (`medhal.reports.items.ChunkSpool`)."""
    groups = report.get("groups") or {}
    meta = {
        "conventions": list(CONVENTIONS),
        "own": report.get("convention", CONVENTIONS[0]),
        "fields": list(groups),
        "groups": {field: list(values) for field, values in groups.items()},
        "withheld": items.withheld,
        "n": items.n,
    }
    withheld = (
        "<p>Prompts, replies, gold answers and readings are withheld in this published copy (they may "
        "quote upstream rows); whether each convention read the reply and got it right, rewards and "
        "errors are all there.</p>"
        if meta["withheld"]
        else ""
    )
    return (
        f'<section id="items" data-meta="{esc(json.dumps(meta, ensure_ascii=False))}">'
        f"<h2>Items ({esc(report['n'])})</h2>"
        "<p>Every rollout: its reading under each convention, whether it is right, the gold answer, "
        "the reward, tokens and time where the trace records them, any error, the reply and (folded) "
        "the prompt. With several rollouts per task, each task shows its rollouts side by side, "
        "sortable by how much they disagree. Filter, search by idx or text, and link to a view: "
        "<code>#view:filter=disagree</code>, <code>#view:sort=disagreement</code>.</p>"
        f"{withheld}"
        '<div class="controls" data-items-controls></div>'
        '<p class="meta" data-items-status>Loading the items…</p>'
        "<noscript><p>The item view needs JavaScript.</p></noscript>"
        "<div data-items-list></div>",
        "</section>",
    )


def _header(report: Mapping[str, Any]) -> str:
    """Title, source, model, reading convention and the code that scored the run."""
    meta = [f"Source: {code(report['source'])}"]
    models = _models(report)
    if models:
        meta.append(f"Model: {esc(models)}")
    meta.append(f"Reading convention: <strong>{esc(report['convention'])}</strong>")
    meta.append(esc(scored_by(report)))
    return "".join(
        [
            f"<header><h1>{esc(report['title'])}</h1>",
            *(f'<p class="meta">{line}</p>' for line in meta),
            "</header>",
        ]
    )


def _breakdowns(report: Mapping[str, Any], pending: dict[str, bytes]) -> list[str]:
    """The group tables, per-class figures and confusion matrix, each with its plot (taken
    from `pending`), then the plots no table claimed."""
    convention = report["convention"]
    parts = []
    for fld, values in report["groups"].items():
        content = [group_table(report, fld, values)]
        name = f"by_{fld}.png"
        if name in pending:
            content.append(
                plot(name, pending.pop(name), f"Accuracy by {fld} with 95% intervals ({convention} reading)")
            )
        parts.append(section(f"group-{fld}", f"By {fld} ({convention} reading)", *content))
    if "classes" in report:
        classes = report["classes"]
        parts.append(
            section(
                "classes",
                f"Per class ({convention} reading)",
                table(
                    ["class", "precision", "recall", "f1", "support"],
                    [[c, v["precision"], v["recall"], v["f1"], v["support"]] for c, v in classes.items()],
                    name="classes",
                ),
            )
        )
    if report.get("confusion"):
        content = [_confusion(report["confusion"])]
        if "confusion.png" in pending:
            content.append(
                plot(
                    "confusion.png", pending.pop("confusion.png"), f"Confusion matrix ({convention} reading)"
                )
            )
        parts.append(section("confusion", "Confusion (rows: gold, columns: predicted)", *content))
    if pending:
        parts.append(
            section("plots", "Other plots", *(plot(name, data, name) for name, data in pending.items()))
        )
    return parts


def _confusion(confusion: Mapping[str, Mapping[str, Any]]) -> str:
    """The confusion table, right answers (gold = predicted) in bold."""
    columns = list(next(iter(confusion.values())).keys())
    head = "".join(f'<th scope="col">{esc(c)}</th>' for c in ["gold \\ predicted", *columns])
    body = []
    for gold, row in confusion.items():
        cells = "".join(
            f'<td class="num{" diag" if column == gold else ""}">{esc(text(row[column]))}</td>'
            for column in columns
        )
        body.append(f"<tr><td>{esc(gold)}</td>{cells}</tr>")
    return (
        '<div class="scroll"><table data-table="confusion"><caption>Rows: gold; columns: predicted; '
        f"bold: right answers</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def _unreadable(report: Mapping[str, Any]) -> str:
    convention = report["convention"]
    shapes = report.get("unreadable") or []
    n = report.get("n_unreadable", 0)
    title = f"Unreadable replies ({n} under the {convention} reading)"
    if not shapes:
        return section(
            "unreadable",
            title,
            f"<p>None: every reply that came back was read under the {esc(convention)} reading.</p>",
        )
    rows = [[count_text(u["count"], u.get("exact", True)), code(u["shape"]), u["idx"]] for u in shapes]
    return section(
        "unreadable",
        title,
        table(
            ["count", "reply (first 120 characters, whitespace collapsed)", "e.g. idx"],
            rows,
            "Most frequent shapes; each counts as wrong",
            name="unreadable",
        ),
    )


def _truncated(report: Mapping[str, Any]) -> str:
    rows = [[t["count"], t["where"], t["idx"]] for t in report["truncated"]]
    return section(
        "truncated",
        f"{TRUNCATED_TITLE} ({report['n_truncated']})",
        f"<p>{esc(TRUNCATED_NOTE)}</p>" + table(["count", "cut", "e.g. idx"], rows, name="truncated"),
    )


def _errors(report: Mapping[str, Any]) -> str:
    errors = report.get("errors") or {}
    title = "Errored rollouts (kept in every denominator, scored wrong)"
    if not errors:
        return section("errors", title, "<p>None.</p>")
    at_least = set(report.get("errors_at_least", ()))
    rows = [[count_text(count, message not in at_least), code(message)] for message, count in errors.items()]
    return section("errors", title, table(["count", "error (numbers masked as #)"], rows, name="errors"))


def _provenance(provenance: Mapping[str, Any]) -> str:
    """Folded away on screen (it is long and rarely read), printed in full (a printout is
    an archive: it must say where its figures came from)."""
    body = esc(json.dumps(provenance, indent=1, sort_keys=True, ensure_ascii=False, default=str))
    return (
        '<details class="screen-only" id="provenance">'
        "<summary>Provenance (data, selection, models, sampling)"
        f"</summary><pre>{body}</pre></details>"
        f'<section class="print-only"><h2>Provenance</h2><pre>{body}</pre></section>'
    )


def combined_html(
    title: str, lines: Sequence[str], reports: Sequence[Mapping[str, Any]], links: Sequence[str]
) -> str:
    """One page for several reports (the demo's): `lines` of introduction, a table of every
    report's headline (a row per group for a per-group headline) with its items, errors and
    parse rate, then each report's header, warnings, summary
    and headline figures, with a link to its own report.html (`links`, relative paths) for
    the breakdowns and the items."""
    rows = []
    for report in reports:
        anchor = Markup(
            f'<a href="#{esc(_slug("bench-" + report["benchmark"]))}">{esc(report["benchmark"])}</a>'
        )
        for lead in lead_rows(report):
            rows.append(
                [
                    anchor,
                    lead["label"],
                    figure_cell(lead["value"], lead["ci"]),
                    lead["n"],
                    lead["n_errors"],
                    lead["parse_rate"],
                ]
            )
    parts = [
        f"<header><h1>{esc(title)}</h1></header>",
        *(f"<p>{esc(line)}</p>" for line in lines if line.strip()),
        table(DEMO_COLUMNS, rows, name="combined"),
    ]
    for report, link in zip(reports, links, strict=True):
        headline = report.get("headline") or ("accuracy",)
        parts.append(
            f'<section id="{esc(_slug("bench-" + report["benchmark"]))}">'
            f"<h2>{esc(report['title'])}</h2>"
            f'<p class="meta">Every figure, group, plot and item: <a href="{esc(link)}">{esc(link)}</a></p>'
            f"{banners(report)}{summary_table(report)}{headline_table(report, headline)}</section>"
        )
    return page(title, "".join(parts))


# ------------------------------------------------------------------------- comparison


def _excludes_zero(interval: Any) -> bool:
    return _is_interval(interval) and (interval[0] > 0 or interval[1] < 0)


def _signed(value: float) -> str:
    return f"{value:+.3f}" if math.isfinite(value) else str(value)


def _comparison(comparison: Mapping[str, Any]) -> str:
    runs = comparison["runs"]
    flagged = [i for i, row in enumerate(runs, start=1) if row.get("differs_in")]
    parts = []
    if flagged:
        items = "".join(
            f"<li>run {i} differs from run 1 in {esc(', '.join(runs[i - 1]['differs_in']))}"
            + (
                ": <ul>"
                + "".join(
                    f"<li>{esc(difference_text(d, i))}</li>" for d in runs[i - 1].get("differences") or []
                )
                + "</ul>"
                if runs[i - 1].get("differences")
                else ""
            )
            + "</li>"
            for i in flagged
        )
        parts.append(
            '<div class="banner warn" data-banner="differs"><p><strong>Not like for like.</strong> '
            "Part of any "
            f"difference below is the code's or the setting's, not the model's:</p><ul>{items}</ul></div>"
        )
    warned = [(i, w) for i, row in enumerate(runs, start=1) for w in row.get("warnings") or []]
    if warned:
        items = "".join(f"<li>run {i}: {esc(w)}</li>" for i, w in warned)
        parts.append(
            '<div class="banner alert" data-banner="run-warnings"><p><strong>Runs with warnings.</strong> '
            f"As their own reports say:</p><ul>{items}</ul></div>"
        )
    runs_table, notes = _runs_table(runs)
    parts.append(runs_table)
    parts.append(_figures_table(list(comparison["headline"]), runs))
    if notes:
        parts.append('<ul class="notes">' + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    return section(f"comparison-{comparison.get('benchmark', '')}", str(comparison["title"]), *parts)


def _runs_table(runs: Sequence[Mapping[str, Any]]) -> tuple[str, list[str]]:
    """The table of compared runs (how each is compared with run 1, McNemar's test, what
    differs), and the notes that explain it."""
    rows, row_classes, notes = [], [], []
    for i, row in enumerate(runs, start=1):
        if i == 1:
            compared = "reference"
        elif row.get("paired") is False:
            compared = "unpaired"
            notes.append(
                f"run {i} covers other tasks than run 1, so it is compared unpaired: "
                f"{row.get('why_unpaired')}."
            )
        else:
            compared = "paired (same tasks)"
        mcnemar = row.get("mcnemar")
        p_cell: Any = (
            Figure(
                f"{esc(format(mcnemar['p_value'], '.4g'))} "
                f'<span class="ci">({esc(mcnemar["right_only_in_first"])} : '
                f"{esc(mcnemar['right_only_in_this'])})</span>"
            )
            if mcnemar
            else "—"
        )
        if mcnemar:
            notes.append(test_text(mcnemar, i))
        differs = (
            Markup(f'<span class="flag">&#9888; {esc(", ".join(row["differs_in"]))}</span>')
            if row.get("differs_in")
            else "—"
        )
        models = ", ".join(row.get("models") or {})
        rows.append(
            [i, models or "—", row["n"], row["convention"], compared, p_cell, differs, code(row["run"])]
        )
        row_classes.append("differs" if row.get("differs_in") else "")
    header = [
        "#",
        "model",
        "n",
        "reading",
        "compared with run 1",
        "McNemar exact p (b : c)",
        "differs from run 1 in",
        "traces",
    ]
    caption = "The runs (b : c = items right only in run 1 : only in this run)"
    return table(
        header, rows, caption, name="runs", row_classes=row_classes, column_classes={7: "path"}
    ), notes


def _figures_table(names: list[str], runs: Sequence[Mapping[str, Any]]) -> str:
    """Each headline figure of each run with its interval, and its difference to run 1."""
    header: list[Any] = ["figure"]
    for i, row in enumerate(runs, start=1):
        header.append(
            Markup(f"run {i}" + (' <span class="flag">&#9888;</span>' if row.get("differs_in") else ""))
        )
    figure_rows = []
    for name in names:
        cells: list[Any] = [name]
        for i, row in enumerate(runs, start=1):
            cell = str(figure_cell(row["figures"].get(name), (row.get("intervals") or {}).get(name)))
            diff = (row.get("difference") or {}).get(name) if i > 1 else None
            interval = (row.get("difference_ci") or {}).get(name) if i > 1 else None
            if diff is not None:
                mark = _excludes_zero(interval)
                shown = esc(_signed(float(diff))) + ("*" if mark else "")
                spread = f" {esc(text(interval))}" if _is_interval(interval) else ""
                cell += f'<span class="delta{" sig" if mark else ""}">&Delta; {shown}{spread}</span>'
            cells.append(Figure(cell))
        figure_rows.append(cells)
    return table(header, figure_rows, "Value [95% CI]; Δ = difference to run 1 [95% CI]", name="figures")


def comparison_html(markdown_text: str, comparisons: Iterable[Mapping[str, Any]]) -> str:
    """The page for a comparison of runs (`medhal.reports.compare.compare_runs`, one per benchmark),
    with the Markdown version folded away for pasting elsewhere."""
    intro = (
        '<p class="legend">&Delta; = difference to run 1 with its 95% cluster-bootstrap interval '
        "(paired when the runs cover the same tasks: the same clusters are resampled for both); "
        "<strong>*</strong> = the interval "
        "excludes 0. McNemar's exact p is over the items exactly one of the two runs got right. "
        '<span class="flag">&#9888;</span> marks a run whose code or setting differs from run 1.</p>'
    )
    parts = ["<header><h1>Comparison</h1></header>", intro, *(_comparison(c) for c in comparisons)]
    parts.append(
        '<details class="screen-only"><summary>As Markdown</summary>'
        f"<pre>{esc(markdown_text)}</pre></details>"
    )
    return page("Comparison", "".join(parts))
