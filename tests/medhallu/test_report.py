"""MedHallu reports: every figure under each reading convention, counted by hand on a small
run scored with `medhal score`, checked against scikit-learn on the 2,000 shared items,
per-class figures and the confusion matrix, macro accuracy over difficulty groups of
unequal size, the unreadable-replies section, intervals that resample rows, when a run is
paper-comparable, and an end-to-end `eval` + `medhal report` run.

Expected values are written as numbers, with the counting in comments; none is computed
with the code under test."""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, precision_recall_fscore_support

from medhal.kit.predictions import score_tasks, write_traces
from medhal.reports.report import build_report, read_run
from medhallu.report import REPORT
from tests.conftest import run_eval
from tests.medhallu.fixtures import PINNED_SHA256, demo_options, demo_rows_path, our_row, select
from tests.running import medhal_main
from tests.tables import read_jsonl, write_jsonl

F, H, N = "factual", "hallucinated", "not_sure"
CONVENTIONS = ("medhal", "authors", "strict")


def medhal_score(
    shared_data: Path, dataset: Path, predictions: dict[int, str], out: Path, *args: str
) -> subprocess.CompletedProcess:
    """`medhal score medhallu` (its `main`, in this process), with the pinned prompt from shared data."""
    pred_file = out.parent / f"{out.name}-predictions.jsonl"
    pred_file.write_text(
        "".join(json.dumps({"idx": i, "reply": r}) + "\n" for i, r in predictions.items()), encoding="utf-8"
    )
    return medhal_main(
        "score",
        "medhallu",
        "--predictions",
        str(pred_file),
        "-o",
        str(out),
        "--dataset-path",
        str(dataset),
        *args,
        env={"MEDHAL_ASSETS_DIR": str(shared_data), "MEDHAL_ASSET_SHA256": None},
    )


def report_of(traces: Path) -> dict:
    return build_report(read_run(traces, REPORT))


async def score_in_process(tasks: list, replies: dict[int, str], out: Path) -> dict:
    """Traces through the tasks' own scoring (`medhal.kit.predictions.score_tasks`, as `medhal score`
    does), written with `write_traces`; the report built from the file."""
    traces = await score_tasks(tasks, replies, "offline")
    return report_of(write_traces(traces, out))


# ------------------------------------------------------------------ a hand-counted run

# Seven rows written by us; difficulty groups of unequal size: easy 1 row (2 items),
# medium 2 rows (4 items), hard 4 rows (8 items). Items: 2k factual, 2k+1 hallucinated.
ROWS = [
    our_row(0, "easy", "Incomplete Information"),
    our_row(1, "medium", "Incomplete Information"),
    our_row(2, "medium", "Incomplete Information"),
    our_row(3, "hard", "Incomplete Information"),
    our_row(4, "hard", "Methodological and Evidence Fabrication"),
    our_row(5, "hard", "Methodological and Evidence Fabrication"),
    our_row(6, "hard", "Methodological and Evidence Fabrication"),
]
GARBAGE = "The study enrolled forty patients."
# idx: (reply, readings medhal / authors / strict, written by hand from the rules)
HAND = {
    0: ("0", (F, F, F)),
    1: ("1", (H, H, H)),
    2: ("Not hallucinated.", (F, H, None)),  # authors: 'not' -> 1
    3: ("not sure", (N, H, None)),  # authors: 'not' -> 1
    4: ("<think>the trial had 1 arm</think>0", (F, H, F)),  # authors keep the think block: '1' -> 1
    5: ("The answer is hallucinated.", (H, F, None)),  # authors: no 1/not/non -> 0
    6: ("Answer: 1", (H, H, None)),
    7: ("2", (N, N, N)),
    8: (GARBAGE, (None, F, None)),
    9: ("\\boxed{1}", (H, H, H)),
    # 10: no prediction -> ERROR under every convention
    11: (GARBAGE, (None, F, None)),
    12: ("The study   enrolled forty\npatients.", (None, F, None)),  # the same shape once blanks collapse
    13: ("<think>checking the numbers", (None, F, None)),  # never left its reasoning
}

