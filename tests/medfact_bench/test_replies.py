"""Reading MedFact-Bench replies under the three conventions (`medfact_bench.replies`) and
grading them (`medfact_bench.scoring`), case by case.

Every expected reading is written by hand from the rules in the conventions spec:
- authors: Med-V1 `utils.py` @ 9c6c22b `parse_llm_output` (lines 32-48): the first
  lower-case `<score>(.*?)</score>` of the raw reply, `.strip()`, `int()`; off the -2..2
  scale is INVALID.
- strict: Med-V1 `training/grpo/verl/workers/reward_function/compute_score.py`
  `is_legitimate_format` (lines 3-17): one each of the four tags, the whole reply
  `^<think>.*?</think>\\s*<score>.*?</score>$`, and the body exactly one of -2..2.
- medhal: reasoning removed (unclosed: INVALID); every score block after it (agreeing ->
  the score, disagreeing -> INVALID); else the last `\\boxed{n}` or a labelled `Score: n`.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from medfact_bench.replies import (
    CONVENTIONS,
    READERS,
    label_of,
    read_all,
    read_authors,
    read_medhal,
    read_strict,
)
from medfact_bench.scoring import gold_reply, score, wrong_reply

X = None  # INVALID, in the tables below

# (reply, medhal, authors, strict)
CASES = [
    # The exact format asked for: every convention reads it.
    ("<think>a</think><score>2</score>", 2, 2, 2),
    ("<think>a</think>\n<score> 1 </score>", 1, 1, 1),
    ("<think>a\nb</think>\n\n<score>-1</score>\n", -1, -1, -1),  # `$` tolerates one final newline
    ("<think>a</think> \t\n<score>\n0\n</score>", 0, 0, 0),
    ("<think></think><score>-2</score>", -2, -2, -2),
    # No think block: read by medhal and the authors, not by the format check.
    ("<score>0</score>", 0, 0, X),
    ("<score>-1</score>", -1, -1, X),
    ("<score>\n0\n</score>", 0, 0, X),
    # Tag case: the authors' regex is case-sensitive; medhal's tags are not.
    ("<SCORE>-2</SCORE>", -2, X, X),
    ("<think>a</think><Score>2</Score>", 2, X, X),
    ("<THINK>a</THINK><score>2</score>", 2, 2, X),
    ("<think>a</think>< score >1</ score >", 1, X, X),
    # int() accepts a sign, leading zeros, '-0' and Unicode decimal digits; the exact list does not.
    ("<score>+2</score>", 2, 2, X),
    ("<think>a</think><score>+2</score>", 2, 2, X),
    ("<think>a</think><score>-0</score>", 0, 0, X),
    ("<think>a</think><score>02</score>", 2, 2, X),
    ("<think>a</think><score>\u0662</score>", 2, 2, X),  # ARABIC-INDIC DIGIT TWO
    # Off the scale, or not an integer.
    ("<score>3</score>", X, X, X),
    ("<score>-3</score>", X, X, X),
    ("<think>a</think><score>10</score>", X, X, X),
    ("<score>1.5</score>", X, X, X),
    ("<score>two</score>", X, X, X),
    ("<score></score>", X, X, X),
    ("<think>a</think><score>1 or 2</score>", X, X, X),
    ("<think>a</think><score>2/5</score>", X, X, X),
    ("<think>a</think><score>-1 to 1</score>", X, X, X),
    # medhal tolerates decoration and an explanation; int() does not.
    ("<score>1.0</score>", 1, X, X),
    ("<think>a</think><score>2 (Strong Agreement)</score>", 2, X, X),
    ("<think>a</think><score>**-1**</score>", -1, X, X),
    ("<think>a</think><score>`0`</score>", 0, X, X),
    ("<think>a</think><score>(1)</score>", 1, X, X),
    ("<think>a</think><score>\u22121</score>", -1, X, X),  # MINUS SIGN
    # Several blocks: the authors take the first, medhal wants them to agree, strict wants one.
    ("<score>-2</score><score>2</score>", X, -2, X),
    ("<think>a</think><score>1</score><score>2</score>", X, 1, X),
    ("<think>a</think><score>2</score> so: <score>2</score>", 2, 2, X),
    ("<think>a</think><score>1</score> extra", 1, 1, X),
    # A score inside the reasoning: the authors read the raw reply, medhal reads after it.
    ("<think>maybe <score>1</score></think><score>-1</score>", -1, 1, X),
    ("<think>I would give <score>2</score></think>", X, 2, X),
    ("<think>unclosed <score>2</score>", X, 2, X),
    ("<think>a<score>1</score>", X, 1, X),
    ("<score>1</score><think>a</think>", 1, 1, X),  # a score before the reasoning, none after it
    # Reasoning in other shapes: medhal removes every block; strict needs exactly one <think> first.
    ("<think>a</think><think>b</think><score>1</score>", 1, 1, X),
    ("</think><score>2</score>", 2, 2, X),  # the chat template opened the block
    ("<reasoning>a</reasoning><score>1</score>", 1, 1, X),
    ("  <think>a\nb</think>\n\n<score>1</score>\n", 1, 1, X),  # `^<think>`: nothing before the block
    ("<think>a</think><score>2</score>\n\n", 2, 2, X),  # `$` tolerates one newline, not two
    ("<think>a</think><score>2</score> ", 2, 2, X),
    ("x<think>a</think><score>2</score>", 2, 2, X),
    # A cut-off or forgotten closing tag: medhal reads a bare number at the very end.
    ("<score>1", 1, X, X),
    ("<think>a</think><score>-2", -2, X, X),
    ("<think>a</think><score>2 because the trial", X, X, X),
    # Without a score block: medhal reads a last \boxed{} or a labelled score.
    ("<think>a</think>\\boxed{-1}", -1, X, X),
    ("<think>a</think>The score is \\boxed{\\text{2}}.", 2, X, X),
    ("<think>a</think>Final score: 1", 1, X, X),
    ("Answer: 0", 0, X, X),
    ("**Score:** -2", -2, X, X),
    ("The score is 2", 2, X, X),  # a stated score, as a careful reader takes it
    ("<think>Score: 2</think>", X, X, X),
    # Nothing to read.
    ("", X, X, X),
    ("I cannot decide.", X, X, X),
    ("<think>a</think>", X, X, X),
]


@pytest.mark.parametrize("reply, medhal, authors, strict", CASES)
def test_reading_under_each_convention(reply, medhal, authors, strict):
    assert read_medhal(reply) == medhal
    assert read_authors(reply) == authors
    assert read_strict(reply) == strict
    assert read_all(reply) == {"medhal": medhal, "authors": authors, "strict": strict}


def test_conventions_are_the_three_named_ones():
    assert CONVENTIONS == ("medhal", "authors", "strict")
    assert {"medhal": read_medhal, "authors": read_authors, "strict": read_strict} == READERS


def test_strict_rejects_two_score_blocks_even_when_one_is_in_the_reasoning():
    """Regression: a draft score inside the reasoning plus a final one is two `<score>` tags,
    which the authors' format check (compute_score.py lines 5-9) rejects."""
    reply = "<think>At first sight <score>1</score>, but the trial says otherwise.</think><score>-1</score>"
    assert read_strict(reply) is None
    assert read_authors(reply) == 1  # the first block of the raw reply
    assert read_medhal(reply) == -1  # the block after the reasoning


