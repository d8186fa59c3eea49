"""The MedHallu authors' reading and scoring rules, restated for tests.

WHY: the `authors` convention must reproduce what the authors' published script did with a
reply, quirks included, so that our numbers can be set beside theirs. This module is the
independent oracle the corpus tests hold the project's `authors` reader to; it imports
nothing from the project and never imports or runs the authors' script.

Source: MedHallu/MedHalu @ 3c49c8ba80e47720333e508821967167ba048d49,
`Detection/detection_vllm_notsurecase.py` (pinned copy: /work/shared/data/medhallu/...).
Every rule below cites its line numbers in that file.
"""

from __future__ import annotations

AUTHORS_COMMIT = "3c49c8ba80e47720333e508821967167ba048d49"
AUTHORS_FILE = "Detection/detection_vllm_notsurecase.py"

FACTUAL, HALLUCINATED, NOT_SURE = 0, 1, 2
LABEL_NAMES = {FACTUAL: "factual", HALLUCINATED: "hallucinated", NOT_SURE: "not_sure"}

# Line 80: any of these substrings in the lower-cased reply reads as 1 (hallucinated).
# "not sure" contains "not", "cannot"/"another"/"note" contain "not", "none" contains "non".
HALLUCINATED_SUBSTRINGS = ("1", "not", "non")
# Line 82 (tested only when line 80 did not fire, so 'not sure' can never reach it).
NOT_SURE_SUBSTRINGS = ("not sure", "pass", "skip", "2")


def authors_verdict(reply: str) -> int:
    """The integer the authors' `calculate_metrics` gives one reply (lines 78-85).

    The reply was `.strip()`ped when collected (line 246 for vLLM, line 263 for the OpenAI
    branch) and is lower-cased here (line 79). Substring tests on the whole text: think
    blocks are not removed and nothing is ever INVALID (an empty reply falls to 0).
    """
    text = reply.strip().lower()
    if any(s in text for s in HALLUCINATED_SUBSTRINGS):
        return HALLUCINATED
    if any(s in text for s in NOT_SURE_SUBSTRINGS):
        return NOT_SURE
    return FACTUAL


def authors_reading(reply: str) -> str:
    """`authors_verdict` as the corpus spells labels. The same function applies whether or
    not "not sure" was offered: the script has one rule."""
    return LABEL_NAMES[authors_verdict(reply)]


def _binary_metrics(gold: list[int], pred: list[int]) -> dict[str, float]:
    """sklearn's accuracy/precision/recall/F1 for binary labels with pos_label=1 and
    zero_division=0 (the script's calls at lines 128-131 and 146-148), restated:
    precision = tp/(tp+fp), recall = tp/(tp+fn), F1 = 2tp/(2tp+fp+fn), each 0 when its
    denominator is 0."""
    tp = sum(1 for g, p in zip(gold, pred, strict=True) if g == 1 and p == 1)
    fp = sum(1 for g, p in zip(gold, pred, strict=True) if g != 1 and p == 1)
    fn = sum(1 for g, p in zip(gold, pred, strict=True) if g == 1 and p != 1)
    correct = sum(1 for g, p in zip(gold, pred, strict=True) if g == p)
    return {
        "accuracy": correct / len(gold),
        "precision": tp / (tp + fp) if tp + fp else 0.0,
        "recall": tp / (tp + fn) if tp + fn else 0.0,
        "f1": 2 * tp / (2 * tp + fp + fn) if 2 * tp + fp + fn else 0.0,
    }


def authors_subset_metrics(gold: list[int], predicted: list[int]) -> dict[str, float | None]:
    """Metrics of one difficulty level (lines 116-136): the share of 2s, then 2s dropped
    and accuracy/precision/recall/F1 over what is left; all four None when nothing is left.
    `gold` holds 0/1, `predicted` holds `authors_verdict` values."""
    if len(gold) != len(predicted):
        raise ValueError("gold and predicted differ in length")
    if not gold:
        return {"accuracy": None, "precision": None, "recall": None, "f1": None, "not_sure_fraction": None}
    kept = [j for j, p in enumerate(predicted) if p != NOT_SURE]
    out: dict[str, float | None] = {"not_sure_fraction": (len(gold) - len(kept)) / len(gold)}
    if kept:
        out.update(_binary_metrics([gold[j] for j in kept], [predicted[j] for j in kept]))
    else:
        out.update({"accuracy": None, "precision": None, "recall": None, "f1": None})
    return out


def authors_overall_metrics(gold: list[int], predicted: list[int]) -> dict[str, float | None]:
    """The overall row (lines 138-160): precision/recall/F1 with 2s dropped (0, not None, when
    every prediction was 2: lines 150-157; no overall accuracy is reported) and the share
    of 2s over all replies (line 160)."""
    if len(gold) != len(predicted):
        raise ValueError("gold and predicted differ in length")
    kept = [j for j, p in enumerate(predicted) if p != NOT_SURE]
    out: dict[str, float | None] = {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    if kept:
        m = _binary_metrics([gold[j] for j in kept], [predicted[j] for j in kept])
        out = {k: m[k] for k in ("precision", "recall", "f1")}
    out["not_sure_fraction"] = (len(predicted) - len(kept)) / len(predicted) if predicted else None
    return out
