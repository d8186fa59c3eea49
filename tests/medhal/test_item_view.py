"""report.html's per-item view: every rollout's data embedded once, compressed and inert
(read back here with an HTML parser and decoded by hand), and the page's script showing it
in headless Chromium under every filter, search and group, with hostile replies staying
text and no console message.

Reports are built from trace files written here, on the toy benchmark of test_html.py."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from urllib.parse import quote

import pytest

from medhal.reports import items as items_module
from medhal.reports.items import ItemLog, prompt_text
from medhal.reports.report import build_report, read_run
from medhal.reports.report_files import render
from tests.medhal.test_html import (
    BOLD,
    CLEAN,
    TOY,
    Node,
    browse,
    console_lines,
    dumped,
    outside_references,
    parse,
    same,
    trace,
    write_traces,
)

HOSTILE = '</script><script>alert(1)</script><img src=x onerror="alert(2)"><!-- &amp; \u2028 -->'
"""A reply that would run code or break out of an inline data block if it were pasted raw."""
SHOWN = HOSTILE.replace("\u2028", "\\u2028")
"""The hostile reply as a person sees it: markup as text, the line separator as its escape
(every control and separator character is shown as an escape, as everywhere a person reads)."""


REASONING = "<b>weighing</b> it: the answer is yes"
"""Reasoning returned beside item 3's reply (`reasoning_content`), with markup in it."""


def hostile_rows() -> list[dict]:
    """CLEAN (whose readings disagree on items 2, 3 and 4), with a hostile reply on item 0, a
    hostile prompt on item 1, reasoning beside item 3's reply, item 4's reply cut by the token
    limit after its reasoning, and a failed rollout with markup in its message added as item 5."""
    rows = json.loads(json.dumps(CLEAN))
    rows[0]["nodes"][0]["message"]["content"] = HOSTILE
    rows[1]["task"]["data"]["prompt"] = "</script><b>prompt</b>"
    rows[1]["task"]["data"]["system_prompt"] = "Be careful."
    rows[3]["nodes"][0]["message"]["reasoning_content"] = REASONING
    rows[3]["calls"] = [{"node": 0, "finish_reason": "stop"}]
    rows[4]["nodes"][0]["message"]["reasoning_content"] = "still weighing"
    rows[4]["calls"] = [{"node": 0, "finish_reason": "length"}]
    failed = trace(5, "b", "no", same(None), same(0), error="<img src=y onerror=alert(3)> 502", n_expected=6)
    for row in rows:
        row["task"]["data"]["selection"]["n_expected"] = 6
    return [*rows, failed]


def page_files(tmp_path: Path, rows: list[dict], withhold: bool = False) -> dict:
    run = read_run(
        write_traces(tmp_path / "run" / "traces.jsonl", rows),
        TOY,
        view=ItemLog(TOY.group_fields, withhold=withhold),
    )
    report = build_report(run)
    report["headline"] = list(TOY.headline)
    files = render(report, plots=False, items=run.view)
    return {**files, "report.html": files["report.html"].text()}


def decoded(root: Node) -> dict[str, list]:
    """Each part of the embedded item data, chunks joined, decoded as the page decodes it,
    and the prompts rebuilt from their pieces and the shared texts (`p`)."""
    out: dict[str, list] = {"m": [], "r": [], "p": [], "t": [], "c": []}
    for node in root.all("script", type="application/octet-stream"):
        text = "".join(c for c in node.children if isinstance(c, str))
        out[node.attrs["data-items-part"] or ""] += json.loads(
            gzip.decompress(base64.b64decode(text, validate=True))
        )
    out["pieces"] = out["p"]
    out["p"] = [
        None if pieces is None else "\n\n".join(out["t"][x] if isinstance(x, int) else x for x in pieces)
        for pieces in out["pieces"]
    ]
    return out


