"""The labelled MedHallu reply corpus (replies.jsonl): well-formed, and its `authors` column
agrees with the authors' rule as restated in authors_oracle.py.

WHY: the corpus is the independent oracle for the project's three readers (`medhal`,
`authors`, `strict`). Its `authors` labels were written by hand; checking them against a
restatement of the authors' script catches a slip in either before the corpus is used to
judge the project's code.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from tests.families import HAND_WRITTEN_SHAPES
from tests.medhallu.authors_oracle import (
    HALLUCINATED,
    NOT_SURE,
    authors_overall_metrics,
    authors_reading,
    authors_subset_metrics,
    authors_verdict,
)
from tests.tables import read_jsonl

CORPUS = Path(__file__).with_name("replies.jsonl")
LABELS = {"factual", "hallucinated", "not_sure"}
CONVENTIONS = ("medhal", "authors", "strict")
VOCABULARIES = ("digits", "halueval")
MIN_CASES = 220
MIN_TINY_MODEL = 15
SHAPES = (
    {
        "bare_digit",
        "decorated_digit",
        "authors_trap",
        "boxed",
        "reasoning_model",
        "truncated",
        "chatty",
        "labelled",
        "prompt_echo",
        "numbered_reasoning",
        "negation",
        "hedged",
        "conflicting",
        "abstention",
        "refusal",
        "non_english",
        "unicode_digit",
        "code_fence",
        "empty_or_garbage",
        "tiny_model",
        "translated_label",
        "hedged_digit",
        "arrow_verdict",
        "vocabulary",
        "hedge",
    }
    | HAND_WRITTEN_SHAPES
    | {"commitment_doubt", "commitment_reported", "unused_letter"}
)
"""Issue 31 added the families of `tests.families.HAND_WRITTEN_SHAPES` and its own."""


def _load() -> list[dict]:
    return read_jsonl(CORPUS)


CASES = _load()


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_authors_column_matches_the_authors_rule(case: dict) -> None:
    assert case["expected"]["authors"] == authors_reading(case["reply"])


def test_ids_are_unique_and_numbered() -> None:
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"mh-\d{3}", i) for i in ids)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case_is_well_formed(case: dict) -> None:
    # `vocabulary` (optional): the answer vocabulary declared for the reply (the taskset
    # option `answer_vocabulary`); absent means the prompt's own digits.
    assert set(case) - {"vocabulary"} == {"id", "reply", "not_sure_offered", "expected", "shape", "reason"}
    assert case.get("vocabulary", "digits") in VOCABULARIES
    assert isinstance(case["reply"], str)
    assert isinstance(case["not_sure_offered"], bool)
    assert set(case["expected"]) == set(CONVENTIONS)
    assert case["expected"]["authors"] in LABELS  # the authors' rule never gives INVALID
    for convention in ("medhal", "strict"):
        assert case["expected"][convention] in LABELS | {None}
    if not case["not_sure_offered"]:
        # Without the option, a would-be "not sure" is INVALID under medhal and strict.
        assert "not_sure" not in (case["expected"]["medhal"], case["expected"]["strict"])
    if case["expected"]["strict"] is not None:
        # What the exact format accepts, the careful reading reads the same way.
        assert case["expected"]["medhal"] == case["expected"]["strict"]
    assert case["shape"] in SHAPES
    assert case["reason"].strip()


def test_corpus_size_and_coverage() -> None:
    assert len(CASES) >= MIN_CASES
    shapes = Counter(c["shape"] for c in CASES)
    assert set(shapes) == SHAPES
    assert shapes["tiny_model"] >= MIN_TINY_MODEL
    assert {c["not_sure_offered"] for c in CASES} == {True, False}
    for convention in ("medhal", "strict"):
        assert {c["expected"][convention] for c in CASES} == LABELS | {None}
    assert {c["expected"]["authors"] for c in CASES} == LABELS


def test_oracle_rule_order_on_hand_picked_strings() -> None:
    # Line 80 fires before line 82: "not sure" holds "not", so it can never read as 2.
    assert authors_verdict("Not sure") == HALLUCINATED
    assert authors_verdict("2") == NOT_SURE
    assert authors_verdict("") == 0


def test_oracle_metrics_drop_not_sure_then_score_binary() -> None:
    gold = [1, 1, 0, 0, 1, 0]
    predicted = [1, 0, 1, 0, 2, 2]
    # Kept: indices 0-3 -> gold [1,1,0,0], pred [1,0,1,0]: tp=1, fp=1, fn=1, 2 of 4 right.
    # precision 1/2, recall 1/2, F1 2*1/(2+1+1) = 1/2; not sure 2 of 6.
    subset = authors_subset_metrics(gold, predicted)
    assert subset == {"not_sure_fraction": 2 / 6, "accuracy": 0.5, "precision": 0.5, "recall": 0.5, "f1": 0.5}
    overall = authors_overall_metrics(gold, predicted)
    assert overall == {"precision": 0.5, "recall": 0.5, "f1": 0.5, "not_sure_fraction": 2 / 6}


def test_oracle_metrics_when_everything_is_not_sure() -> None:
    # Lines 132-136 give None per difficulty; lines 150-157 give 0 overall.
    assert authors_subset_metrics([0, 1], [2, 2])["f1"] is None
    expected = {"precision": 0.0, "recall": 0.0, "f1": 0.0, "not_sure_fraction": 1.0}
    assert authors_overall_metrics([0, 1], [2, 2]) == expected


@pytest.mark.parametrize(
    ("gold", "predicted"),
    [
        ([1, 0, 1, 1, 0, 0, 1], [1, 1, 0, 1, 0, 2, 1]),
        ([0, 0, 0], [0, 0, 0]),  # no positives at all: zero_division=0 everywhere
        ([1, 1, 0], [0, 0, 0]),  # no predicted positives: precision 0 by zero_division
        ([0, 1, 0, 1], [1, 1, 1, 1]),
    ],
)
def test_oracle_metrics_match_sklearn(gold: list[int], predicted: list[int]) -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    kept = [j for j, p in enumerate(predicted) if p != 2]
    g = [gold[j] for j in kept]
    p = [predicted[j] for j in kept]
    ours = authors_subset_metrics(gold, predicted)
    assert ours["accuracy"] == pytest.approx(metrics.accuracy_score(g, p))
    assert ours["precision"] == pytest.approx(metrics.precision_score(g, p, zero_division=0))
    assert ours["recall"] == pytest.approx(metrics.recall_score(g, p, zero_division=0))
    assert ours["f1"] == pytest.approx(metrics.f1_score(g, p, zero_division=0))
