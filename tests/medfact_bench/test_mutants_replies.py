"""Tests written to kill mutants of `medfact_bench/replies.py` that `make mutants` found alive
(reports/test-quality.md lists each one, killed or explained). Every expected reading is
written by hand from the rule quoted in the comment.
"""

from __future__ import annotations

import pytest

from medfact_bench.replies import read_medhal


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


def test_only_the_last_fifty_score_labels_are_read():
    # `_SCORES_READ`: labels are read from the last one back, fifty at most (a runaway
    # generation must not cost a reading per label). Here "Score: 1" is followed by fifty
    # mid-line "the score:" labels with nothing after them: those fifty are the ones read,
    # none holds a score, so nothing is read. With forty-nine of them, "Score: 1" is among
    # the last fifty and is read.
    assert read_medhal("Score: 1\n" + "Let me restate the score:\n" * 50) is None
    assert read_medhal("Score: 1\n" + "Let me restate the score:\n" * 49) == 1


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


def test_a_stated_score_is_looked_for_in_the_40_characters_after_the_phrase():
    # "the score is " is read with the 40 characters after it: "1" + spaces + "or 2".
    # With 35 spaces that is 1 + 35 + 4 = 40 characters, "or 2" inside: ambiguous, no score.
    # With 36 the "2" is the 41st character, outside the statement: it reads 1.
    assert read_medhal("So the score is 1" + " " * 35 + "or 2") is None
    assert read_medhal("So the score is 1" + " " * 36 + "or 2") == 1


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