@pytest.mark.parametrize(
    "reply, authors",
    [
        ("<score>" + "1" * 5000, X),
        ("<score>" + "1" * 5000 + "</score>", X),
        ("<think>a</think><score>" + "0" * 5000 + "</score>", X),
        ("<think>a</think><score>-" + "0" * 4999 + "1</score>", X),
    ],
    ids=["unclosed", "closed", "zeros", "signed"],
)
def test_a_huge_number_is_invalid_and_never_raises(reply, authors):
    """Regression: `<score>` and thousands of digits. int() refuses more than 4,300 digits
    (ValueError, which the authors' except clause turns into no score); medhal reads no
    longer number either, and strict never reads a score of thousands of digits."""
    assert read_all(reply) == {"medhal": None, "authors": authors, "strict": None}


def test_leading_zeros_are_read_up_to_the_authors_4300_digits():
    """Leading zeros do not change a number (`00002` is 2), up to int()'s 4,300 digits, as
    the authors' reading takes them; a longer run is a generation running away."""
    padded = "<think>a</think><score>" + "0" * 4299 + "2</score>"
    assert read_all(padded) == {"medhal": 2, "authors": 2, "strict": None}
    assert read_all("<think>a</think><score>-" + "0" * 4299 + "1</score>")["medhal"] == -1
    assert read_medhal("<think>a</think><score>" + "0" * 4300 + "2</score>") is None


