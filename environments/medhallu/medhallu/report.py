"""How a MedHallu run is reported: F1 of the hallucinated class under two counting
conventions, for every reading convention. Light: imports no verifiers.

- paper F1: abstentions, INVALID replies and failed rollouts are dropped before
  precision, recall, F1 and accuracy are computed, as the authors drop "not sure";
  `response_rate` says how many items were kept. Under the `authors` reading this is the
  paper's F1.
- strict F1: every item stays. A non-verdict is never a positive prediction, so it is a
  missed detection (a false negative) when the answer was hallucinated, and it is wrong
  for accuracy.

The response, not-sure and INVALID rates (plus the error rate) add up to 1, so what the
paper convention drops is always on view. Intervals resample source rows, so the two
items of a row move together.
"""

from __future__ import annotations

from typing import NamedTuple

from medhal.kit.report_spec import Columns, ItemView, Lead, ReportSpec
from medhallu.benchmark import DIFFICULTIES, ENV_ID, FULL_SIZE, PUBLISHED
from medhallu.replies import FACTUAL, HALLUCINATED, LABELS, NOT_SURE


class Counts(NamedTuple):
    """What one item adds to the totals MedHallu's figures are computed from (beside n,
    correct, parsed and error, which every report counts)."""

    verdict: float
    """A verdict (factual or hallucinated) was read."""
    not_sure: float
    """The reply abstained ("not sure")."""
    invalid: float
    """Nothing could be read (and the rollout did not fail)."""
    gold_pos: float
    """The answer shown is the hallucinated one: a positive."""
    gold_pos_kept: float
    """A positive with a verdict: the positives the paper's F1 keeps."""
    pred_pos: float
    """The verdict read is "hallucinated"."""
    tp: float
    """A positive read as "hallucinated"."""


def item_counts(item: ItemView) -> Counts:
    verdict = item.pred in LABELS
    gold_pos = item.gold == HALLUCINATED
    pred_pos = item.pred == HALLUCINATED
    return Counts(
        verdict=float(verdict),
        not_sure=float(item.pred == NOT_SURE),
        invalid=float(not item.parsed and not item.errored),
        gold_pos=float(gold_pos),
        gold_pos_kept=float(gold_pos and verdict),
        pred_pos=float(pred_pos),
        tp=float(gold_pos and pred_pos),
    )


COLUMNS = Columns(Counts)

REPORT = ReportSpec(
    benchmark=ENV_ID,
    # What says which item a task is: the fields MedHalluData declares (taskset.py; the test of
    # content digests, tests/medhal/test_compare_identity.py, keeps the two alike).
    content_fields=(
        "question",
        "answer",
        "label",
        "difficulty",
        "category",
        "not_sure_offered",
        "not_sure_reward",
        "answer_vocabulary",
        "invalid_reward",
    ),
    title="MedHallu (hallucination detection, hallucinated = positive class)",
    columns=COLUMNS,
    item_counts=item_counts,
    statistics={
        "f1_paper": COLUMNS.f1("tp", "pred_pos", "gold_pos_kept"),
        "f1_strict": COLUMNS.f1("tp", "pred_pos", "gold_pos"),
        "precision": COLUMNS.ratio("tp", "pred_pos"),
        "recall_paper": COLUMNS.ratio("tp", "gold_pos_kept"),
        "recall_strict": COLUMNS.ratio("tp", "gold_pos"),
        "accuracy_paper": COLUMNS.ratio("correct", "verdict"),
        "response_rate": COLUMNS.ratio("verdict", "n"),
        "not_sure_rate": COLUMNS.ratio("not_sure", "n"),
        "invalid_rate": COLUMNS.ratio("invalid", "n"),
    },
    lead=Lead("f1_paper", "F1 of the hallucinated class"),
    headline=(
        "f1_paper",
        "f1_strict",
        "precision",
        "recall_paper",
        "accuracy_paper",
        "response_rate",
        "not_sure_rate",
        "invalid_rate",
    ),
    figure_labels={
        "f1_paper": "F1, paper convention",
        "f1_strict": "F1, every item kept",
        "precision": "precision",
        "recall_paper": "recall, paper convention",
        "recall_strict": "recall, every item kept",
        "accuracy_paper": "accuracy over verdicts",
        "response_rate": "verdicts given",
        "not_sure_rate": "not sure",
        "invalid_rate": "unreadable",
    },
    group_fields=("difficulty", "category"),
    macro_field="difficulty",
    macro_groups=DIFFICULTIES,
    cluster_field="source_id",
    gold_field="label",
    classes=(FACTUAL, HALLUCINATED),
    pred_only_classes=(NOT_SURE,),
    full_size=FULL_SIZE,
    published=PUBLISHED,
    notes=(
        (
            "F1, precision and recall are for the 'hallucinated' class. paper = abstentions, INVALID "
            "replies and failed rollouts dropped first (the authors drop 'not sure'; response_rate is the "
            "share kept); strict = all items kept, a non-verdict counting as a missed detection. Precision "
            "is the same under both (a non-verdict is never a positive prediction)."
        ),
        "Under the authors reading (their script's rule) f1_paper is the paper's F1.",
        (
            "Difficulty and category describe a row's hallucinated answer; the row's factual item is "
            "grouped under the same difficulty and category (as the authors' per-difficulty scores do)."
        ),
        (
            "accuracy (micro) is strict accuracy: right verdicts over all items; the macro figure averages "
            "it over difficulties. paper_comparable: all 2,000 pqa_labeled items (pairing = both), once each."
        ),
        "Intervals: 95% percentile bootstrap resampling source rows (both items of a row move together).",
    ),
)
