"""Tests written to kill mutants of `med_halt/replies.py` that `make mutants` found alive
(reports/test-quality.md lists each one, killed or explained). Replies are hand-made;
every expected reading is worked out in the comments, not computed with the code under test.
"""

from __future__ import annotations

import pytest

from med_halt.replies import read_authors, read_medhal, read_strict
from tests.med_halt.authors_oracle import FCT_KEYS  # the answer keys of a fake-question reply

VERDICT = ("is_answer_correct",)


def test_a_null_fct_answer_still_keeps_the_verdict_the_reply_gave():
    # The FCT verdict ("is the proposed answer correct?") is graded on its own: a reply that
    # leaves the answer null but says "yes" has no answer (a format error) and the verdict
    # "yes", whether the dict is JSON or written without braces.
    for reply, method in (
        ('{"answer": null, "is_answer_correct": "yes"}', "json"),
        ("answer: null\nis_answer_correct: yes", "key-value"),
    ):
        reading = read_medhal(reply, FCT_KEYS)
        assert (reading.answer, reading.get(VERDICT), reading.method) == (None, "yes", method)


def test_a_strict_dict_without_the_answer_key_keeps_its_verdict_and_method():
    # One JSON dict holding only the verdict: no answer, but the verdict "yes" is read and
    # the dict was read as JSON (recorded as the trace's parse_method).
    reading = read_strict('{"is_answer_correct": "yes"}', FCT_KEYS)
    assert (reading.answer, reading.get(VERDICT), reading.method) == (None, "yes", "json")


def test_a_tolerant_value_ending_in_x_keeps_its_x():
    # "Factor X" is read whole, in an unquoted dict value and after an "Answer:" label; only
    # a trailing comma or quote marks would be cut.
    assert read_medhal("{cop: Factor X}", ("cop",)).answer == "Factor X"
    assert read_medhal("Answer: Factor X", ("cop",)).answer == "Factor X"


def test_an_empty_quoted_tolerant_value_is_no_answer():
    # `""` opens and closes a quote around nothing: the answer is empty, a format error (not
    # the text `"`).
    assert read_medhal('{cop: ""}', ("cop",)).answer is None


def test_a_tolerant_value_runs_to_the_last_closing_brace():
    # `{cop: 1{2} mg}`: the value is everything between "cop:" and the dict's last "}",
    # i.e. "1{2} mg", not "1{2" cut at the first "}".
    assert read_medhal("{cop: 1{2} mg}", ("cop",)).answer == "1{2} mg"


def test_the_authors_key_never_spans_a_line_break():
    # The authors' regex `['"](.*?)['"]\s*:` cannot cross a newline inside a key: the quote
    # pair "a" on the first line is no key, and the second line gives the pair cop -> x.
    reading = read_authors('"a"\n"cop": "x"}', ("cop",))
    assert (reading.fields, reading.answer) == ({"cop": "x"}, "x")


def test_braces_inside_json_strings_with_escaped_quotes_are_text():
    # A JSON string may hold `}` and escaped quotes: `"a}b"` is the text a}b, and
    # `"say \"}\" here"` the text say "}" here; an escaped backslash before the closing quote
    # (`"a\\"`) is the text a\ and the string ends there.
    assert read_medhal('{"cop": "a}b"}', ("cop",)).answer == "a}b"
    assert read_medhal('{"cop": "say \\"}\\" here"}', ("cop",)).answer == 'say "}" here'
    assert read_medhal('{"why": "a\\\\", "cop": "x}y"}', ("cop",)).answer == "x}y"
    assert read_medhal('Note "{": {"cop": "x}y"}', ("cop",)).answer == "x}y"


def test_stop_here_inside_the_first_answer_does_not_cut_a_later_one():
    # The cut for invented examples is searched from the end of the first answer dict: a
    # "Stop Here" quoted inside that dict, or written before it after a stray "}", is no
    # cut, so the later dict is the reply's last answer: "b".
    assert read_medhal("{'cop': 'a', 'why': 'Stop Here'}\n{'cop': 'b'}", ("cop",)).answer == "b"
    assert read_medhal("} Stop Here\n{'cop': 'a'}\n{'cop': 'b'}", ("cop",)).answer == "b"


def test_the_scan_of_json_strings_goes_on_to_a_later_answer_dict():
    # Each reply has a first dict whose strings hold a backslash, a quote or a brace, then
    # a second dict, the reply's last answer: "z}w". The first dict is closed where its JSON
    # ends, so the second is a span of its own.
    for first in (
        '{"why": "a\\\\", "cop": "x}y"}',  # an escaped backslash ends the string: a\
        '{"why": "a \\ b", "cop": "x}y"}',  # a lone backslash (Python style) escapes nothing
        '{"why": "C:\\X", "cop": "x}y"}',  # nor does a backslash before a letter
        '{"cop": "x}y", "why": "a \\"q\\" b"}',  # escaped quotes
    ):
        assert read_medhal(first + ' {"cop": "z}w"}', ("cop",)).answer == "z}w", first
        # Alone, each first dict is read whole: its own answer "x}y".
        assert read_medhal(first, ("cop",)).answer == "x}y", first


def test_a_lone_quote_before_the_dict_is_text():
    # Quotes outside any dict are prose: the odd quote in `He said "no.` does not hide the
    # dict that follows, read as JSON with its brace inside a string.
    assert read_medhal('He said "no. {"cop": "x}y"}', ("cop",)).answer == "x}y"


def test_a_dict_without_the_answer_key_is_read_with_a_brace_in_a_string():
    # The FCT dict holds no answer key but gives its verdict; a "}" inside its explanation is
    # text, so the dict is read as JSON: no answer, verdict "yes", method json.
    reading = read_medhal('{"is_answer_correct": "yes", "why": "a}b"}', FCT_KEYS)
    assert (reading.answer, reading.get(VERDICT), reading.method) == (None, "yes", "json")


def test_a_reply_ending_in_a_backslash_inside_a_string_is_read():
    # Cut off right after a backslash inside the value: the reading never fails; the JSON
    # string is unterminated, so the tolerant reading keeps what was written, "x\".
    assert read_medhal('{"cop": "x\\', ("cop",)).answer == "x\\"


def test_a_key_with_nothing_before_the_closing_brace_has_no_answer():
    # "{cop:}" states no answer: the closing brace right after the colon ends the value.
    assert read_medhal("{cop:}", ("cop",)).answer is None
    assert read_medhal("{cop: }", ("cop",)).answer is None


@pytest.mark.xfail(
    strict=True,
    reason="known misreading: a dict written inside a JSON string of the answer dict is found by "
    "the brace count (which ignores quotes) and read after the whole dict",
)
def test_a_dict_inside_a_json_string_value_is_part_of_the_value():
    assert read_medhal("{\"cop\": \"x} {'cop': 'q'}\"}", ("cop",)).answer == "x} {'cop': 'q'}"