def test_the_4300_digit_limit_is_the_authors():
    """int() of 4,300 digits succeeds and of 4,301 raises (CPython's default limit), so the
    authors' reading gives 2 for the first and nothing for the second."""
    assert read_authors("<score>" + "0" * 4299 + "2</score>") == 2
    assert read_authors("<score>" + "0" * 4300 + "2</score>") is None
    assert read_authors("<score>+" + "0" * 4299 + "2</score>") == 2  # the sign is not a digit


def test_underscored_long_score_reads_as_int_does():
    body = "0_" * 3000 + "1"
    assert int(body) == 1  # what utils.py line 44 computes
    assert read_authors(f"<score>{body}</score>") == 1


def test_none_reply_is_invalid_everywhere():
    assert read_all(None) == {"medhal": None, "authors": None, "strict": None}


@pytest.mark.parametrize(
    "value, label",
    [
        (2, "SUPPORT"),
        (1, "SUPPORT"),
        (0, "NEI"),
        (-1, "CONTRADICT"),
        (-2, "CONTRADICT"),
        (None, None),
        (3, None),
        (-3, None),
    ],
)
def test_label_of_score(value, label):
    """The paper's mapping: 1, 2 agree; 0 neutral; -1, -2 contradict."""
    assert label_of(value) == label


@dataclass
class Item:
    label: str
    parser: str = "medhal"


@pytest.mark.parametrize("parser", ["medhal", "authors", "strict"])
def test_score_grades_every_convention_and_the_run_follows_its_own(parser):
    """Gold NEI; the reply reads 0 (NEI) under medhal, 1 (SUPPORT) under the authors' rule,
    and nothing under strict (two score tags)."""
    scored = score(Item("NEI", parser), "<think>maybe <score>1</score></think><score>0</score>")
    expected = {
        "correct_medhal": 1.0,
        "parsed_medhal": 1.0,
        "correct_authors": 0.0,
        "parsed_authors": 1.0,
        "correct_strict": 0.0,
        "parsed_strict": 0.0,
    }
    own = {"medhal": (1.0, 1.0), "authors": (0.0, 1.0), "strict": (0.0, 0.0)}[parser]
    assert scored.metrics == {**expected, "correct": own[0], "parsed": own[1]}
    assert scored.info == {
        "readings": {"medhal": "NEI", "authors": "SUPPORT", "strict": None},
        "scores": {"medhal": 0, "authors": 1, "strict": None},
        "parsed_score": {"medhal": 0, "authors": 1, "strict": None}[parser],
        "pred_label": {"medhal": "NEI", "authors": "SUPPORT", "strict": None}[parser],
    }


def test_score_of_unreadable_reply():
    scored = score(Item("SUPPORT"), "I think the article supports the claim strongly.")
    assert scored.metrics == {
        "correct_medhal": 0.0,
        "parsed_medhal": 0.0,
        "correct_authors": 0.0,
        "parsed_authors": 0.0,
        "correct_strict": 0.0,
        "parsed_strict": 0.0,
        "correct": 0.0,
        "parsed": 0.0,
    }
    assert scored.info["pred_label"] is None and scored.info["parsed_score"] is None


