"""Each benchmark's headline is the first figure a reader sees, wherever the report is shown:
report.md's summary table, the summary `medhal score` and `medhal report` print, report.html's
first table and the demo's table (its report.md and report.html). Checked on the real files
of real runs: every environment's demo rows scored by `medhal score`, and the demo's own
summary written from those reports.

The headlines, named as the papers name them (written down before running anything):
MedHallu "F1 of the hallucinated class" (`f1_paper`), Med-HALT "Pointwise Score (eq. 1)" per
test set (`paper_score`), MedFact-Bench "macro accuracy over the components" (`macro_accuracy`).
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

import pytest

from tests.medhal.test_html import a_table, parse
from tests.running import medhal_main

DEMO = Path(__file__).resolve().parents[2] / "environments"

RUNS = {
    # MedHallu: three rows, both items each; every reply "1" (hallucinated): tp 3, predicted 6,
    # positives 3 -> F1 = 2 * 3 / (6 + 3) = 0.667.
    "medhallu": (
        [
            "--taskset.dataset-path",
            str(DEMO / "medhallu/medhallu/demo/pqa_labeled.jsonl"),
            "--taskset.prompts",
            "demo",
        ],
        lambda idx: "1",
    ),
    # Med-HALT: three items of each of the seven sets, every reply "I do not know.": no answer
    # read, so every item is wrong (Pointwise Score -0.25) except the fake questions, where
    # declining is the right answer (the default `decline` rule): that set scores +1.
    "med-halt": (
        ["--taskset.dataset-path", str(DEMO / "med_halt/med_halt/demo"), "--taskset.prompts", "demo"],
        lambda idx: "I do not know.",
    ),
    # MedFact-Bench: gold SUPPORT (scifact), CONTRADICT (healthver), SUPPORT (medaesqa), NEI
    # (pubmedqa-fact), SUPPORT and CONTRADICT (bioasq-fact); the replies read SUPPORT,
    # CONTRADICT, NEI, INVALID, SUPPORT, CONTRADICT: per component 1, 1, 0, 0, 2/2 -> 3 / 5.
    "medfact-bench": (
        ["--taskset.dataset-path", str(DEMO / "medfact_bench/medfact_bench/demo/medfact_demo.jsonl")],
        [
            "<score>2</score>",
            "<score>-2</score>",
            "<score>0</score>",
            "no score",
            "<score>1</score>",
            "<score>-1</score>",
        ].__getitem__,
    ),
}
HEADLINES = {
    "medhallu": ("F1 of the hallucinated class", "f1_paper", None, {None: "0.667"}),
    "med-halt": (
        "Pointwise Score (eq. 1)",
        "paper_score",
        "test_set",
        {
            s: "1.000" if s == "reasoning_fake" else "-0.250"
            for s in (
                "reasoning_FCT",
                "reasoning_nota",
                "reasoning_fake",
                "IR_pmid2title",
                "IR_pubmedlink2title",
                "IR_title2pubmedlink",
                "IR_abstract2pubmedlink",
            )
        },
    ),
    "medfact-bench": ("macro accuracy over the components", "macro_accuracy", None, {None: "0.600"}),
}


def task_ids(env_id: str, options: list[str]) -> list[int]:
    from medhal.kit.lines import select_tasks, taskset_class
    from medhal.kit.options import parse_taskset_options, taskset_config

    config = taskset_config(env_id, parse_taskset_options(options))
    return [t.data.idx for t in select_tasks(taskset_class(env_id)(config))]


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> dict[str, tuple[Path, str]]:
    """Each environment's demo rows scored by `medhal score`: (run directory, what it printed)."""
    root = tmp_path_factory.mktemp("headline")
    out = {}
    for env_id, (options, reply) in RUNS.items():
        predictions = root / f"{env_id}.jsonl"
        predictions.write_text(
            "".join(json.dumps({"idx": i, "reply": reply(i)}) + "\n" for i in task_ids(env_id, options))
        )
        run = root / env_id
        proc = medhal_main(
            "score", env_id, "--predictions", str(predictions), "-o", str(run), "--no-plots", *options
        )
        assert proc.returncode == 0, proc.stderr
        out[env_id] = (run, proc.stdout)
    return out


def expected_rows(env_id: str) -> list[tuple[str, str]]:
    """(label, value) of each headline row, as written down above."""
    name, _, _, values = HEADLINES[env_id]
    return [(name if group is None else f"{name}, {group}", value) for group, value in values.items()]


def markdown_tables(text: str) -> list[list[list[str]]]:
    """The tables of a Markdown text, each as its rows of cells (the header first)."""
    tables, current = [], []
    for line in text.splitlines():
        if line.startswith("|"):
            if not line.startswith("|---"):
                current.append([cell.strip() for cell in line.strip("|").split("|")])
        elif current:
            tables.append(current)
            current = []
    return tables + ([current] if current else [])


