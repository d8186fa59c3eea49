"""Tests written to kill mutants of `medhal/replies.py` that `make mutants` found alive
(reports/test-quality.md lists each one, killed or explained). Expected values are written by
hand.
"""

from __future__ import annotations

from medhal.replies import ANSWER_LABELS, label_pattern, last_boxed, last_labelled, unwrap_latex

PATTERN = label_pattern(ANSWER_LABELS)


def test_the_last_label_decides_even_when_it_is_empty():
    # The reply starts a second answer and stops: its last label has no value, so there is no
    # answer; the earlier "1" is not taken for it.
    assert last_labelled("Answer: 1\nAnswer:", PATTERN) is None
    assert last_labelled("Answer: 1\nAnswer: 2", PATTERN) == "2"


def test_a_labelled_value_is_cut_at_200_characters():
    assert last_labelled("Answer: " + "x" * 250, PATTERN) == "x" * 200


def test_a_latex_wrapper_around_the_whole_value_is_removed():
    # Each of the four math delimiters wraps the whole value: only the content is left.
    assert unwrap_latex("$1$") == "1"
    assert unwrap_latex("$$1$$") == "1"
    assert unwrap_latex("\\(1\\)") == "1"
    assert unwrap_latex("\\[1\\]") == "1"
    assert last_boxed("So \\boxed{\\(\\text{Vitamin C}\\)}.") == "Vitamin C"
    # An empty formula leaves nothing (no answer), and a lone dollar sign is not a pair of
    # delimiters: it is kept as written.
    assert unwrap_latex("$$") == ""
    assert unwrap_latex("\\(\\)") == ""
    assert unwrap_latex("$") == "$"


def test_a_wrapper_that_does_not_span_the_whole_value_is_kept():
    # The `}` of \mathrm is followed by "+": the sodium ion, not sodium; removing the wrapper
    # would lose the "+". A closing "$" without an opening one is text (a price).
    assert unwrap_latex("\\mathrm{Na}+") == "\\mathrm{Na}+"
    assert unwrap_latex("costs 5$") == "costs 5$"
    assert unwrap_latex("\\(x") == "\\(x"


def test_unwrapping_stops_after_eight_nested_wrappers():
    # The loop is bounded (eight rounds) so a hostile reply stays linear. "$$" plus seven
    # \text wrappers is eight levels: all removed. Nine \text wrappers: eight removed, one
    # left.
    assert unwrap_latex("$$" + "\\text{" * 7 + "1" + "}" * 7 + "$$") == "1"
    assert unwrap_latex("\\text{" * 9 + "1" + "}" * 9) == "\\text{1}"