# Counting per convention (gold: even idx factual, odd hallucinated; idx 10 ERROR):
#  medhal  preds 0F 1H 2F 3N 4F 5H 6H 7N 8I 9H 10E 11I 12I 13I
#          correct {0,1,2,4,5,9}=6; parsed 14-4 invalid-1 error=9; verdicts {0,1,2,4,5,6,9}=7;
#          not sure {3,7}=2; invalid {8,11,12,13}=4; gold pos 7; kept gold pos {1,5,9}=3;
#          pred pos {1,5,6,9}=4; tp {1,5,9}=3
#  authors preds 0F 1H 2H 3H 4H 5F 6H 7N 8F 9H 10E 11F 12F 13F
#          correct {0,1,3,8,9,12}=6; parsed 13; verdicts 12; not sure {7}=1; invalid 0;
#          kept gold pos {1,3,5,9,11,13}=6; pred pos {1,2,3,4,6,9}=6; tp {1,3,9}=3
#  strict  preds 0F 1H 2I 3I 4F 5I 6I 7N 8I 9H 10E 11I 12I 13I
#          correct {0,1,4,9}=4; parsed {0,1,4,7,9}=5; verdicts {0,1,4,9}=4; not sure 1;
#          invalid {2,3,5,6,8,11,12,13}=8; kept gold pos {1,9}=2; pred pos 2; tp 2
EXPECTED = {
    "medhal": {
        "accuracy": 6 / 14,
        "parse_rate": 9 / 14,
        "error_rate": 1 / 14,
        "f1_paper": 6 / 7,  # 2*3 / (4 + 3)
        "f1_strict": 6 / 11,  # 2*3 / (4 + 7)
        "precision": 3 / 4,
        "recall_paper": 3 / 3,
        "recall_strict": 3 / 7,
        "accuracy_paper": 6 / 7,  # right verdicts / verdicts
        "response_rate": 7 / 14,
        "not_sure_rate": 2 / 14,
        "invalid_rate": 4 / 14,
        # easy {0,1}: 2/2; medium {2,3,4,5}: 3/4; hard {6..13}: 1/8 -> (1 + 3/4 + 1/8) / 3
        "macro_accuracy": 5 / 8,
    },
    "authors": {
        "accuracy": 6 / 14,
        "parse_rate": 13 / 14,
        "error_rate": 1 / 14,
        "f1_paper": 1 / 2,  # 2*3 / (6 + 6)
        "f1_strict": 6 / 13,  # 2*3 / (6 + 7)
        "precision": 3 / 6,
        "recall_paper": 3 / 6,
        "recall_strict": 3 / 7,
        "accuracy_paper": 6 / 12,
        "response_rate": 12 / 14,
        "not_sure_rate": 1 / 14,
        "invalid_rate": 0.0,
        # easy 2/2; medium {3}: 1/4; hard {8,9,12}: 3/8 -> (1 + 1/4 + 3/8) / 3
        "macro_accuracy": 13 / 24,
    },
    "strict": {
        "accuracy": 4 / 14,
        "parse_rate": 5 / 14,
        "error_rate": 1 / 14,
        "f1_paper": 1.0,  # 2*2 / (2 + 2)
        "f1_strict": 4 / 9,  # 2*2 / (2 + 7)
        "precision": 2 / 2,
        "recall_paper": 2 / 2,
        "recall_strict": 2 / 7,
        "accuracy_paper": 4 / 4,
        "response_rate": 4 / 14,
        "not_sure_rate": 1 / 14,
        "invalid_rate": 8 / 14,
        # easy 2/2; medium {4}: 1/4; hard {9}: 1/8 -> (1 + 1/4 + 1/8) / 3
        "macro_accuracy": 11 / 24,
    },
}


@pytest.fixture(scope="module")
def small_dataset(tmp_path_factory) -> Path:
    return write_jsonl(tmp_path_factory.mktemp("rows") / "pqa_labeled.jsonl", ROWS)