@pytest.mark.parametrize(
    "label, other", [("SUPPORT", "CONTRADICT"), ("NEI", "SUPPORT"), ("CONTRADICT", "SUPPORT")]
)
def test_gold_and_wrong_replies(label, other):
    """The gold reply is in the exact format and reads as the gold label under every
    convention; the wrong reply reads as another label under every convention."""
    gold = gold_reply(Item(label))
    assert {label_of(v) for v in read_all(gold).values()} == {label}
    assert read_strict(gold) is not None
    assert {label_of(v) for v in read_all(wrong_reply(Item(label))).values()} == {other}


# ================================================================== edge cases, one by one
# Every expected reading is written by hand from the rule quoted in the comment.


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        # A "final score" stated in prose settles the reading over earlier labelled scores.
        ("Score: 1\nOn reflection the final score is 2.", 2),
        ("The score is -1 at first.\nThe final score is 0.", 0),
        # "On reflection" marks the later score as a correction; without any mark, two
        # different stated scores leave nothing to choose: INVALID.
        ("Score: 1\nOn reflection the score is 2.", 2),
        ("Score: 1\nThen the score is 2.", None),
    ],
)
def test_a_final_score_stated_in_prose_settles_the_reading(reply, score):
    assert read_medhal(reply) == score


def test_a_reply_stating_scores_more_than_mentions_read_times_is_a_runaway():
    # MENTIONS_READ scores are read; one more, and the reply repeats itself: no reading.
    from medhal.kit.commitment import MENTIONS_READ

    assert read_medhal("Score: 1\n" * MENTIONS_READ) == 1
    assert read_medhal("Score: 1\n" * (MENTIONS_READ + 1)) is None
    # A label that states a score and gives none is an unreadable score (issue 31: before,
    # only the last fifty labels were looked at).
    assert read_medhal("Score: 1\n" + "Let me restate the score:\n" * 3) is None


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        # Leading zeros and a sign do not change a score: a reader sees 2, -1 and 0 here.
        ("<score>0002</score>", 2),
        ("<score>+002</score>", 2),
        ("<score>-001</score>", -1),
        ("<score>-0</score>", 0),
        # Off the scale however it is written.
        ("<score>0010</score>", None),
        ("<score>-3</score>", None),
        # Any leading zeros up to int()'s 4,300 digits (as the authors read them); a longer
        # run is a generation running away, not a score (nor an error: never converted).
        ("<score>00002</score>", 2),
        ("<score>" + "0" * 100_000 + "2</score>", None),
        ("<score>" + "9" * 100_000 + "</score>", None),
    ],
)
def test_a_score_is_its_value_whatever_its_zeros_and_sign(reply, score):
    assert read_medhal(reply) == score


@pytest.mark.parametrize("spaces", [1, 35, 36, 200])
def test_an_alternative_on_the_line_of_a_stated_score_is_another_score(spaces):
    # "or 2" names a second score however far along the line it stands (issue 31: before,
    # only within the 40 characters after "the score is").
    assert read_medhal("So the score is 1" + " " * spaces + "or 2") is None


def test_the_authors_block_ends_at_the_first_closing_tag_after_its_opening():
    # parse_llm_output's `<score>(.*?)</score>` pairs the first <score> with the first
    # </score> after it: a stray closing tag earlier in the reply is not the block's end.
    from medfact_bench.replies import read_authors

    assert read_authors("</score> stray\n<score>1</score>") == 1
    assert read_authors("<score>-2</score> then </score>") == -2


def test_a_two_word_label_matches_with_any_run_of_spaces_or_tabs_between_its_words():
    # "Final answer" with two spaces or a tab is still the final answer, which settles the
    # reading over the earlier "Score: 1" (without "final" the two scores would leave none).
    assert read_medhal("Score: 1\nFinal  answer: 2") == 2
    assert read_medhal("Score: 1\nFinal\tanswer: 2") == 2