@pytest.mark.parametrize("env_id", list(RUNS))
def test_report_md_leads_its_summary_with_the_headline(scored, env_id):
    run, _ = scored[env_id]
    _, statistic, _, _ = HEADLINES[env_id]
    first = markdown_tables((run / "report.md").read_text(encoding="utf-8"))[0]
    assert first[0] == ["figure", "value"]
    rows = expected_rows(env_id)
    assert [(cells[0], cells[1].split()[0]) for cells in first[1 : 1 + len(rows)]] == [
        (f"{label} (`{statistic}`, 95% CI)", value) for label, value in rows
    ]
    assert first[1 + len(rows)][0] == "n"  # the rest of the summary follows the headline
    # The table by reading convention leads with it too (its mean over the sets for Med-HALT).
    by_convention = markdown_tables((run / "report.md").read_text(encoding="utf-8"))[1]
    lead = statistic if HEADLINES[env_id][2] is None else f"macro_{statistic}"
    assert f"(`{lead}`)" in by_convention[1][0]


@pytest.mark.parametrize("env_id", list(RUNS))
def test_the_printed_summary_leads_with_the_headline(scored, env_id):
    _, printed = scored[env_id]
    name, _, per, _ = HEADLINES[env_id]
    lines = [line for line in printed.splitlines() if not line.startswith("DEMO PROMPTS")]
    assert lines[0].endswith(", offline")  # the title and the model: no figure yet
    if per is None:
        [(_, value)] = expected_rows(env_id)
        assert re.fullmatch(rf"{re.escape(name)} \(medhal reading\): {value} \[\S+, \S+\]", lines[1]), lines[
            1
        ]
    else:
        assert lines[1] == f"{name} per {per} (medhal reading):"
        groups = HEADLINES[env_id][3]
        shown = [line.split()[:2] for line in lines[2 : 2 + len(groups)]]
        assert shown == [[group, value] for group, value in groups.items()]
    assert any(line.startswith("Complete: ") for line in lines[1:])


@pytest.mark.parametrize("env_id", list(RUNS))
def test_report_html_leads_its_first_table_with_the_headline(scored, env_id):
    run, _ = scored[env_id]
    _, statistic, _, _ = HEADLINES[env_id]
    root = parse((run / "report.html").read_text(encoding="utf-8"))
    first = root.all("table")[0]
    assert first.attrs.get("data-table") == "summary"
    _, rows, _ = a_table(root, "summary")
    expected = expected_rows(env_id)
    assert [(r[0], r[1].split()[0]) for r in rows[: len(expected)]] == [
        (f"{label} ({statistic}, 95% CI)", value) for label, value in expected
    ]


def test_the_demo_table_leads_each_benchmark_with_its_headline(scored, tmp_path, capsys):
    """The demo's summary (printed, report.md, report.html), written by the demo's own code
    from the three reports."""
    from medhal.commands.demo import summarise

    reports = [json.loads((scored[e][0] / "report.json").read_text()) for e in RUNS]
    code = summarise(argparse.Namespace(max_error_rate=1.0), reports, [], [], "x", "m", tmp_path, time.time())
    assert code == 0
    expected = [(env_id, label, value) for env_id in RUNS for label, value in expected_rows(env_id)]
    header = [
        "benchmark",
        "headline (as the paper names it)",
        "value (95% CI)",
        "items",
        "errors",
        "replies read",
    ]
    for text in (capsys.readouterr().out, (tmp_path / "report.md").read_text(encoding="utf-8")):
        table = markdown_tables(text)[0]
        assert table[0] == header
        assert [(r[0], r[1], r[2].split()[0]) for r in table[1:]] == expected
    root = parse((tmp_path / "report.html").read_text(encoding="utf-8"))
    assert root.all("table")[0].attrs.get("data-table") == "combined"
    html_header, rows, _ = a_table(root, "combined")
    assert html_header == header
    assert [(r[0], r[1], r[2].split()[0]) for r in rows] == expected
    # Med-HALT's rows say what each covers: three items per set, none failed.
    assert {(r[3], r[4]) for r in rows if r[0] == "med-halt"} == {("3", "0")}


@pytest.mark.slow(reason="`medhal demo` end to end: an eval process per environment")
def test_medhal_demo_prints_each_benchmarks_headline_first(endpoint, tmp_path):
    from tests.conftest import run_medhal

    ep = endpoint(lambda body, n: "I do not know.")
    out = tmp_path / "demo"
    proc = run_medhal(
        "demo",
        "--base-url",
        ep.base_url,
        "--model",
        "scripted",
        "--demo-prompts",
        "-o",
        str(out),
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    table = markdown_tables(proc.stdout)[0]
    assert table[0][:3] == ["benchmark", "headline (as the paper names it)", "value (95% CI)"]
    first_rows = {}
    for row in table[1:]:
        first_rows.setdefault(row[0], row[1])
    # The collection's benchmarks (a test environment the suite installs, tests/environments/,
    # runs in the demo too, with its own headline).
    collection = {
        "med-halt": "Pointwise Score (eq. 1), reasoning_FCT",
        "medfact-bench": "macro accuracy over the components",
        "medhallu": "F1 of the hallucinated class",
    }
    assert {name: first_rows.get(name) for name in collection} == collection
    assert markdown_tables((out / "report.md").read_text(encoding="utf-8"))[0] == table
