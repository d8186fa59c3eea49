"""Tests written to kill mutants of `medhal/replies.py` that `make mutants` found alive
(reports/test-quality.md lists each one, killed or explained). Expected values are written by
hand.
"""

from __future__ import annotations

from medhal.replies import ANSWER_LABELS, label_pattern, last_labelled

PATTERN = label_pattern(ANSWER_LABELS)


def test_the_last_label_decides_even_when_it_is_empty():
    # The reply starts a second answer and stops: its last label has no value, so there is no
    # answer; the earlier "1" is not taken for it.
    assert last_labelled("Answer: 1\nAnswer:", PATTERN) is None
    assert last_labelled("Answer: 1\nAnswer: 2", PATTERN) == "2"


def test_a_labelled_value_is_cut_at_200_characters():
    assert last_labelled("Answer: " + "x" * 250, PATTERN) == "x" * 200