def test_the_embedded_items_are_inert_and_whole(tmp_path):
    files = page_files(tmp_path, hostile_rows())
    html = files["report.html"]
    root = parse(html)
    assert outside_references(root) == []
    assert root.all("img") == [] and HOSTILE not in html
    assert "<img" not in html.lower() and "<script>alert" not in html.lower()
    data = decoded(root)
    # idx, groups (part, topic), gold, readings (medhal, authors, strict), right bits, read bits,
    # rewards, error, tokens, seconds (the toy traces record no model calls), where the token
    # limit cut the reply: bit 0 medhal, 1 authors, 2 strict
    assert data["m"] == [
        [0, ["a", BOLD], "yes", ["yes", "yes", "yes"], 7, 7, {}, None, None, None, None],
        [1, ["a", "plain"], "no", ["no", "no", "no"], 7, 7, {}, None, None, None, None],
        [2, ["a", "plain"], "yes", ["no", "yes", "INVALID"], 2, 3, {}, None, None, None, None],
        [3, ["b", BOLD], "no", ["no", "yes", "no"], 5, 7, {}, None, None, None, None],
        [4, ["b", "plain"], "yes", ["INVALID", "no", "INVALID"], 0, 2, {}, None, None, None, "in the answer"],
        [
            5,
            ["b", "plain"],
            "no",
            ["ERROR", "ERROR", "ERROR"],
            0,
            0,
            {},
            "ProviderError: <img src=y onerror=alert(3)> 502",
            None,
            None,
            None,
        ],
    ]
    assert data["r"] == [SHOWN, "r", "r", "r", "I cannot tell", None]
    assert data["c"] == [None, None, None, REASONING, "still weighing", None]
    assert data["p"][0] == "q" and data["p"][1] == "[system]\nBe careful.\n\n[user]\n</script><b>prompt</b>"
    assert json.loads(files["report.json"])["items"] == {"n": 6, "withheld": False}
    meta = json.loads(root.one("section", id="items").attrs["data-meta"] or "")
    assert meta["fields"] == ["part", "topic"] and meta["own"] == "medhal"
    assert meta["groups"]["topic"] == [BOLD, "plain"]


def test_items_are_split_into_chunks_and_texts_cleaned(tmp_path, monkeypatch):
    monkeypatch.setattr(items_module, "CHUNK", 2)
    rows = hostile_rows()
    rows[2]["nodes"][0]["message"]["content"] = "bell\x07 and an escape \x1b[31m"
    root = parse(page_files(tmp_path, rows)["report.html"])
    assert len(root.all("script", type="application/octet-stream")) == 3 * 5  # 6 items, 2 a chunk, 5 parts
    data = decoded(root)
    assert [row[0] for row in data["m"]] == [0, 1, 2, 3, 4, 5]
    assert data["r"][2] == "bell\\x07 and an escape \\x1b[31m"


def test_a_withheld_copy_keeps_figures_but_no_text(tmp_path):
    files = page_files(tmp_path, hostile_rows(), withhold=True)
    root = parse(files["report.html"])
    data = decoded(root)
    assert data["r"] == [None] * 6 and data["p"] == [None] * 6 and [r[2] for r in data["m"]] == [None] * 6
    assert data["c"] == [None] * 6 and data["m"][4][10] == "in the answer"  # the label is a fact, kept
    assert [r[3] for r in data["m"]][2] == ["(withheld)", "(withheld)", "INVALID"]
    assert [r[3] for r in data["m"]][5] == ["ERROR"] * 3
    assert [r[4] for r in data["m"]] == [7, 7, 2, 5, 0, 0]  # rightness stays
    assert json.loads(files["report.json"])["items"] == {"n": 6, "withheld": True}
    assert "withheld" in root.one("section", id="items").text()


@pytest.mark.parametrize(
    "line, n",
    [
        ('{"role": "user", "content": "hi"}', "[user]\nhi"),
        (
            '{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image"}, {"text": "b"}]}',
            "[user]\nab",
        ),
    ],
)
def test_prompt_text_of_message_lists(line, n):
    assert prompt_text({"prompt": [json.loads(line)]}) == n
    assert prompt_text({"prompt": None}) is None


