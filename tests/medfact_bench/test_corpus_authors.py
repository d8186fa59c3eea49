"""The labelled MedFact-Bench reply corpus (replies.jsonl): well-formed, and its `authors`
and `strict` columns agree with Med-V1's reading and format check as restated in
authors_oracle.py.

WHY: the corpus is the independent oracle for the project's three readers. Its labels were
written by hand; holding the two columns that come from the authors' code to a restatement
of that code catches a slip before the corpus judges the project's readers.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from tests.families import HAND_WRITTEN_SHAPES
from tests.medfact_bench.authors_oracle import (
    authors_score,
    is_legitimate_format,
    parse_llm_output,
    strict_score,
)
from tests.tables import read_jsonl

CORPUS = Path(__file__).with_name("replies.jsonl")
SCALE = {-2, -1, 0, 1, 2}
MIN_CASES = 90
MIN_TINY_MODEL = 15
SHAPES = (
    {
        "canonical",
        "score_body",
        "unicode_digit",
        "two_scores",
        "score_in_think",
        "tag_case",
        "unclosed_score",
        "missing_think",
        "text_outside",
        "truncated",
        "boxed",
        "labelled",
        "reasoning_model",
        "numbered_reasoning",
        "chatty",
        "prompt_echo",
        "negation",
        "abstention",
        "refusal",
        "non_english",
        "empty_or_garbage",
        "tiny_model",
        "self_correction",
        "hedge",
        "score_before_reasoning",
        "heading",
        "scale_words",
        "non_integer",
    }
    | HAND_WRITTEN_SHAPES
    | {"gloss", "minus_sign"}
)
"""Issue 31 added the families of `tests.families.HAND_WRITTEN_SHAPES` and its own."""


def _load() -> list[dict]:
    return read_jsonl(CORPUS)


CASES = _load()
IDS = [c["id"] for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_authors_column_matches_parse_llm_output(case: dict) -> None:
    assert case["expected"]["authors"] == authors_score(case["reply"])


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_strict_column_matches_the_rl_format_check(case: dict) -> None:
    assert case["expected"]["strict"] == strict_score(case["reply"])


def test_ids_are_unique_and_numbered() -> None:
    assert len(IDS) == len(set(IDS))
    assert all(re.fullmatch(r"mf-\d{3}", i) for i in IDS)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_case_is_well_formed(case: dict) -> None:
    assert set(case) == {"id", "reply", "expected", "shape", "reason"}
    assert isinstance(case["reply"], str)
    assert set(case["expected"]) == {"medhal", "authors", "strict"}
    for value in case["expected"].values():
        assert value is None or (type(value) is int and value in SCALE)
    if case["expected"]["strict"] is not None:
        # What the exact format accepts, the careful reading and the authors read alike.
        assert case["expected"]["medhal"] == case["expected"]["authors"] == case["expected"]["strict"]
    assert case["shape"] in SHAPES
    assert case["reason"].strip()


def test_corpus_size_and_coverage() -> None:
    assert len(CASES) >= MIN_CASES
    shapes = Counter(c["shape"] for c in CASES)
    assert set(shapes) == SHAPES
    assert shapes["tiny_model"] >= MIN_TINY_MODEL
    for convention in ("medhal", "authors", "strict"):
        assert {c["expected"][convention] for c in CASES} == SCALE | {None}
    assert any(len(c["reply"]) > 5000 for c in CASES)  # the 5,000-digit score


def test_parse_llm_output_keeps_the_first_blocks() -> None:
    reply = "<think> a </think><think>b</think><score>+1</score><score>2</score>"
    assert parse_llm_output(reply) == {"rationale": "a", "score": 1}
    assert parse_llm_output("") is None
    assert parse_llm_output("no tags") == {"rationale": "", "score": None}


def test_format_check_examples() -> None:
    assert is_legitimate_format("<think>x</think>\n<score>2</score>\n")
    assert not is_legitimate_format("<think>x</think>\n<score>2</score>\n\n")
    assert not is_legitimate_format("<think>x</think>\n<think>y</think><score>2</score>")
    # The format check passes a score body that strict then refuses.
    assert is_legitimate_format("<think>x</think><score>+2</score>")
    assert strict_score("<think>x</think><score>+2</score>") is None
