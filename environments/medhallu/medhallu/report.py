"""How a MedHallu run is reported: F1 for the hallucinated class under two conventions.

- paper: abstentions, INVALID replies and failed rollouts are dropped before computing
  precision, recall, F1 and accuracy, as the authors drop "not sure" answers;
  `verdicts` says how many items were kept.
- strict: every item stays. A non-verdict is neither a true nor a false positive, so it
  is a false negative (a missed detection) when the answer was hallucinated, and it is
  wrong for accuracy.

The response, not-sure and INVALID rates (plus the shared error rate) add up to 1, so
what the paper convention drops is always on view. CIs resample source rows, so the
two items of a row move together.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from medhal import metrics as m
from medhal.report import Item, ReportSpec

from medhallu.scoring import FACTUAL, HALLUCINATED, LABELS, NOT_SURE
from medhallu.taskset import ENV_ID, FULL_SIZE

CONVENTIONS = ("paper", "strict")


def _f1_from_counts(tp: float, predicted: float, support: float) -> float:
    """F1 = 2·TP / (predicted positives + gold positives); 0 when both are 0."""
    return m.safe_div(2 * tp, predicted + support)


def _f1_ci(gold_pos: np.ndarray, pred_pos: np.ndarray, kept: np.ndarray, clusters: list) -> tuple[float, float]:
    def statistic(idx: np.ndarray) -> float:
        tp = np.sum(gold_pos[idx] & pred_pos[idx])
        return _f1_from_counts(tp, np.sum(pred_pos[idx]), np.sum(gold_pos[idx] & kept[idx]))

    return m.bootstrap_ci(statistic, len(gold_pos), clusters)


def detection_figures(items: list[Item]) -> dict[str, Any]:
    n = len(items)
    gold = [i.gold for i in items]
    pred = [i.pred for i in items]
    answered = [p in LABELS for p in pred]
    clusters = [i.cluster for i in items]
    gold_pos = np.array([g == HALLUCINATED for g in gold], dtype=bool)
    pred_pos = np.array([p == HALLUCINATED for p in pred], dtype=bool)
    out: dict[str, Any] = {"verdicts": sum(answered)}
    kept_gold = [g for g, a in zip(gold, answered) if a]
    kept_pred = [p for p, a in zip(pred, answered) if a]
    by_convention = {
        "paper": (kept_gold, kept_pred, np.array(answered, dtype=bool)),
        "strict": (gold, pred, np.ones(n, dtype=bool)),
    }
    for name, (g, p, kept) in by_convention.items():
        scores = m.prf(g, p, HALLUCINATED)
        out[f"precision_{name}"] = scores["precision"]
        out[f"recall_{name}"] = scores["recall"]
        out[f"f1_{name}"] = scores["f1"]
        out[f"f1_{name}_ci"] = list(_f1_ci(gold_pos, pred_pos, kept, clusters))
        out[f"accuracy_{name}"] = m.mean([float(a == b) for a, b in zip(g, p)])
    out["response_rate"] = m.safe_div(sum(answered), n)
    out["not_sure_rate"] = m.safe_div(sum(1 for p in pred if p == NOT_SURE), n)
    out["invalid_rate"] = m.safe_div(sum(1 for p in pred if p == m.INVALID), n)
    return out


REPORT = ReportSpec(
    benchmark=ENV_ID,
    title="MedHallu (hallucination detection, hallucinated = positive class)",
    task_type="MedHalluTask",
    gold_field="label",
    pred_key="pred_label",
    classes=(FACTUAL, HALLUCINATED),
    pred_only_classes=(NOT_SURE,),
    correct_metric="correct",
    parsed_metric="parsed",
    group_fields=("difficulty", "category"),
    cluster_field="source_id",
    full_size=FULL_SIZE,
    figures=detection_figures,
    headline=(
        "f1_paper", "f1_paper_ci", "precision_paper", "recall_paper",
        "f1_strict", "f1_strict_ci", "precision_strict", "recall_strict",
        "accuracy_paper", "accuracy_strict", "response_rate", "not_sure_rate", "invalid_rate",
    ),
    notes=(
        "F1, precision and recall are for the 'hallucinated' class. paper = abstentions, INVALID "
        "replies and failed rollouts dropped first (the authors drop 'not sure'; 'verdicts' counts the "
        "items kept); strict = all items kept, a non-verdict counting as a missed detection "
        "(a false negative when the answer was hallucinated) and as wrong for accuracy.",
        "Difficulty and category describe a row's hallucinated answer; the row's factual item is "
        "grouped under the same difficulty and category (as the authors' per-difficulty scores do), "
        "so each group holds both items of its rows.",
        "accuracy (and micro_accuracy) is strict accuracy: right verdicts over all items. The macro "
        "figure averages it over difficulties. paper_comparable: all 2,000 pqa_labeled items, pairing=both.",
        "CIs: 95% percentile bootstrap resampling source rows (both items of a row move together).",
    ),
)