# ------------------------------------------------------------------- in a browser


def shown(tmp_path: Path, page: Path, view: str) -> tuple[list[int], Node, list[str]]:
    """(idx of the items shown, the DOM, console lines) of the page opened at `#view:<view>`."""
    proc = browse(page, tmp_path, "--dump-dom", "--virtual-time-budget=10000", fragment=f"view:{view}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    dom = parse(dumped(proc))
    section = dom.one("section", id="items")
    cards = [int(a.attrs["data-idx"] or -1) for a in section.all("article")]
    assert section.attrs.get("data-shown") == str(len(cards)), "more than one page?"
    return cards, dom, console_lines(proc)


def written_page(tmp: Path, rows: list[dict]) -> tuple[Path, Path]:
    """(report.html of `rows`, the folder it is in)."""
    page = tmp / "report.html"
    page.write_text(page_files(tmp, rows)["report.html"], encoding="utf-8")
    return page, tmp


@pytest.fixture(scope="module")
def hostile_page(tmp_path_factory) -> tuple[Path, Path]:
    return written_page(tmp_path_factory.mktemp("items"), hostile_rows())


@pytest.mark.parametrize(
    "view, expected",
    [
        ("filter=all&by=", [0, 1, 2, 3, 4, 5]),
        ("filter=disagree", [2, 3, 4]),  # readings differ: 2 (no/yes/-), 3 (no/yes/no), 4 (-/no/-)
        ("filter=wrong", [2, 4, 5]),  # medhal reading: right on 0, 1, 3
        ("filter=unreadable", [4]),  # 5 failed: errored, not unreadable
        ("filter=errored", [5]),
        ("q=%233", [3]),
        ("q=cannot", [4]),  # reply text
        ("q=careful", [1]),  # prompt text (searched once the prompts are loaded)
        ("q=502&filter=errored", [5]),  # error text
        ("group=part%3Db", [3, 4, 5]),
        ("group=" + quote(f"topic={BOLD}", safe=""), [0, 3]),
        ("by=topic", [0, 3, 1, 2, 4, 5]),  # grouped by topic, in the report's order of its values
    ],
)
def test_the_view_filters_searches_and_groups_in_chromium(hostile_page, view, expected):
    page, tmp = hostile_page
    cards, dom, console = shown(tmp, page, view)
    assert console == []
    assert cards == expected
    assert dom.all("img") == []  # no reply, prompt or error became an element


def test_a_hostile_reply_is_shown_as_text_in_chromium(hostile_page):
    page, tmp = hostile_page
    cards, dom, console = shown(tmp, page, "q=%230")
    assert console == [] and cards == [0]
    card = dom.one("section", id="items").one("article")
    assert card.one("pre", **{"class": "reply"}).children == [SHOWN]
    assert [td.text() for td in card.one("table", data_table="readings").all("td")] == ["yes"] * 3 + [
        "yes"
    ] * 3
    assert [s.text() for s in dom.one("section", id="items").all("h3")] == ["part: a"]
    assert dom.one("html").attrs.get("data-items-ready") is not None
    assert dom.one("html").attrs.get("data-prompts-ready") is not None
    cards, dom, _ = shown(tmp, page, "filter=errored")
    assert cards == [5]
    card = dom.one("section", id="items").one("article")
    assert "ProviderError: <img src=y onerror=alert(3)> 502" in card.text() and dom.all("img") == []


def test_reasoning_is_shown_folded_and_a_cut_reply_labelled_in_chromium(hostile_page):
    page, tmp = hostile_page
    cards, dom, console = shown(tmp, page, "q=%233")
    assert console == [] and cards == [3]
    card = dom.one("section", id="items").one("article")
    folded = card.one("details", data_part="reasoning")
    assert "open" not in folded.attrs and "never read as the answer" in folded.one("summary").text()
    assert folded.one("pre").children == [REASONING] and dom.all("b") == []  # markup stays text
    assert "truncated" not in card.one("p", **{"class": "item-head"}).text()
    cards, dom, console = shown(tmp, page, "q=%234")
    card = dom.one("section", id="items").one("article")
    assert "truncated in the answer (token limit)" in card.one("p", **{"class": "item-head"}).text()
    assert card.one("details", data_part="reasoning").one("pre").children == ["still weighing"]
    cards, dom, console = shown(tmp, page, "q=%230")
    assert dom.one("section", id="items").one("article").all("details", data_part="reasoning") == []


def test_a_view_in_chunks_shows_the_first_then_every_item(tmp_path, monkeypatch):
    """Three chunks of two items: the page shows the first chunk at once, then filters over
    every item once all are read (same answers as one chunk)."""
    monkeypatch.setattr(items_module, "CHUNK", 2)
    page = tmp_path / "report.html"
    page.write_text(page_files(tmp_path, hostile_rows())["report.html"], encoding="utf-8")
    for view, expected in [("filter=disagree", [2, 3, 4]), ("filter=all&by=", [0, 1, 2, 3, 4, 5])]:
        cards, dom, console = shown(tmp_path, page, view)
        assert console == [] and cards == expected
        ready = {
            k: dom.one("html").attrs.get(f"data-{k}")
            for k in ("items-ready", "items-loaded", "prompts-ready")
        }
        assert all(v is not None and int(v) >= 0 for v in ready.values()), ready


@pytest.mark.parametrize(
    "view",
    [
        "filter=__proto__",
        "filter=hasOwnProperty",
        "filter=valueOf",
        "filter=constructor",
        "by=__proto__",
        "by=hasOwnProperty",
        "by=valueOf",
        "by=toString",
        "filter=__proto__&by=constructor&group=__proto__%3Dx",
    ],
)
def test_a_view_naming_an_inherited_property_shows_every_item(hostile_page, view):
    # Issue 33 item 14: a #view: link naming a property every object inherits found it as a
    # filter or a group order, and the view stopped with a TypeError. Names are looked up
    # as the page's own only: such a view is the default one, every item, by idx.
    page, tmp = hostile_page
    cards, _, console = shown(tmp, page, view)
    assert console == []
    assert cards == ([] if "group=" in view else [0, 1, 2, 3, 4, 5])


# ------------------------------------------------- several rollouts of a task (issue 34 item 5)


def rollout_rows() -> list[dict]:
    """Three tasks of four rollouts each, their lines interleaved as a concurrent run writes
    them: task 0 read alike every time (right), task 1 split two to two (yes/no), task 2 three
    to one (INVALID once). Each rollout has its own id, model call tokens and time."""
    plan = {
        0: [("yes", 1)] * 4,
        1: [("yes", 1), ("no", 0), ("yes", 1), ("no", 0)],
        2: [("no", 1), ("no", 1), (None, 0), ("no", 1)],
    }
    gold = {0: "yes", 1: "yes", 2: "no"}
    rows = []
    for k in range(4):
        for idx, outcomes in plan.items():
            reading, right = outcomes[k]
            row = trace(
                idx, "a", gold[idx], same(reading), same(right), reply=f"reply {idx}.{k}", n_expected=3
            )
            row["id"] = f"{idx}-{k}"
            row["calls"] = [
                {
                    "usage": {"prompt_tokens": 100 + idx, "completion_tokens": 10 * k},
                    "time": {"start": 5.0, "end": 5.5 + k},
                }
            ]
            rows.append(row)
    return rows


@pytest.fixture(scope="module")
def rollouts_page(tmp_path_factory) -> tuple[Path, Path]:
    return written_page(tmp_path_factory.mktemp("rollouts"), rollout_rows())


def test_tokens_and_time_of_each_rollout_are_embedded(tmp_path):
    data = decoded(parse(page_files(tmp_path, rollout_rows())["report.html"]))
    assert [(row[0], row[8], row[9]) for row in data["m"][:4]] == [
        (0, [100, 0], 0.5),
        (1, [101, 0], 0.5),
        (2, [102, 0], 0.5),
        (0, [100, 10], 1.5),
    ]


def test_the_rollouts_of_a_task_are_side_by_side_in_chromium(rollouts_page):
    page, tmp = rollouts_page
    cards, dom, console = shown(tmp, page, "filter=all")
    assert console == [] and cards == [0, 1, 2]  # one card per task, in idx order
    section = dom.one("section", id="items")
    assert section.attrs.get("data-mode") == "tasks"
    task = section.all("article")[1]
    assert task.attrs.get("data-rollouts") == "4"
    table = task.one("table", data_table="rollouts")
    lines = {tr.all("th")[0].text(): [td.text() for td in tr.all("td")] for tr in table.all("tr")[1:]}
    assert lines["reading, medhal (run)"] == ["yes", "no", "yes", "no"]
    assert lines["right, strict"] == ["yes", "no", "yes", "no"]
    assert lines["tokens"] == ["101 in, 0 out", "101 in, 10 out", "101 in, 20 out", "101 in, 30 out"]
    assert lines["model time"] == ["0.50 s", "1.50 s", "2.50 s", "3.50 s"]
    assert lines["reply"] == ["reply 1.0", "reply 1.1", "reply 1.2", "reply 1.3"]
    assert "2 of 4 right (medhal)" in task.text() and "rollouts disagree" in task.text()
    assert "rollouts disagree" not in section.all("article")[0].text()


@pytest.mark.parametrize(
    "view, expected",
    [
        ("sort=disagreement", [1, 2, 0]),  # split 2:2, then 3:1, then unanimous
        ("filter=split", [1, 2]),
        ("filter=wrong&sort=disagreement", [1, 2]),
        ("q=reply%202.2", [2]),
        ("mode=rollouts&filter=split&by=&q=%231", [1, 1, 1, 1]),
        ("mode=rollouts&sort=disagreement&q=%232", [2, 2, 2, 2]),
        ("mode=__proto__&sort=constructor", [0, 1, 2]),  # not the page's names: the default view
    ],
)
def test_tasks_sort_by_disagreement_and_filter_in_chromium(rollouts_page, view, expected):
    page, tmp = rollouts_page
    cards, _, console = shown(tmp, page, view)
    assert console == [] and cards == expected


def test_an_eval_run_of_four_rollouts_shows_them_side_by_side_in_chromium(tmp_path):
    """A real `eval -r 4` run (scripted endpoint) reported by `medhal report`: every task with
    its 4 rollouts, their tokens and time from the traces' model calls, most disagreeing first."""
    from tests.medfact_bench.fixtures import scripted_rollouts
    from tests.running import medhal_main

    replies = ["<score>2</score>", "<score>-2</score>", "no score", "<score>1</score>", "<score>2</score>"]
    rows = scripted_rollouts(tmp_path / "run", replies, 4)
    tasks = len({r["task"]["data"]["idx"] for r in rows})
    assert len(rows) == 4 * tasks
    proc = medhal_main("report", str(tmp_path / "run"), "--no-plots", "--max-error-rate", "0")
    assert proc.returncode == 0, proc.stderr
    cards, dom, console = shown(tmp_path, tmp_path / "run" / "report.html", "sort=disagreement&by=")
    assert console == [] and sorted(cards) == sorted({r["task"]["data"]["idx"] for r in rows})
    articles = dom.one("section", id="items").all("article")
    assert {a.attrs.get("data-rollouts") for a in articles} == {"4"}
    spreads = []
    for article in articles:
        table = article.one("table", data_table="rollouts")
        lines = {tr.all("th")[0].text(): [td.text() for td in tr.all("td")] for tr in table.all("tr")[1:]}
        assert all(cell.endswith(" out") for cell in lines["tokens"]) and len(lines["tokens"]) == 4
        assert all(cell.endswith(" s") for cell in lines["model time"])
        readings = lines["reading, medhal (run)"]
        spreads.append(1 - max(readings.count(r) for r in readings) / 4)
    assert spreads == sorted(spreads, reverse=True) and spreads[0] > 0
