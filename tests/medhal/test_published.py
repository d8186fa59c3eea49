"""Published points beside a run, labelled as what they are (the paper, an independent
replication, a trivial baseline, another suite's protocol), shown only where the run is their
setting, whole: the environments' own `published.csv` and report specs, on complete runs of
each benchmark's size made of synthetic traces (every reply right under every reading but a
chosen share, so each run value is known by hand).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from medhal.kit.published import KINDS, Published, published_row
from medhal.reports.markdown import to_markdown
from medhal.reports.registry import report_spec
from medhal.reports.report import build_report, read_run

MEDFACT_SIZES = {
    "scifact": 340,
    "healthver": 903,
    "medaesqa": 9106,
    "pubmedqa-fact": 500,
    "bioasq-fact": 3425,
}
GOLD = {"SUPPORT": 10118, "NEI": 2988, "CONTRADICT": 1168}
"""The benchmark's gold label counts (as the replication's confusion matrix sums them)."""


def trace(idx: int, data: dict, options: dict, n: int, reading: str, right: bool) -> dict:
    """A trace read `reading` under every convention, right or not."""
    metrics = {}
    for convention in ("medhal", "authors", "strict"):
        metrics[f"correct_{convention}"] = float(right)
        metrics[f"parsed_{convention}"] = 1.0
    return {
        "id": f"t{idx}",
        "task": {
            "type": "Task",
            "data": {
                "idx": idx,
                "parser": "medhal",
                "selection": {"n_expected": n, "contiguous": True},
                "provenance": {"options": options, "code": {"environment_version": "9.9.9"}},
                **data,
            },
        },
        "nodes": [{"message": {"role": "assistant", "content": reading}, "sampled": True}],
        "metrics": metrics,
        "rewards": {"reward": float(right)},
        "info": {"readings": dict.fromkeys(("medhal", "authors", "strict"), reading)},
        "errors": [],
    }


def report_of(tmp_path: Path, env_id: str, traces: list[dict]) -> dict:
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in traces))
    return build_report(read_run(path, report_spec(env_id)))


def medfact_run(tmp_path: Path, options: dict, drop_last: bool = False) -> dict:
    """All 14,274 items with the benchmark's gold counts; every reply SUPPORT, so exactly the
    SUPPORT items are right: micro accuracy 10,118 / 14,274."""
    labels = [label for label, count in GOLD.items() for _ in range(count)]
    components = [c for c, size in MEDFACT_SIZES.items() for _ in range(size)]
    traces = [
        trace(
            i,
            {"benchmark": "medfact-bench", "dataset": c, "label": g, "source_id": str(i)},
            options,
            14274,
            "SUPPORT",
            g == "SUPPORT",
        )
        for i, (c, g) in enumerate(zip(components, labels, strict=True))
    ]
    return report_of(tmp_path, "medfact-bench", traces[:-1] if drop_last else traces)


PINNED = {"subset": "all", "split": "test", "invalid_reward": 0.0, "parser": "medhal", "revision": None}


def test_a_medfact_run_of_the_replications_setting_shows_its_points_labelled(tmp_path):
    report = medfact_run(tmp_path, PINNED)
    rows = report["published"]
    assert [r["kind"] for r in rows] == sorted((r["kind"] for r in rows), key=list(KINDS).index)
    by_kind = {kind: [r for r in rows if r["kind"] == kind] for kind in KINDS}
    assert len(by_kind["paper"]) == 9 * 6  # Figure 3: nine models, macro and five components
    replication = by_kind["replication"]
    # Two models x (macro, micro, parse rate, five components), and the three gold counts.
    assert len([r for r in replication if r["model"] != "gold labels"]) == 16
    qwen = {(r["statistic"], r["group"]): r for r in replication if r["model"] == "Qwen2.5-3B-Instruct"}
    assert qwen[("macro_accuracy", "")]["published"] == 0.52
    assert qwen[("accuracy", "scifact")]["published"] == round(213 / 340, 4)
    # The run: every reply SUPPORT -> micro accuracy 10,118 / 14,274 = 0.7088...
    assert qwen[("accuracy", "")]["run"] == pytest.approx(10118 / 14274)
    assert qwen[("accuracy", "")]["inside_ci"] is False  # 0.5385 is far below
    counts = {
        r["group"]: (r["published"], r["run"], r["equal"]) for r in replication if r["model"] == "gold labels"
    }
    assert counts == {label: (n, n, True) for label, n in GOLD.items()}
    [baseline] = by_kind["baseline"]
    # The constant SUPPORT reply's accuracy is this run's own (it answers SUPPORT throughout).
    assert (baseline["published"], baseline["inside_ci"]) == (0.7088, True)
    assert by_kind["other suite"] == []
    text = to_markdown(report)
    assert (
        "| kind | model | statistic | group | reading | published | this run | 95% CI | agrees | source |"
        in text
    )
    assert "| replication | gold labels | support | SUPPORT | authors | 10118 | 10118 | — | equal |" in text
    assert f"- replication: {KINDS['replication']}." in text and f"- baseline: {KINDS['baseline']}." in text


def test_a_medfact_run_of_another_dataset_revision_shows_no_replication(tmp_path):
    report = medfact_run(tmp_path, {**PINNED, "revision": "0123abc"})
    # The paper's figures do not name a revision; the replication's pin does.
    assert {r["kind"] for r in report["published"]} == {"paper"}


def test_an_incomplete_run_shows_no_published_point(tmp_path):
    assert medfact_run(tmp_path, PINNED, drop_last=True)["published"] == []


def medhallu_run(tmp_path: Path, options: dict) -> dict:
    """All 2,000 items (factual then hallucinated per row); every reply "factual": the factual
    half is right, so accuracy 0.5 under every reading."""
    traces = []
    for i in range(2000):
        gold = "hallucinated" if i % 2 else "factual"
        data = {
            "benchmark": "medhallu",
            "label": gold,
            "difficulty": ("easy", "medium", "hard")[i // 2 % 3],
            "category": "x",
            "source_id": str(i // 2),
        }
        traces.append(trace(i, data, options, 2000, "factual", gold == "factual"))
    return report_of(tmp_path, "medhallu", traces)


MEDHELM_SETTING = {
    "config": "pqa_labeled",
    "pairing": "both",
    "knowledge": True,
    "not_sure": False,
    "answer_vocabulary": "digits",
    "revision": None,
}


def test_a_medhallu_run_of_medhelms_setting_shows_its_protocol(tmp_path):
    report = medhallu_run(tmp_path, MEDHELM_SETTING)
    [helm] = [r for r in report["published"] if r["kind"] == "other suite"]
    assert (helm["model"], helm["statistic"], helm["reading"], helm["published"]) == (
        "MedHELM (HELM)",
        "accuracy",
        "strict",
        None,
    )
    assert helm["run"] == 0.5 and helm["inside_ci"] is None and helm["equal"] is None
    # The paper's rows of this setting (Tables 2 and 5: with knowledge, answer required) are there too.
    paper = [r for r in report["published"] if r["kind"] == "paper"]
    assert paper and all("with knowledge" in r["source"] and "answer required" in r["source"] for r in paper)
    text = to_markdown(report)
    assert "| other suite | MedHELM (HELM) | accuracy | all | strict | — | 0.500 |" in text
    assert f"- other suite: {KINDS['other suite']}." in text


def test_a_medhallu_run_offering_not_sure_is_not_medhelms_setting(tmp_path):
    report = medhallu_run(tmp_path, {**MEDHELM_SETTING, "not_sure": True})
    assert [r for r in report["published"] if r["kind"] == "other suite"] == []


def medhalt_fct_run(tmp_path: Path, split_type: str, n: int) -> dict:
    """`n` FCT items, one in five answered right."""
    options = {"subset": "reasoning_FCT", "split_type": split_type, "parser": "medhal"}
    traces = [
        trace(
            i,
            {
                "benchmark": "med-halt",
                "test_set": "reasoning_FCT",
                "family": "reasoning",
                "source_question": str(i),
            },
            options,
            n,
            "A",
            i % 5 == 0,
        )
        for i in range(n)
    ]
    return report_of(tmp_path, "med-halt", traces)


def test_a_medhalt_val_fct_run_shows_medmarks_protocol_only(tmp_path):
    report = medhalt_fct_run(tmp_path, "val", 5154)
    [medmarks] = report["published"]
    assert (medmarks["kind"], medmarks["model"], medmarks["group"], medmarks["reading"]) == (
        "other suite",
        "Medmarks",
        "reasoning_FCT",
        "medhal",
    )
    # 1,031 of the 5,154 items (idx 0, 5, ..., 5150) are right.
    assert medmarks["run"] == pytest.approx(1031 / 5154) and medmarks["published"] is None


def test_a_medhalt_run_of_every_split_is_not_medmarks_setting(tmp_path):
    assert medhalt_fct_run(tmp_path, "all", 5154)["published"] == []


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ({"kind": "rumour"}, "kind 'rumour' is not one of"),
        ({"reading": "loose"}, "reading 'loose' is not one of"),
        ({"value": ""}, "value is empty (only another suite's protocol may have none)"),
        ({"items": "many"}, "invalid literal"),
    ],
)
def test_a_malformed_row_is_refused(row, problem):
    good = {
        "model": "m",
        "setting": "",
        "statistic": "accuracy",
        "group": "",
        "value": "0.5",
        "source": "s",
        "kind": "paper",
        "reading": "",
        "items": "",
    }
    assert published_row(good) == Published("m", (), "accuracy", "", 0.5, "s")
    with pytest.raises(ValueError, match=re.escape(problem)):
        published_row({**good, **row})
