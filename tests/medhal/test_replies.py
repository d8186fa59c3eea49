"""The shared reply reader: reasoning blocks, fences, markdown, boxed answers and labels,
read as a careful human reads them."""

from __future__ import annotations

import pytest

from medhal.kit.replies import (
    ANSWER_LABELS,
    after_leading_reasoning,
    after_reasoning,
    answer_text,
    label_pattern,
    labelled,
    last_boxed,
    last_labelled,
    last_line,
    plain,
    unwrap_latex,
    without_fences,
)


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("<think>weigh it</think>1", "1"),
        ("<THINK>upper</THINK> 0", " 0"),
        ("<thinking>a</thinking>\nAnswer: 2", "\nAnswer: 2"),
        ("<reasoning>x</reasoning>ok", "ok"),
        ("<think>a</think>b<think>c</think>final", "final"),
        ("opened in the prompt</think>1", "1"),  # a chat template opened the block
        ("no reasoning at all", "no reasoning at all"),
        ("< think >spaced</ think >yes", "yes"),
    ],
)
def test_after_reasoning_keeps_what_follows_the_last_block(reply, answer):
    assert after_reasoning(reply) == answer


@pytest.mark.parametrize(
    "reply", ["<think>cut off while thinking", "<think>a</think>b<think>again", "<Reasoning>never closed"]
)
def test_an_unclosed_reasoning_block_means_no_answer(reply):
    assert after_reasoning(reply) is None
    assert answer_text(reply) is None


def test_none_stays_none():
    assert after_reasoning(None) is None and after_leading_reasoning(None) is None


def test_strict_allows_one_leading_block_only():
    assert after_leading_reasoning("  <think>x</think>1") == "1"
    assert after_leading_reasoning("<think>x</think>1<think>y</think>") == "1<think>y</think>"
    assert after_leading_reasoning("1 <think>x</think>") == "1 <think>x</think>"
    assert after_leading_reasoning("<think>never closed") is None


def test_fences_and_markdown_are_decoration():
    assert without_fences('```json\n{"a": 1}\n```') == '\n{"a": 1}\n'
    assert plain("## Verdict\n> **1** and `0`") == "Verdict\n1 and 0"
    assert plain("__bold__ *it*") == "bold it"


@pytest.mark.parametrize(
    ("text", "boxed"),
    [
        (r"so \boxed{1}", "1"),
        (r"\boxed{0} then \boxed{1}", "1"),
        (r"\boxed{\text{Hallucinated}}", "Hallucinated"),
        (r"$\boxed{2}$", "2"),
        (r"\boxed{ $-1$ }", "-1"),
        (r"\boxed{\frac{1}{2}}", r"\frac{1}{2}"),
        (r"\fbox{0}", "0"),
        ("no box", None),
        (r"cut off \boxed{1", None),
    ],
)
def test_last_boxed(text, boxed):
    assert last_boxed(text) == boxed


def test_unwrap_latex_stops_at_content():
    assert unwrap_latex(r"\textbf{\text{yes}}") == "yes"
    assert unwrap_latex(r"\text{a} and \text{b}") == r"\text{a} and \text{b}"


def test_labels():
    pattern = label_pattern(ANSWER_LABELS)
    text = "Answer: 0\nexplanation\nFinal answer: 1\nmore"
    assert [v for _, v in labelled(text, pattern)] == ["0", "1"]
    assert last_labelled(text, pattern) == "1"
    assert last_labelled("Verdict:\n\n  2\n", pattern) == "2"
    assert last_labelled("The answer is 1", pattern) is None  # "is" is not a label
    assert last_labelled("non-answer: 3", pattern) is None  # a label starts a word
    assert last_labelled("final   answer - 2", pattern) == "2"


def test_labelled_values_are_bounded():
    pattern = label_pattern(("answer",))
    value = last_labelled("Answer: " + "x" * 10_000, pattern, limit=50)
    assert value == "x" * 50


def test_last_line():
    assert last_line("a\nb\n\n  c  \n\n") == "c"
    assert last_line("single") == "single"
