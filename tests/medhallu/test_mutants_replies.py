"""Tests written to kill mutants of `medhallu/replies.py` that `make mutants` found alive
(reports/test-quality.md lists each one, killed or explained). Every expected reading is
written by hand, as a careful human reads the reply; most of the cases live in the labelled
corpus (`replies.jsonl`, mh-230 to mh-257), these check the windows of an adjective
verdict from the inside, and the limits of the labelled-answer and conditional readings.
"""

from __future__ import annotations

import pytest

from medhallu.replies import FACTUAL, HALLUCINATED, NOT_SURE, read_medhal


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


def test_only_the_last_fifty_labelled_answers_are_read():
    # 1 + 50 labels: the 50 read are all "maybe" (no verdict), so the "Answer: 1" before
    # them is never reached and the reply has no reading (INVALID). With one "maybe" fewer,
    # "Answer: 1" is the 50th label from the end and is read: hallucinated.
    assert read_medhal("Answer: 1\n" + "Answer: maybe\n" * 50, True) is None
    assert read_medhal("Answer: 1\n" + "Answer: maybe\n" * 49, True) == HALLUCINATED


def test_a_later_labelled_answer_wins_only_when_marked_as_the_correction():
    # A yes/no label (hallucinated) then a later labelled answer (0): two answers; the later
    # one wins when the text before it marks it as a correction ("On reflection").
    assert read_medhal("Hallucination: yes\nAnswer: 0", True) is None
    assert read_medhal("Hallucination: yes\nOn reflection, Answer: 0", True) == FACTUAL
    # "Answer is0" states 0 and the any-language last-line rule reads the final 1: two
    # different answers on one line, none marked: no reading.
    assert read_medhal("Answer is0: 1", True) is None
    assert read_medhal("Answer is1: 1", True) == HALLUCINATED


@pytest.mark.parametrize(
    ("reply", "label"),
    [
        # "if" 40 characters before "unsure" ("If" at 0, "unsure" at 40): a conditional, no
        # abstention, and nothing else is said: INVALID.
        ("If the abstract gave no dose I would be unsure.", None),
        # One character further ("dose," adds a comma: "unsure" at 41): out of the
        # 40-character reach of a conditional, so the model abstains: not sure.
        ("If the abstract gave no dose, I would be unsure.", NOT_SURE),
    ],
)
def test_a_conditional_reaches_back_forty_characters_from_an_abstention(reply, label):
    text = reply.lower()
    assert text.index("unsure") - text.index("if") in (40, 41)
    assert read_medhal(reply, True) == label
