"""Tests written to kill mutants of `medhallu/replies.py` that `make mutants` found alive
(reports/test-quality.md lists each one, killed or explained). Every expected reading is
written by hand, as a careful human reads the reply; most of the cases live in the labelled
corpus (`replies.jsonl`, mh-230 to mh-242), these check the two windows of an adjective
verdict from the inside.
"""

from __future__ import annotations

import pytest

from medhallu.replies import FACTUAL, HALLUCINATED, read_medhal


@pytest.mark.parametrize(
    ("reply", "label"),
    [
        # The copula may stand up to three words before the adjective ("is" ... "accurate"),
        # and a negation between them flips it.
        ("The answer is not entirely accurate.", HALLUCINATED),
        ("The answer is very clearly correct.", FACTUAL),
        # The subject may stand up to four words before the copula ("answer" ... "is").
        ("The answer given above is wrong.", HALLUCINATED),
        # A typographic apostrophe negates like a straight one.
        ("The answer isn’t correct.", HALLUCINATED),
        ("It doesn’t contain a hallucination.", FACTUAL),
    ],
)
def test_an_adjective_said_of_the_answer_within_its_windows_is_a_verdict(reply, label):
    assert read_medhal(reply, True) == label
