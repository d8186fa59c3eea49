"""How a Med-HALT run is reported: per set, per family, and macro over sets, under every
reading convention. Light: imports no verifiers.

Two scores are always reported side by side and never mixed up:

- `paper_score`, eq. 1 of the paper: the mean over all N items of +1 (right) and -0.25
  (wrong; format errors and failed rollouts included).
- `code_score`, the formula behind the published tables (the authors' scorer):
  (right - 0.25 * wrong) / 100 over the items whose reply could be read; format errors
  (and failed rollouts) are left out, and the divisor is the constant 100, not N, so the
  figure grows with the size of the set (NOTA scores above 100 in the paper).

Under the `authors` convention (their reading and comparisons) `code_score` and
`code_accuracy` are the published tables' Score and Accuracy.
"""

from __future__ import annotations

from typing import NamedTuple

from med_halt.benchmark import (
    ENV_ID,
    FAKE,
    FCT,
    FULL_SIZE,
    PAPER_POINTS_RIGHT,
    PAPER_POINTS_WRONG,
    PUBLISHED,
    SETS,
)
from med_halt.rows import option_key
from med_halt.scoring import ITEM_OUTCOMES, VERDICT_CORRECT, outcome_key
from medhal.kit.outcomes import CONVENTIONS
from medhal.kit.report_spec import Columns, ItemView, Lead, ReportSpec

CODE_DIVISOR = 100


class Counts(NamedTuple):
    """What one item adds to the totals Med-HALT's figures are computed from (beside n,
    correct, parsed and error, which every report counts)."""

    format_error: float
    """Nothing could be read (and the rollout did not fail)."""
    fct: float
    """A False Confidence Test item."""
    verdict_correct: float
    """An FCT item whose verdict on the proposed answer is right."""
    fake: float
    """A fake-question item."""
    fake_decline: float
    """A fake question declined (right under the `decline` rule)."""
    fake_keywords: float
    """A fake question right under the authors' keyword rule."""
    ir: float
    """An information-retrieval (memory) item."""
    ir_exact: float
    """An IR item right under exact matching (the authors' rule)."""
    ir_normalized: float
    """An IR item right under normalized matching."""


_OUTCOME_NAMES = {
    convention: {outcome: outcome_key(outcome, convention) for outcome in ITEM_OUTCOMES}
    for convention in CONVENTIONS
}
"""Metric names of the rule outcomes under each convention, built once (reports read
three views of every trace)."""


def item_counts(item: ItemView) -> Counts:
    """An item's counts. A trace records only its own set's outcomes (since 0.4.0; earlier
    traces record every set's, 0.0 for another set's rule): an outcome it lacks counts 0,
    which is what the earlier traces hold, so both are reported alike."""
    test_set = item.data["test_set"]
    fct, fake = test_set == FCT.config, test_set == FAKE.config
    ir = SETS[test_set].family == "memory"

    names = _OUTCOME_NAMES[item.convention]

    def get(outcome: str) -> float:
        return item.metrics.get(names[outcome], 0.0)

    return Counts(
        format_error=float(not item.parsed and not item.errored),
        fct=float(fct),
        verdict_correct=get(VERDICT_CORRECT) if fct else 0.0,
        fake=float(fake),
        fake_decline=get("fake_decline"),
        fake_keywords=get("fake_keywords"),
        ir=float(ir),
        ir_exact=get("ir_exact"),
        ir_normalized=get("ir_normalized"),
    )


COLUMNS = Columns(Counts)

GOLD_VOTE = "gold"
"""The vote key of every answer the set's rule accepts (other keys start with "answer: ")."""


def vote_key(item: ItemView) -> str:
    """One rollout's answer as the set's rule compares it, for majority votes over a task's
    rollouts. Every answer the rule accepts equals the gold under that rule ("Vitamin C" and
    "vitamin c"; "I do not know" and "I don't know" under `decline`; a title with or without
    its final period under `normalized`), so all of them are one vote, as the trace's
    correctness says (whatever the rule of the run and the reading convention). The rule
    never compares two wrong answers, so those are told apart by Med-HALT's equality rule
    (`med_halt.rows.option_key`: case, spacing, surrounding marks and final punctuation
    ignored): "Pancreas" and "pancreas." are one wrong answer, "Rh+" and "Rh-" two.
    Unreadable and failed rollouts keep their label."""
    if item.errored or not item.parsed:
        return item.pred
    if item.correct:
        return GOLD_VOTE
    return "answer: " + option_key(item.pred)


