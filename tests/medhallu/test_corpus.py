"""Every case of the hand-labelled MedHallu reply corpus (`tests/medhallu/replies.jsonl`)
reads as labelled under all three conventions, through `medhallu.replies.read_all` with
the case's own `not_sure_offered` and answer vocabulary (`vocabulary`, default `digits`).

WHY: the corpus was labelled by hand, independently of the readers, so it judges them;
one test per (case, convention), so a disagreement names the case and the convention.
Neither side is adjusted to make the other pass: a failing case is for the lead to settle
(is the label or the reader wrong?). The corpus's own shape and its `authors` column
against the authors' rule are checked in test_corpus_authors.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from medhallu.replies import CONVENTIONS, read_all
from tests.tables import read_jsonl

CORPUS = Path(__file__).with_name("replies.jsonl")


def _cases() -> list[dict]:
    return read_jsonl(CORPUS)


CASES = _cases()
PAIRS = [(case, convention) for case in CASES for convention in CONVENTIONS]


def test_the_corpus_is_labelled_for_every_convention():
    assert len(CASES) >= 200
    assert len({c["id"] for c in CASES}) == len(CASES)
    assert CONVENTIONS == ("medhal", "authors", "strict")
    for case in CASES:
        assert set(case["expected"]) == set(CONVENTIONS), case["id"]
        assert isinstance(case["not_sure_offered"], bool), case["id"]


@pytest.mark.parametrize(("case", "convention"), PAIRS, ids=[f"{c['id']}-{conv}" for c, conv in PAIRS])
def test_case_reads_as_labelled(case, convention):
    readings = read_all(case["reply"], case["not_sure_offered"], case.get("vocabulary", "digits"))
    assert readings[convention] == case["expected"][convention], (
        case["id"],
        case["shape"],
        case["reason"],
        case["reply"],
    )
