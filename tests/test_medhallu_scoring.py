"""The MedHallu verdict parser on every reply shape real models produce, and the reward."""

from __future__ import annotations

import pytest

from medhallu.scoring import FACTUAL, HALLUCINATED, NOT_SURE, Verdict, answer_text, parse_reply, reward

SHAPES = [
    # bare digits and punctuation
    ("0", FACTUAL),
    ("1", HALLUCINATED),
    ("2", NOT_SURE),
    ("0.", FACTUAL),
    ("1.\n", HALLUCINATED),
    ("  1  ", HALLUCINATED),
    ("'1'", HALLUCINATED),
    ("`0`", FACTUAL),
    ("**1**", HALLUCINATED),
    ("(1)", HALLUCINATED),
    # labels
    ("Answer: 1", HALLUCINATED),
    ("answer:0", FACTUAL),
    ("Your Judgement: 0", FACTUAL),
    ("Judgment: **1**", HALLUCINATED),
    ("Final answer: 2", NOT_SURE),
    ("Verdict - 0", FACTUAL),
    ("After checking the numbers, the answer is 1.", HALLUCINATED),
    # digit plus explanation: the digit decides
    ("1 (hallucinated)", HALLUCINATED),
    ("0 (factual)", FACTUAL),
    ("2 (not sure)", NOT_SURE),
    ("0\n\nThe answer agrees with the knowledge; nothing is hallucinated.", FACTUAL),
    ("1 - the mechanism is invented", HALLUCINATED),
    # words
    ("factual", FACTUAL),
    ("Factual.", FACTUAL),
    ("Hallucinated", HALLUCINATED),
    ("The answer is hallucinated.", HALLUCINATED),
    ("This is a hallucination.", HALLUCINATED),
    ("The answer is factually correct.", FACTUAL),
    ("not sure", NOT_SURE),
    ("Not sure.", NOT_SURE),
    ("unsure", NOT_SURE),
    ("I'm uncertain about this one.", NOT_SURE),
    ("I don't know", NOT_SURE),
    ("Pass", NOT_SURE),
    # negation: the negated phrase wins over the bare word inside it
    ("Not hallucinated.", FACTUAL),
    ("non-hallucinated", FACTUAL),
    ("The answer is not a hallucination.", FACTUAL),
    ("Non-factual", HALLUCINATED),
    ("nonfactual", HALLUCINATED),
    ("The answer is not factual.", HALLUCINATED),
    # abstention is checked before negation words: "not sure" is never "hallucinated"
    ("Not sure whether it is factual", NOT_SURE),
    ("I am not sure; it might be hallucinated.", NOT_SURE),
    # reasoning blocks
    ("<think>The knowledge says 14% vs 9%, so 1 looks wrong.</think>0", FACTUAL),
    ("<think>Let me weigh 0 against 1.</think>\n\nAnswer: 1", HALLUCINATED),
    ("<think>a</think><think>b</think>hallucinated", HALLUCINATED),
    ("Reasoning that a template opened for us.</think>\n1", HALLUCINATED),
    ("<THINK>upper case tags</THINK> 0", FACTUAL),
]

INVALID_SHAPES = [
    "",
    "   ",
    "<think>I think the answer is 1",  # unclosed reasoning: never answered
    "<think>done</think>",  # nothing after the reasoning
    "0.5",
    "10",
    "3",
    "The study enrolled 40 patients.",
    "I cannot answer medical questions.",
]


@pytest.mark.parametrize(("reply", "label"), SHAPES)
def test_reply_shapes(reply, label):
    assert parse_reply(reply, not_sure_offered=True).label == label


@pytest.mark.parametrize("reply", INVALID_SHAPES)
def test_no_verdict_is_invalid(reply):
    verdict = parse_reply(reply, not_sure_offered=True)
    assert verdict.code is None and verdict.label is None and not verdict.answered


def test_none_reply_is_invalid():
    assert parse_reply(None, not_sure_offered=True).code is None


@pytest.mark.parametrize("reply", ["2", "not sure", "Unsure.", "Answer: 2", "<think>hmm</think>I don't know"])
def test_abstention_is_invalid_when_not_offered(reply):
    assert parse_reply(reply, not_sure_offered=True).abstained
    assert parse_reply(reply, not_sure_offered=False).code is None


def test_verdicts_unaffected_by_the_not_sure_option():
    for reply, label in SHAPES:
        if label != NOT_SURE:
            assert parse_reply(reply, not_sure_offered=False).label == label, reply


def test_answer_text():
    assert answer_text("<think>x</think> 1") == " 1"
    assert answer_text("<think>x") is None
    assert answer_text("plain") == "plain"


@pytest.mark.parametrize(
    ("code", "gold", "not_sure_reward", "expected"),
    [
        (1, HALLUCINATED, 0.0, 1.0),
        (0, FACTUAL, 0.0, 1.0),
        (0, HALLUCINATED, 0.0, 0.0),
        (1, FACTUAL, 0.5, 0.0),
        (None, FACTUAL, 0.5, 0.0),
        (2, FACTUAL, 0.0, 0.0),
        (2, HALLUCINATED, 0.3, 0.3),
    ],
)
def test_reward(code, gold, not_sure_reward, expected):
    assert reward(Verdict(code), gold, not_sure_reward) == expected