@pytest.fixture(scope="module")
def hand_run(shared_data, small_dataset, tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict, Path]:
    out = tmp_path_factory.mktemp("hand") / "scored"
    proc = medhal_score(
        shared_data, small_dataset, {i: reply for i, (reply, _) in HAND.items()}, out, "--no-plots"
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc, json.loads((out / "report.json").read_text(encoding="utf-8")), out


def test_hand_readings_match_the_readers():
    """The table above is what the readers give (so the counts below rest on it)."""
    from medhallu.replies import read_all

    for idx, (reply, readings) in HAND.items():
        assert tuple(read_all(reply, True)[c] for c in CONVENTIONS) == readings, (idx, reply)


def test_hand_run_summary(hand_run):
    proc, report, out = hand_run
    assert "1 of 14 tasks had no prediction: recorded as errors (MissingPrediction)" in proc.stderr
    assert (report["benchmark"], report["convention"], report["n"]) == ("medhallu", "medhal", 14)
    assert (report["n_expected"], report["n_distinct"], report["n_duplicates"], report["n_missing"]) == (
        14,
        14,
        0,
        0,
    )
    assert report["complete"] is True and report["mixed_provenance"] is False
    assert report["n_errors"] == 1 and report["error_rate"] == pytest.approx(1 / 14)
    assert report["errors"] == {"MissingPrediction: no prediction for idx #": 1}
    assert report["paper_comparable"] is False  # 14 of 2,000 items, and one error
    assert report["published"] == [] and report["demo_prompts"] is False
    assert report["micro_accuracy"] == pytest.approx(6 / 14)
    assert report["macro_accuracy"] == pytest.approx(5 / 8)  # not the micro 6/14: groups weigh equally
    assert report["macro_over"] == "difficulty" and report["macro_groups"] == ["easy", "medium", "hard"]
    assert report["parse_rate"] == pytest.approx(9 / 14)
    data = report["provenance"]["data"]
    assert data["parser"] == "medhal" and data["prompt"]["asset"]["sha256"] == PINNED_SHA256
    assert report["provenance"]["selection"]["n_expected"] == 14
    markdown = (out / "report.md").read_text(encoding="utf-8")
    for word in (
        "f1_paper",
        "f1_strict",
        "medhal (run)",
        "authors",
        "strict",
        "### By difficulty",
        "### By category",
        "### Unreadable replies",
        GARBAGE,
    ):
        assert word in markdown, word


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_hand_run_figures_under_each_convention(hand_run, convention):
    _, report, _ = hand_run
    figures = report["conventions"][convention]
    for key, value in EXPECTED[convention].items():
        assert figures[key] == pytest.approx(value, abs=1e-12), key
    for key in (
        "f1_paper",
        "f1_strict",
        "precision",
        "recall_paper",
        "accuracy_paper",
        "response_rate",
        "not_sure_rate",
        "invalid_rate",
    ):
        lo, hi = figures[f"{key}_ci"]
        assert lo - 1e-12 <= figures[key] <= hi + 1e-12, key
    # the shares add up: verdicts + abstentions + INVALID + errors = all items
    assert figures["response_rate"] + figures["not_sure_rate"] + figures["invalid_rate"] + figures[
        "error_rate"
    ] == pytest.approx(1.0)


def test_hand_run_overall_is_the_runs_convention(hand_run):
    _, report, _ = hand_run
    for key, value in EXPECTED["medhal"].items():
        assert report["overall"][key] == pytest.approx(value, abs=1e-12), key
    assert report["overall"]["n_errors"] == 1


def test_hand_run_classes_and_confusion(hand_run):
    _, report, _ = hand_run
    # pairs (gold, medhal reading): F->F {0,2,4}, F->H {6}, F->INVALID {8,12}, F->ERROR {10};
    # H->H {1,5,9}, H->not_sure {3,7}, H->INVALID {11,13}
    assert report["confusion"] == {
        "factual": {"factual": 3, "hallucinated": 1, "not_sure": 0, "INVALID": 2, "ERROR": 1},
        "hallucinated": {"factual": 0, "hallucinated": 3, "not_sure": 2, "INVALID": 2, "ERROR": 0},
    }
    classes = report["classes"]
    # factual: tp 3, predicted 3, support 7 -> P 1, R 3/7, F1 2*3/(3+7)
    assert classes["factual"] == pytest.approx({"precision": 1.0, "recall": 3 / 7, "f1": 0.6, "support": 7})
    # hallucinated: tp 3, predicted 4, support 7 -> P 3/4, R 3/7, F1 2*3/(4+7)
    assert classes["hallucinated"] == pytest.approx(
        {"precision": 0.75, "recall": 3 / 7, "f1": 6 / 11, "support": 7}
    )


def test_hand_run_unreadable_replies(hand_run):
    _, report, _ = hand_run
    # medhal cannot read idx 8, 11, 12 (one shape once blanks collapse) and 13
    assert report["unreadable"] == [
        {"shape": GARBAGE, "count": 3, "idx": 8, "exact": True},
        {"shape": "<think>checking the numbers", "count": 1, "idx": 13, "exact": True},
    ]
    assert report["n_unreadable"] == 4


def test_hand_run_groups(hand_run):
    _, report, _ = hand_run
    difficulty = report["groups"]["difficulty"]
    assert list(difficulty) == ["easy", "medium", "hard"]
    assert [difficulty[g]["n"] for g in difficulty] == [2, 4, 8]
    # medhal accuracy per group: easy 2/2, medium {2,4,5} 3/4, hard {9} 1/8
    assert [difficulty[g]["accuracy"] for g in difficulty] == pytest.approx([1.0, 3 / 4, 1 / 8])
    hard = difficulty["hard"]
    # hard, medhal: verdicts {6 (H, gold F), 9 (H)}: pred pos 2, tp 1, kept gold pos {9} 1,
    # gold pos {7,9,11,13} 4
    assert hard["f1_paper"] == pytest.approx(2 / 3)  # 2*1 / (2 + 1)
    assert hard["f1_strict"] == pytest.approx(1 / 3)  # 2*1 / (2 + 4)
    assert hard["precision"] == pytest.approx(1 / 2) and hard["invalid_rate"] == pytest.approx(4 / 8)
    assert hard["error_rate"] == pytest.approx(1 / 8)
    # hard, authors: preds 6H 7N 8F 9H 10E 11F 12F 13F: verdicts 6; pred pos {6,9} 2; tp {9} 1;
    # kept gold pos {9,11,13} 3 -> f1_paper 2*1/(2+3); accuracy {8,9,12} 3/8
    assert hard["conventions"]["authors"]["f1_paper"] == pytest.approx(2 / 5)
    assert hard["conventions"]["authors"]["accuracy"] == pytest.approx(3 / 8)
    # medium, strict: preds 2I 3I 4F 5I: one verdict (4, right), no positive prediction
    medium = difficulty["medium"]["conventions"]["strict"]
    assert (medium["accuracy"], medium["response_rate"], medium["invalid_rate"]) == pytest.approx(
        (1 / 4, 1 / 4, 3 / 4)
    )
    assert medium["f1_strict"] == 0.0 and medium["accuracy_paper"] == 1.0
    category = report["groups"]["category"]
    assert {k: v["n"] for k, v in category.items()} == {
        "Incomplete Information": 8,
        "Methodological and Evidence Fabrication": 6,
    }


async def test_the_runs_convention_decides_overall_confusion_and_unreadable(
    assets_dir, small_dataset, hand_run, tmp_path
):
    """The same replies scored with `parser = authors`: the three convention blocks are the
    same, and the run-level figures, confusion and unreadable list follow the authors."""
    _, medhal_report, _ = hand_run
    tasks = select(dataset_path=str(small_dataset), parser="authors")
    report = await score_in_process(tasks, {i: reply for i, (reply, _) in HAND.items()}, tmp_path / "authors")
    assert report["convention"] == "authors" and report["provenance"]["data"]["parser"] == "authors"
    for convention in CONVENTIONS:
        for key, value in EXPECTED[convention].items():
            assert report["conventions"][convention][key] == pytest.approx(value, abs=1e-12), (
                convention,
                key,
            )
            assert report["conventions"][convention][key] == pytest.approx(
                medhal_report["conventions"][convention][key]
            )
    assert report["micro_accuracy"] == pytest.approx(6 / 14) and report["macro_accuracy"] == pytest.approx(
        13 / 24
    )
    assert report["overall"]["f1_paper"] == pytest.approx(1 / 2)
    # pairs (gold, authors reading): F->F {0,8,12}, F->H {2,4,6}, F->ERROR {10};
    # H->H {1,3,9}, H->F {5,11,13}, H->not_sure {7}
    assert report["confusion"] == {
        "factual": {"factual": 3, "hallucinated": 3, "not_sure": 0, "INVALID": 0, "ERROR": 1},
        "hallucinated": {"factual": 3, "hallucinated": 3, "not_sure": 1, "INVALID": 0, "ERROR": 0},
    }
    # factual: tp 3, predicted 6, support 7; hallucinated: tp 3, predicted 6, support 7
    assert report["classes"]["factual"] == pytest.approx(
        {"precision": 0.5, "recall": 3 / 7, "f1": 6 / 13, "support": 7}
    )
    assert report["unreadable"] == [] and report["n_unreadable"] == 0  # the authors' rule reads everything


async def test_all_abstained_run(assets_dir, tmp_path):
    """Every reply `2`: no verdict at all. Paper figures over nothing are 0, not an error."""
    tasks = select(**demo_options())
    report = await score_in_process(tasks, {t.data.idx: "2" for t in tasks}, tmp_path / "abstained")
    figures = report["overall"]
    assert (figures["response_rate"], figures["not_sure_rate"], figures["invalid_rate"]) == (0.0, 1.0, 0.0)
    # precision and accuracy over verdicts have nothing in their denominators: no figure
    assert (figures["f1_paper"], figures["f1_strict"], figures["precision"], figures["recall_strict"]) == (
        0.0,
        0.0,
        None,
        0.0,
    )
    assert figures["accuracy_paper"] is None and figures["accuracy"] == 0.0 and figures["parse_rate"] == 1.0
    assert figures["f1_paper_ci"] == [0.0, 0.0]
    assert report["unreadable"] == [] and report["complete"] is True and report["paper_comparable"] is False
    assert report["confusion"]["hallucinated"] == {
        "factual": 0,
        "hallucinated": 0,
        "not_sure": 3,
        "INVALID": 0,
        "ERROR": 0,
    }


async def test_ci_resamples_rows_not_items(assets_dir, tmp_path):
    """Both items of a row are right or both wrong: resampling rows must give a wider
    interval than pretending the items were independent would."""
    rows = [our_row(n, ("easy", "medium", "hard")[n % 3]) for n in range(60)]
    dataset = write_jsonl(tmp_path / "rows.jsonl", rows)
    replies = {}
    for row in range(60):
        right = row % 3 != 0
        replies[2 * row] = "0" if right else "1"
        replies[2 * row + 1] = "1" if right else "0"
    clustered = await score_in_process(select(dataset_path=str(dataset)), replies, tmp_path / "clustered")
    tasks = select(dataset_path=str(dataset))
    for task in tasks:  # every item its own cluster
        task.data = task.data.model_copy(update={"source_id": f"item:{task.data.idx}"})
    independent = await score_in_process(tasks, replies, tmp_path / "independent")
    # 40 of 60 rows right: accuracy 80/120 and f1 2*40/(60+60) either way
    for report in (clustered, independent):
        assert report["overall"]["accuracy"] == pytest.approx(2 / 3) and report["overall"][
            "f1_strict"
        ] == pytest.approx(2 / 3)
    for key in ("f1_strict_ci", "accuracy_ci"):
        lo_c, hi_c = clustered["overall"][key]
        lo_i, hi_i = independent["overall"][key]
        assert hi_c - lo_c > hi_i - lo_i, key


async def test_demo_prompt_run_is_marked(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDHAL_ASSETS_DIR", str(tmp_path / "empty"))
    tasks = select(**demo_options(), prompts="demo")
    report = await score_in_process(tasks, {t.data.idx: "1" for t in tasks}, tmp_path / "demo")
    assert (
        report["demo_prompts"] is True and report["published"] == [] and report["paper_comparable"] is False
    )


# ------------------------------------------------------- the 2,000 shared items, sklearn

# Reply shapes, with the reading under medhal / authors / strict (hand-written).
SHAPES = {
    "0": (F, F, F),
    "1": (H, H, H),
    "0.": (F, F, None),
    "Answer: 1": (H, H, None),
    "1 (hallucinated)": (H, H, None),
    "factual": (F, F, None),
    "Hallucinated.": (H, F, None),
    "Not hallucinated": (F, H, None),
    "<think>the numbers differ</think>\n1": (H, H, H),
    "<think>consistent</think>0": (F, F, F),
    "2": (N, N, N),
    "not sure": (N, H, None),
    "Unsure": (N, F, None),
    "<think>this never ends": (None, F, None),
    "I would need the full paper.": (None, F, None),
    "\\boxed{1}": (H, H, H),
    "Final answer: \\boxed{0}": (F, F, None),
    "No hallucination detected.": (F, F, None),
    "I don't know": (N, F, None),
}
MISSING = {17, 250, 1999}
"""No prediction: ERROR under every convention, dropped by the paper figures, a miss for strict."""
ERROR_CODE, INVALID_CODE, NOT_VERDICT = -2, -1, -3
CODE = {F: 0, H: 1, N: 2, None: INVALID_CODE}


def sklearn_figures(gold: list[int], codes: list[int]) -> dict[str, float]:
    """The figures from scikit-learn: paper = only verdicts (0/1) kept; strict = every
    item kept, a non-verdict as a third label that is never the positive class."""
    y_true = np.array(gold)
    y_pred = np.array([c if c in (0, 1) else NOT_VERDICT for c in codes])
    kept = y_pred != NOT_VERDICT
    out = {}
    p, r, f, _ = precision_recall_fscore_support(
        y_true[kept], y_pred[kept], labels=[1], average=None, zero_division=0
    )
    out.update(
        precision=p[0],
        recall_paper=r[0],
        f1_paper=f[0],
        accuracy_paper=accuracy_score(y_true[kept], y_pred[kept]),
    )
    _, r, f, _ = precision_recall_fscore_support(y_true, y_pred, labels=[1], average=None, zero_division=0)
    out.update(recall_strict=r[0], f1_strict=f[0], accuracy=accuracy_score(y_true, y_pred))
    n = len(codes)
    out.update(
        response_rate=float(kept.sum()) / n,
        not_sure_rate=sum(c == 2 for c in codes) / n,
        invalid_rate=sum(c == INVALID_CODE for c in codes) / n,
        error_rate=sum(c == ERROR_CODE for c in codes) / n,
        parse_rate=sum(c in (0, 1, 2) for c in codes) / n,
    )
    return out


@pytest.fixture(scope="module")
def shared_plan(shared_data) -> dict:
    rows = read_jsonl(shared_data / "medhallu" / "pqa_labeled.jsonl")
    rng = random.Random(1)
    shapes = list(SHAPES)
    replies, gold, difficulty = {}, [], []
    for idx in range(2 * len(rows)):
        label = idx % 2  # items alternate factual (0), hallucinated (1)
        gold.append(label)
        difficulty.append(rows[idx // 2]["Difficulty Level"])
        # lean towards the right verdict so the figures are not all near 0.5
        replies[idx] = rng.choice(shapes) if rng.random() < 0.6 else ("1" if label else "0")
    codes = {
        c: [ERROR_CODE if i in MISSING else CODE[SHAPES[replies[i]][k]] for i in range(len(gold))]
        for k, c in enumerate(CONVENTIONS)
    }
    return {"replies": replies, "gold": gold, "difficulty": difficulty, "codes": codes}


@pytest.fixture(scope="module")
def shared_run(shared_data, shared_plan, tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path_factory.mktemp("shared") / "scored"
    predictions = {i: r for i, r in shared_plan["replies"].items() if i not in MISSING}
    proc = medhal_score(
        shared_data, shared_data / "medhallu" / "pqa_labeled.jsonl", predictions, out, "--no-plots"
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc, json.loads((out / "report.json").read_text(encoding="utf-8"))


def test_shared_run_matches_sklearn_under_each_convention(shared_run, shared_plan):
    proc, report = shared_run
    assert "3 of 2000 tasks had no prediction" in proc.stderr
    assert report["n"] == 2000 and report["n_errors"] == 3 and report["complete"] is True
    assert report["paper_comparable"] is False  # 3 predictions missing
    gold, codes, difficulty = shared_plan["gold"], shared_plan["codes"], shared_plan["difficulty"]

    def check(figures: dict, convention: str, indices: list[int]) -> None:
        expected = sklearn_figures([gold[i] for i in indices], [codes[convention][i] for i in indices])
        for key, value in expected.items():
            assert figures[key] == pytest.approx(value, abs=1e-12), (convention, key)

    everything = list(range(2000))
    for convention in CONVENTIONS:
        check(report["conventions"][convention], convention, everything)
        figures = report["conventions"][convention]
        for key in ("f1_paper", "f1_strict"):
            lo, hi = figures[f"{key}_ci"]
            assert lo <= figures[key] <= hi and hi - lo < 0.2, (convention, key)
        for level in ("easy", "medium", "hard"):
            indices = [i for i in everything if difficulty[i] == level]
            check(report["groups"]["difficulty"][level]["conventions"][convention], convention, indices)
        # macro accuracy: the unweighted mean of the three difficulty accuracies
        per_level = [
            sklearn_figures(
                [gold[i] for i in everything if difficulty[i] == g],
                [codes[convention][i] for i in everything if difficulty[i] == g],
            )["accuracy"]
            for g in ("easy", "medium", "hard")
        ]
        assert figures["macro_accuracy"] == pytest.approx(sum(per_level) / 3)
    assert report["micro_accuracy"] == pytest.approx(sklearn_figures(gold, codes["medhal"])["accuracy"])
    confusion = report["confusion"]
    assert list(confusion["factual"]) == ["factual", "hallucinated", "not_sure", "INVALID", "ERROR"]
    assert sum(row["not_sure"] for row in confusion.values()) == sum(c == 2 for c in codes["medhal"])
    assert sum(row["INVALID"] for row in confusion.values()) == sum(
        c == INVALID_CODE for c in codes["medhal"]
    )
    assert (
        confusion["factual"]["ERROR"] == 1 and confusion["hallucinated"]["ERROR"] == 2
    )  # 250 even, 17 and 1999 odd
    assert report["classes"]["hallucinated"]["support"] == 1000


@pytest.fixture(scope="module")
def complete_run(shared_data, shared_plan, tmp_path_factory) -> Path:
    """The same replies with none missing, scored in this process (2,000 tasks)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEDHAL_ASSETS_DIR", str(shared_data))
        mp.delenv("MEDHAL_ASSET_SHA256", raising=False)
        tasks = select(dataset_path=str(shared_data / "medhallu" / "pqa_labeled.jsonl"))
    traces = asyncio.run(score_tasks(tasks, shared_plan["replies"], "offline"))
    return write_traces(traces, tmp_path_factory.mktemp("complete") / "run")


def test_complete_run_is_paper_comparable(complete_run):
    report = report_of(complete_run)
    assert (report["n"], report["n_errors"], report["n_missing"], report["complete"]) == (2000, 0, 0, True)
    assert report["paper_comparable"] is True


@pytest.mark.parametrize("damage", ["drop the last trace", "repeat a trace", "keep half"])
def test_partial_runs_are_not_paper_comparable(complete_run, tmp_path, damage):
    # split on newlines only: the prompts hold U+2029, which str.splitlines() breaks on
    lines = [line + "\n" for line in complete_run.read_text(encoding="utf-8").split("\n") if line]
    assert len(lines) == 2000
    kept = {
        "drop the last trace": lines[:-1],
        "repeat a trace": lines + lines[5:6],
        "keep half": lines[:1000],
    }[damage]
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(kept), encoding="utf-8")
    report = report_of(path)
    assert report["paper_comparable"] is False and report["complete"] is False
    expected = {
        "drop the last trace": (1999, 1, 0),
        "repeat a trace": (2001, 0, 1),
        "keep half": (1000, 1000, 0),
    }[damage]
    assert (report["n"], report["n_missing"], report["n_duplicates"]) == expected


async def test_a_subset_is_not_paper_comparable(assets_dir, labeled_path, tmp_path):
    tasks = select(dataset_path=str(labeled_path), difficulty="easy")  # complete, but 548 of 2,000 items
    report = await score_in_process(tasks, {t.data.idx: "1" for t in tasks}, tmp_path / "easy")
    assert (report["n"], report["complete"], report["n_errors"]) == (548, True, 0)
    assert report["paper_comparable"] is False


@pytest.fixture
def labeled_path(shared_data) -> Path:
    return shared_data / "medhallu" / "pqa_labeled.jsonl"


# ------------------------------------------------------------- eval + medhal report


def test_eval_end_to_end_with_scripted_replies(assets_dir, endpoint, tmp_path):
    rows = read_jsonl(demo_rows_path())
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
        return next(r for answer, r in script.items() if f"\nAnswer: {answer}\n" in text)

    ep = endpoint(reply)
    out = tmp_path / "run"
    args = [a for k, v in demo_options().items() for a in (f"--taskset.{k}", str(v))]
    traces = run_eval("medhallu", ep.base_url, out, *args, env={"MEDHAL_ASSETS_DIR": str(assets_dir)})
    assert len(traces) == 6 and len(ep.requests) == 6
    assert all(len(r["messages"]) == 1 and r["messages"][0]["role"] == "user" for r in ep.requests)
    by_idx = {t["task"]["data"]["idx"]: t for t in traces}
    assert [by_idx[i]["info"]["pred_label"] for i in range(6)] == [F, H, N, N, None, H]
    assert [by_idx[i]["rewards"]["detection"] for i in range(6)] == [1.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    assert by_idx[3]["info"]["readings"] == {"medhal": N, "authors": H, "strict": None}
    proc = medhal_main("report", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    # medhal: 0F 1H 2N 3N 4I 5H; verdicts {0,1,5}, all right; gold pos {1,3,5}
    overall = report["overall"]
    assert (overall["precision"], overall["recall_paper"], overall["f1_paper"]) == (1.0, 1.0, 1.0)
    assert overall["recall_strict"] == pytest.approx(2 / 3) and overall["f1_strict"] == pytest.approx(
        0.8
    )  # 2*2/(2+3)
    assert overall["accuracy_paper"] == 1.0 and overall["accuracy"] == 0.5
    assert (overall["response_rate"], overall["not_sure_rate"], overall["invalid_rate"]) == pytest.approx(
        (0.5, 1 / 3, 1 / 6)
    )
    # authors: 0F 1H 2N 3H ('not') 4F (no 1/not/non) 5H: 5 of 6 right, the abstention dropped
    authors = report["conventions"]["authors"]
    assert (
        authors["accuracy"] == pytest.approx(5 / 6)
        and authors["f1_paper"] == 1.0
        and authors["response_rate"] == pytest.approx(5 / 6)
    )
    # strict: 0F 1I 2N 3I 4I 5I: one verdict, no positive prediction
    strict = report["conventions"]["strict"]
    assert (strict["accuracy"], strict["f1_strict"], strict["invalid_rate"]) == pytest.approx(
        (1 / 6, 0.0, 4 / 6)
    )
    assert report["groups"]["difficulty"]["medium"]["not_sure_rate"] == 1.0
    assert report["groups"]["difficulty"]["hard"]["f1_paper"] == 1.0
    assert report["unreadable"] == [
        {"shape": "<think>checking the percentages", "count": 1, "idx": 4, "exact": True}
    ]
    assert report["provenance"]["data"]["prompt"]["asset"]["sha256"] == PINNED_SHA256
    assert {"confusion.png", "by_difficulty.png", "by_category.png"} <= set(report["plots"])
