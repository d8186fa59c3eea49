"""MedHallu figures: `medhal score` against scikit-learn under both F1 conventions, the
figures function, and an end-to-end `eval` + `medhal report` run."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, precision_recall_fscore_support

import medhallu
from medhal.metrics import ERROR, INVALID
from medhal.report import Item
from medhallu.report import detection_figures
from tests.conftest import run_eval, run_medhal

pytest_plugins = ["tests.medhallu_fixtures"]

# Replies of every shape, with the verdict each must be read as (2 = not sure, None = INVALID).
REPLIES = {
    "0": 0,
    "1": 1,
    "0.": 0,
    "Answer: 1": 1,
    "1 (hallucinated)": 1,
    "factual": 0,
    "Hallucinated.": 1,
    "Not hallucinated": 0,
    "<think>the numbers differ</think>\n1": 1,
    "<think>consistent</think>0": 0,
    "2": 2,
    "not sure": 2,
    "Unsure": 2,
    "<think>this never ends": None,
    "I would need the full paper.": None,
}
NOT_VERDICT = -1


def sklearn_figures(gold: list[int], verdicts: list[int | None]) -> dict[str, float]:
    """The same figures from scikit-learn: paper = non-verdicts dropped; strict = kept as a
    third label that is never the positive class."""
    y_true = np.array(gold)
    y_pred = np.array([v if v in (0, 1) else NOT_VERDICT for v in verdicts])
    kept = y_pred != NOT_VERDICT
    out = {}
    p, r, f, _ = precision_recall_fscore_support(y_true[kept], y_pred[kept], labels=[1], average=None, zero_division=0)
    out.update(precision_paper=p[0], recall_paper=r[0], f1_paper=f[0], accuracy_paper=accuracy_score(y_true[kept], y_pred[kept]))
    p, r, f, _ = precision_recall_fscore_support(y_true, y_pred, labels=[1], average=None, zero_division=0)
    out.update(precision_strict=p[0], recall_strict=r[0], f1_strict=f[0], accuracy_strict=accuracy_score(y_true, y_pred))
    n = len(verdicts)
    out.update(
        response_rate=float(kept.sum()) / n,
        not_sure_rate=sum(v == 2 for v in verdicts) / n,
        invalid_rate=sum(v is None for v in verdicts) / n,
    )
    return out


def test_medhal_score_matches_sklearn_under_both_conventions(official_asset, shared_data, tmp_path):
    dataset = shared_data / "medhallu" / "pqa_labeled.jsonl"
    rows = [json.loads(line) for line in dataset.read_text(encoding="utf-8").split("\n") if line.strip()]
    rng = random.Random(1)
    shapes = list(REPLIES)
    predictions, gold, verdicts, difficulty = [], [], [], []
    missing = {17, 250, 1999}  # no prediction: ERROR, dropped by paper, a miss for strict
    for idx in range(2 * len(rows)):
        label = idx % 2  # items alternate factual (0), hallucinated (1)
        # lean towards the right verdict so the figures are not all near 0.5
        reply = rng.choice(shapes) if rng.random() < 0.6 else ("1" if label else "0")
        gold.append(label)
        difficulty.append(rows[idx // 2]["Difficulty Level"])
        if idx in missing:
            verdicts.append(None)
            continue
        verdicts.append(REPLIES[reply])
        predictions.append({"idx": idx, "reply": reply})
    pred_file = tmp_path / "predictions.jsonl"
    pred_file.write_text("".join(json.dumps(p) + "\n" for p in predictions))
    out = tmp_path / "scored"
    proc = run_medhal("score", "medhallu", "--dataset-path", str(dataset), "--predictions", str(pred_file), "-o", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "3 of 2000 tasks had no prediction" in proc.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["n"] == 2000 and report["n_errors"] == 3 and report["paper_comparable"]

    def check(figures: dict, indices: list[int]) -> None:
        expected = sklearn_figures([gold[i] for i in indices], [verdicts[i] for i in indices])
        # strict invalid_rate excludes the ERROR items, which the shared error_rate counts
        expected["invalid_rate"] -= sum(1 for i in indices if i in missing) / len(indices)
        for key, value in expected.items():
            assert figures[key] == pytest.approx(value, abs=1e-12), key
        assert figures["verdicts"] == sum(1 for i in indices if verdicts[i] in (0, 1))
        for convention in ("paper", "strict"):
            lo, hi = figures[f"f1_{convention}_ci"]
            assert lo <= figures[f"f1_{convention}"] <= hi and hi - lo < 0.2

    check(report["overall"], list(range(2000)))
    for level in ("easy", "medium", "hard"):
        check(report["groups"]["difficulty"][level], [i for i in range(2000) if difficulty[i] == level])
    assert report["micro_accuracy"] == pytest.approx(sklearn_figures(gold, verdicts)["accuracy_strict"])
    confusion = report["confusion"]
    assert list(confusion["factual"]) == ["factual", "hallucinated", "not_sure", INVALID, ERROR]
    assert sum(row["not_sure"] for row in confusion.values()) == sum(v == 2 for v in verdicts)
    assert sum(row[ERROR] for row in confusion.values()) == 3
    markdown = (out / "report.md").read_text()
    assert "f1_paper" in markdown and "f1_strict" in markdown and "### By category" in markdown


def _item(idx: int, gold: str, pred: str, cluster: str) -> Item:
    return Item(idx, {}, gold, pred, float(gold == pred), pred != INVALID, {}, cluster, None)


def test_figures_on_hand_items():
    items = [
        _item(0, "factual", "factual", "r0"),
        _item(1, "hallucinated", "hallucinated", "r0"),
        _item(2, "factual", "not_sure", "r1"),
        _item(3, "hallucinated", "not_sure", "r1"),
        _item(4, "factual", "hallucinated", "r2"),
        _item(5, "hallucinated", INVALID, "r2"),
    ]
    figures = detection_figures(items)
    # paper keeps items 0, 1, 4: TP 1, FP 1, FN 0
    assert (figures["precision_paper"], figures["recall_paper"]) == (0.5, 1.0)
    assert figures["f1_paper"] == pytest.approx(2 / 3)
    assert figures["accuracy_paper"] == pytest.approx(2 / 3)
    # strict: TP 1, FP 1, FN 2 (items 3 and 5 missed)
    assert (figures["precision_strict"], figures["recall_strict"]) == (0.5, pytest.approx(1 / 3))
    assert figures["f1_strict"] == pytest.approx(0.4)
    assert figures["accuracy_strict"] == pytest.approx(2 / 6)
    assert (figures["response_rate"], figures["not_sure_rate"], figures["invalid_rate"]) == (0.5, pytest.approx(1 / 3), pytest.approx(1 / 6))
    assert figures["verdicts"] == 3


def test_empty_and_all_abstained_groups():
    assert detection_figures([])["f1_paper"] == 0.0
    figures = detection_figures([_item(0, "hallucinated", "not_sure", "r0")])
    assert figures["verdicts"] == 0 and figures["f1_paper"] == 0.0 and figures["recall_strict"] == 0.0
    assert figures["f1_paper_ci"] == [0.0, 0.0]


def test_ci_resamples_rows_not_items():
    # Both items of a row are right or both wrong: resampling rows must give a wider
    # interval than pretending the items were independent would.
    items = []
    for row in range(60):
        right = row % 3 != 0
        items.append(_item(2 * row, "factual", "factual" if right else "hallucinated", f"r{row}"))
        items.append(_item(2 * row + 1, "hallucinated", "hallucinated" if right else "factual", f"r{row}"))
    clustered = detection_figures(items)["f1_strict_ci"]
    independent = detection_figures([_item(i.idx, i.gold, i.pred, str(i.idx)) for i in items])["f1_strict_ci"]
    assert clustered[1] - clustered[0] > independent[1] - independent[0]


def test_eval_end_to_end_with_scripted_replies(invented_asset, endpoint, tmp_path):
    rows = [json.loads(line) for line in Path(medhallu.DEMO_OPTIONS["dataset_path"]).read_text().split("\n") if line.strip()]
    # (factual reply, hallucinated reply) for each demo row
    script = {
        rows[0]["Ground Truth"]: "0",
        rows[0]["Hallucinated Answer"]: "1 (hallucinated)",
        rows[1]["Ground Truth"]: "2",
        rows[1]["Hallucinated Answer"]: "I am not sure.",
        rows[2]["Ground Truth"]: "<think>checking the percentages",
        rows[2]["Hallucinated Answer"]: "<think>no such trial</think>\nAnswer: 1",
    }

    def reply(body, number):
        text = body["messages"][-1]["content"]
        return next(r for answer, r in script.items() if f"\nA: {answer}\n" in text)

    ep = endpoint(reply)
    out = tmp_path / "run"
    args = [a for k, v in medhallu.DEMO_OPTIONS.items() for a in (f"--taskset.{k}", str(v))]
    traces = run_eval("medhallu", ep.base_url, out, *args, env=invented_asset)
    assert len(traces) == 6 and len(ep.requests) == 6
    assert all(len(r["messages"]) == 1 and r["messages"][0]["role"] == "user" for r in ep.requests)
    by_idx = {t["task"]["data"]["idx"]: t for t in traces}
    assert [by_idx[i]["info"]["pred_label"] for i in range(6)] == ["factual", "hallucinated", "not_sure", "not_sure", None, "hallucinated"]
    assert [by_idx[i]["rewards"]["detection"] for i in range(6)] == [1.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    proc = run_medhal("report", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    overall = report["overall"]
    # paper keeps idx 0, 1, 5: all right; strict adds a missed hallucination (idx 3)
    assert (overall["precision_paper"], overall["recall_paper"], overall["f1_paper"]) == (1.0, 1.0, 1.0)
    assert overall["precision_strict"] == 1.0
    assert overall["recall_strict"] == pytest.approx(2 / 3) and overall["f1_strict"] == pytest.approx(0.8)
    assert overall["accuracy_paper"] == 1.0 and overall["accuracy_strict"] == 0.5
    assert (overall["response_rate"], overall["not_sure_rate"], overall["invalid_rate"]) == (0.5, pytest.approx(1 / 3), pytest.approx(1 / 6))
    assert report["groups"]["difficulty"]["medium"]["not_sure_rate"] == 1.0
    assert report["groups"]["difficulty"]["hard"]["f1_paper"] == 1.0
    assert report["provenance"]["data"]["prompt"]["asset"]["sha256"] == json.loads(invented_asset["MEDHAL_ASSET_SHA256"]).popitem()[1]
    assert {"confusion.png", "by_difficulty.png", "by_category.png"} <= set(report["plots"])