def paper_score(columns: Columns):
    """Eq. 1: (1.25 * right - 0.25 * N) / N, i.e. the mean of +1 / -0.25 over all items."""
    return columns.linear({"correct": PAPER_POINTS_RIGHT - PAPER_POINTS_WRONG, "n": PAPER_POINTS_WRONG}, "n")


def code_score(columns: Columns):
    """(right - 0.25 * (parsed - right)) / 100 over parsed items (right implies parsed)."""
    return columns.linear(
        {"correct": PAPER_POINTS_RIGHT - PAPER_POINTS_WRONG, "parsed": PAPER_POINTS_WRONG}, CODE_DIVISOR
    )


BASE = Columns()

REPORT = ReportSpec(
    benchmark=ENV_ID,
    # What says which item a task is: the fields MedHaltData declares (taskset.py; the test of
    # content digests, tests/medhal/test_compare_identity.py, keeps the two alike).
    content_fields=(
        "test_set",
        "family",
        "source_question",
        "gold",
        "rule",
        "split_type",
        "source_dataset",
        "proposed_answer",
        "verdict_gold",
        "decline_options",
        "choices",
        "paper_exists",
    ),
    title="Med-HALT (reasoning and memory hallucination tests)",
    columns=COLUMNS,
    item_counts=item_counts,
    statistics={
        "paper_score": paper_score(COLUMNS),
        "code_score": code_score(COLUMNS),
        "code_accuracy": COLUMNS.ratio("correct", "parsed"),
        "format_error_rate": COLUMNS.ratio("format_error", "n"),
        "fct_verdict_accuracy": COLUMNS.ratio("verdict_correct", "fct"),
        "fake_decline_accuracy": COLUMNS.ratio("fake_decline", "fake"),
        "fake_keywords_accuracy": COLUMNS.ratio("fake_keywords", "fake"),
        "ir_exact_accuracy": COLUMNS.ratio("ir_exact", "ir"),
        "ir_normalized_accuracy": COLUMNS.ratio("ir_normalized", "ir"),
    },
    lead=Lead("paper_score", "Pointwise Score (eq. 1)", per="test_set"),
    headline=("accuracy", "paper_score", "code_score", "code_accuracy", "format_error_rate"),
    group_fields=("test_set", "family"),
    macro_field="test_set",
    macro_groups=tuple(SETS),
    macro_statistics={
        "accuracy": BASE.ratio("correct", "n"),
        "paper_score": paper_score(BASE),
        "code_score": code_score(BASE),
    },
    figure_labels={
        "paper_score": "score, paper's eq. 1 (all items)",
        "code_score": "score, authors' scorer (read items, / 100)",
        "code_accuracy": "accuracy over read replies (published Accuracy)",
        "format_error_rate": "format errors",
        "fct_verdict_accuracy": "FCT verdicts right",
        "fake_decline_accuracy": "fake questions declined",
        "fake_keywords_accuracy": "fake questions, authors' keywords",
        "ir_exact_accuracy": "IR right, exact match",
        "ir_normalized_accuracy": "IR right, normalized match",
    },
    cluster_field="source_question",
    provenance_field="test_set",
    full_size=FULL_SIZE,
    published=PUBLISHED,
    group_sizes={name: spec.size for name, spec in SETS.items()},
    vote_key=vote_key,
    notes=(
        (
            "paper_score = mean over all N items of +1 (right) / -0.25 (wrong, format errors and failed "
            "rollouts included), eq. 1 of the paper."
        ),
        (
            "code_score = (right - 0.25 * wrong) / 100 over read items only, the formula of the authors' "
            "scorer and published tables; it excludes format errors and divides by 100, not N."
        ),
        (
            "macro_* = unweighted mean over the test sets present; paper-comparable only when all 59,254 "
            "items of the seven sets are present, once each, without failed rollouts."
        ),
        (
            "Intervals resample source questions: FCT and NOTA items of one exam question move together, "
            "IR items of one PubMed paper move together."
        ),
        "accuracy is over all N items; code_accuracy (right / read) is the published tables' Accuracy.",
        (
            "The authors convention is their pipeline end to end (their regex reading, their lower-cased "
            "comparisons, their fake-question keywords, exact IR matching), whatever the run's rule options."
        ),
    ),
)
