"""Reading Med-HALT replies under the three conventions (`med_halt.replies`): every path of
the `medhal` reading (JSON, Python literal, tolerant key-value, label, no answer) on the
malformed replies real models produce, the `authors` reading (their regex on the raw
reply) and the `strict` one (exactly one dict literal), null answers, and real model
outputs. Expected values are written by hand; the authors' reading is also checked
against the restated oracle (`tests/med_halt/authors_oracle.py`)."""

from __future__ import annotations

import json

import pytest

from med_halt.replies import (
    CONVENTIONS,
    JSON,
    KEY_VALUE,
    LABEL,
    PYTHON,
    READERS,
    REGEX,
    Reading,
    brace_spans,
    find_field,
    key_values,
    read_all,
    read_authors,
    read_medhal,
    read_strict,
)
from medhal.kit.replies import answer_text
from tests.med_halt import authors_oracle as oracle

COP = ("cop",)
URL = ("url",)
TITLE = ("paper_title",)
FCT_KEYS = oracle.FCT_KEYS  # restated from eval_full.py lines 39-40, not imported from the package
SET_KEYS = {
    name: (oracle.FCT_KEYS if name == "reasoning_FCT" else (oracle.ANSWER_KEY[name],)) for name in oracle.SETS
}


def test_three_conventions_with_one_reader_each():
    assert CONVENTIONS == ("medhal", "authors", "strict")
    assert dict(READERS) == {"medhal": read_medhal, "authors": read_authors, "strict": read_strict}
    readings = read_all("{'cop': 'Liver'}", COP)
    assert {name: r.answer for name, r in readings.items()} == {
        "medhal": "Liver",
        "authors": "Liver",
        "strict": "Liver",
    }


def test_the_package_answer_keys_are_the_authors():
    from med_halt.benchmark import SETS

    assert {name: spec.answer_keys for name, spec in SETS.items()} == SET_KEYS


# ------------------------------------------------------------------------------ medhal


def test_strict_json_object():
    reading = read_medhal('{"cop": "Vitamin C", "cop_index": 1}', COP)
    assert reading == Reading({"cop": "Vitamin C", "cop_index": 1}, "cop", "Vitamin C", JSON)


def test_python_dict_as_the_shots_show_it():
    reading = read_medhal("{'cop': 'Vitamin C', 'cop_index': 1, 'why_correct': \"scurvy's cause\"}", COP)
    assert (reading.method, reading.answer) == (PYTHON, "Vitamin C")
    assert reading.fields["why_correct"] == "scurvy's cause"


def test_json_over_several_lines_in_a_code_fence_after_prose():
    reply = 'Here is my answer:\n```json\n{\n  "cop": "Pancreas",\n  "cop_index": 2\n}\n```\nHope this helps.'
    reading = read_medhal(reply, COP)
    assert (reading.method, reading.answer, reading.fields) == (
        JSON,
        "Pancreas",
        {"cop": "Pancreas", "cop_index": 2},
    )


def test_think_block_is_skipped_and_its_draft_dicts_ignored():
    reply = "<think>Maybe {'cop': 'Liver'}? No.</think>\n{'cop': 'Pancreas', 'cop_index': 2}"
    assert read_medhal(reply, COP).answer == "Pancreas"


@pytest.mark.parametrize("tag", ["thinking", "reasoning", "THINK"])
def test_every_reasoning_tag_is_removed(tag):
    reply = f"<{tag}>{{'cop': 'Liver'}}</{tag}>{{'cop': 'Pancreas'}}"
    assert read_medhal(reply, COP).answer == "Pancreas"


def test_closing_tag_without_an_opening_one_ends_the_reasoning():
    assert (
        read_medhal("the template opened it {'cop': 'Liver'}</think>{'cop': 'Pancreas'}", COP).answer
        == "Pancreas"
    )


def test_reply_cut_off_while_thinking_has_no_answer():
    reply = "<think>The options are {'0': 'Liver', '1': 'Pancreas'} and I think the answer is"
    assert answer_text(reply) is None
    assert read_medhal(reply, COP) == Reading()
    assert (
        read_medhal("{'cop': 'Liver'}\n<think>second thoughts", COP) == Reading()
    )  # opened after the last close


def test_unescaped_apostrophes_in_single_quoted_values_fall_back_to_key_values():
    reply = "{'cop': 'Parkinson's disease', 'cop_index': 2, 'why_correct': 'it's the classic triad'}"
    reading = read_medhal(reply, COP)
    assert reading.method == KEY_VALUE
    assert reading.fields == {
        "cop": "Parkinson's disease",
        "cop_index": "2",
        "why_correct": "it's the classic triad",
    }
    assert reading.answer == "Parkinson's disease"


def test_first_answer_wins_over_invented_next_examples():
    reply = (
        "{'cop': 'Vitamin C', 'cop_index': 1}Stop Here\n\n"
        "Input: {'Question': 'Which vitamin is fat soluble?', 'Options': {'0': 'B1', '1': 'D'}}\n"
        "Output: {'cop': 'D', 'cop_index': 1}Stop Here"
    )
    assert read_medhal(reply, COP).answer == "Vitamin C"


def test_dict_without_the_answer_key_is_skipped_for_a_later_one():
    reply = "Input echoed: {'Question': 'Q?', 'Options': {'0': 'A'}}\nOutput: {'cop': 'A', 'cop_index': 0}"
    reading = read_medhal(reply, COP)
    assert (reading.fields, reading.key, reading.answer) == ({"cop": "A", "cop_index": 0}, "cop", "A")


def test_truncated_reply_keeps_the_completed_fields():
    reply = (
        "{'is_paper_exists': 'Yes', 'url': 'https://pubmed.ncbi.nlm.nih.gov/29596064', "
        "'note': 'This paper discuss"
    )
    reading = read_medhal(reply, URL)
    assert reading.method == KEY_VALUE
    assert reading.answer == "https://pubmed.ncbi.nlm.nih.gov/29596064"
    assert reading.fields["note"] == "This paper discuss"


def test_truncated_inside_the_answer_value_keeps_what_was_written():
    assert read_medhal('{"cop": "None of the ab', COP).answer == "None of the ab"


def test_curly_quotes_are_read_as_quotes():
    reading = read_medhal("{\u201ccop\u201d: \u201cI do not know\u201d, \u201ccop_index\u201d: 4}", COP)
    assert (reading.method, reading.answer) == (KEY_VALUE, "I do not know")


def test_json_literals_and_trailing_commas():
    reading = read_medhal('{"is_answer_correct": true, "answer": "B", "correct answer": "X"}', FCT_KEYS)
    assert (reading.method, reading.key, reading.answer) == (JSON, "answer", "B")  # authors' key order
    assert reading.fields["is_answer_correct"] is True
    assert read_medhal("{'cop': 'A', 'cop_index': 0,}", COP).method == PYTHON


def test_answer_without_braces_is_read_line_by_line():
    reading = read_medhal("paper_title: Unknown\nis_paper_exists: Unknown", TITLE)
    assert (reading.method, reading.answer) == (KEY_VALUE, "Unknown")


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("Answer: B", "B"),
        ("After some thought.\nFinal answer: **Pancreas**.", "Pancreas"),
        ("Answer: Liver\nFinal answer: Pancreas", "Pancreas"),  # the last label
        ("The value is \\boxed{Liver}.", "Liver"),
        ("\\boxed{\\text{None of the above}}", "None of the above"),
    ],
)
def test_labelled_or_boxed_answer_without_a_dict(reply, answer):
    reading = read_medhal(reply, COP)
    assert (reading.key, reading.answer, reading.method) == ("cop", answer, LABEL)


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "   ",
        "I am not able to answer this question.",
        "The answer is B.",
        "Answer: null",
        "Answer: None",
        None,
    ],
)
def test_replies_with_nothing_to_read(reply):
    assert read_medhal(reply, COP) == Reading()


def test_empty_or_foreign_dict_is_read_but_holds_no_answer():
    assert read_medhal("{}", COP) == Reading({}, None, None, JSON)
    other = read_medhal("{'answer': 'B'}", COP)
    assert (other.fields, other.key, other.answer) == ({"answer": "B"}, None, None)


def test_answer_key_is_found_ignoring_case_and_spaces():
    reading = read_medhal("{'Cop ': 'Liver'}", COP)
    assert (reading.key, reading.answer) == ("Cop ", "Liver")
    assert read_medhal('{"Paper_Title": "A title"}', TITLE).answer == "A title"


def test_number_values_are_read_as_text():
    assert read_medhal("{'cop': 2}", COP).answer == "2"


def test_the_literal_option_text_none_is_an_answer():
    """An option can be called "None": quoted, it is text, not a null."""
    for reply in ("{'cop': 'None'}", '{"cop": "None"}'):
        assert (
            read_medhal(reply, COP).answer,
            read_strict(reply, COP).answer,
            read_authors(reply, COP).answer,
        ) == ("None",) * 3


def test_find_field_order_null_values_and_loose_keys():
    assert find_field({"answer": "a", "correct_answer": "b"}, FCT_KEYS) == ("correct_answer", "b")
    assert find_field({"correct_answer": None, "Answer": "c"}, FCT_KEYS) == ("Answer", "c")
    assert find_field({" COP ": "d"}, COP) == (" COP ", "d")
    assert find_field({"cop": None}, COP) is None
    assert find_field({"cop": ""}, COP) is None and find_field({"cop": ["a"]}, COP) is None
    assert find_field(None, COP) is None and find_field({}, COP) is None


def test_reading_get_uses_the_same_key_rules():
    reading = Reading({"Is_Paper_Exists ": "No", "url": None}, None, None, JSON)
    assert reading.get(("is_paper_exists",)) == "No"
    assert reading.get(URL) is None


def test_brace_spans_nested_and_unclosed():
    assert brace_spans("a {'x': {'y': 1}} b {'z': 2") == ["{'x': {'y': 1}}", "{'z': 2"]
    assert brace_spans("no braces } here") == []


def test_brace_inside_a_quoted_value_is_part_of_the_value():
    assert brace_spans("{'cop': 'a}b'} rest") == ["{'cop': 'a}b'}"]
    assert read_medhal('{"cop": "a}b"}', COP).answer == "a}b"
    assert (
        read_medhal("{'cop': 'Pancreas', 'why_correct': 'see \\\\frac{1}{2} } here'}", COP).fields[
            "why_correct"
        ]
        == "see \\frac{1}{2} } here"
    )


def test_code_fence_marks_inside_a_value_are_kept():
    assert read_medhal('{"cop": "write ```x``` here"}', COP).answer == "write ```x``` here"


def test_key_values_does_not_split_inside_links_or_at_apostrophes():
    fields = key_values("{'url': 'https://ncbi.nlm.nih.gov/pubmed/1', 'why': 'the author's claim'}")
    assert fields == {"url": "https://ncbi.nlm.nih.gov/pubmed/1", "why": "the author's claim"}


def test_key_values_reads_unquoted_nulls_as_missing_and_keeps_the_first_key():
    assert key_values("{'cop': None, 'why': 'it's'}") == {"cop": None, "why": "it's"}
    assert key_values("{'cop': null, 'cop': 'later'}") == {"cop": None}


# ---------------------------------------------------------------------- null answers
# Issue 9 item 3: a null / None / empty answer is a format error under medhal and strict
# (never read as the text "null" by a later, looser pass); the authors' regex reads text.


@pytest.mark.parametrize(
    ("reply", "authors"),
    [
        ('{"cop": null, "cop_index": null}', "null"),
        ("{'cop': None}", "None"),
        ("{'cop': None, 'cop_index': 2}", "None"),
        ('```json\n{"cop": null}\n```', "null"),
        ("<think>a</think>{'cop': None}Stop Here", "None"),
        ("{'cop': ''}", ""),
        ('{"cop": "  "}', "  "),
    ],
)
def test_null_or_empty_answer_is_a_format_error_except_for_the_authors(reply, authors):
    assert read_medhal(reply, COP).answer is None
    assert read_strict(reply, COP).answer is None
    assert read_authors(reply, COP).answer == authors
    assert oracle.authors_answer("reasoning_nota", reply) == authors


def test_a_null_answer_is_not_replaced_by_a_later_pass():
    """A dict holding the key with None: the key-value pass (which would see the text
    "None") does not turn it into an answer, nor does an invented example after it. A
    later dict of the model's own answer corrects it (the lead's decision on corpus case
    mt-085: an echoed template or an empty first try comes first); a null after the
    answer leaves none (its last word names nothing)."""
    assert (
        read_medhal("{'cop': None}Stop Here\nInput: {'Question': 'q'}\nOutput: {'cop': 'Liver'}", COP).answer
        is None
    )
    assert read_medhal("{'cop': None}\n{'cop': 'Liver'}", COP).answer == "Liver"
    assert read_medhal("{'cop': 'Liver'}\n{'cop': None}", COP).answer is None
    unparseable = read_medhal("{'cop': None, 'why': 'it's unclear'}", COP)  # key-value pass only
    assert (unparseable.method, unparseable.answer) == (KEY_VALUE, None)
    assert read_medhal('{"cop": null', COP).answer is None  # cut off after the null
    assert read_authors("{'cop': None}\n{'cop': 'Liver'}", COP).answer == "Liver"  # later keys win


def test_null_under_one_fct_key_and_an_answer_under_another():
    """FCT accepts several keys; a null under one of them leaves the others readable
    (find_field takes the first key present with a usable value)."""
    reply = '{"is_answer_correct": true, "answer": null, "correct answer": "X"}'
    assert read_medhal(reply, FCT_KEYS).answer == "X"
    assert read_strict(reply, FCT_KEYS).answer == "X"
    assert read_authors(reply, FCT_KEYS).answer == "null"  # the authors take the first key present: 'answer'


# ----------------------------------------------------------------------------- authors


@pytest.mark.parametrize(
    ("reply", "keys", "answer", "fields"),
    [
        # The raw reply, think block included: the draft inside it is read too, and a later
        # duplicate key wins (evaluate.py lines 33-35).
        (
            "<think>Maybe {'cop': 'Liver'}? No.</think>\n{'cop': 'Pancreas'}",
            COP,
            "Pancreas",
            {"cop": "Pancreas"},
        ),
        (
            "{'cop': 'Vitamin C'}Stop Here\nInput: {'Question': 'q'}\nOutput: {'cop': 'D'}Stop Here",
            COP,
            "D",
            None,
        ),
        # A value ends at the first comma or closing brace.
        ("{'cop': 'Vitamin C, D', 'cop_index': 1}", COP, "Vitamin C", None),
        ('{"paper_title": "A trial: first, second"}', TITLE, "A trial: first", None),
        # Keys and values never span a line; \s* does.
        (
            '{\n  "cop": "Pancreas",\n  "cop_index": 2\n}',
            COP,
            "Pancreas",
            {"cop": "Pancreas", "cop_index": "2"},
        ),
        ("{'cop': 'line one\nline two'}", COP, None, {}),
        # Every value is text.
        ("{'cop': 2}", COP, "2", {"cop": "2"}),
        (
            '{"is_answer_correct": true, "answer": "B"}',
            FCT_KEYS,
            "B",
            {"is_answer_correct": "true", "answer": "B"},
        ),
        # Backslashes leave keys, not values.
        ('{\\"cop\\": \\"X\\"}', COP, '\\"X\\', {"cop": '\\"X\\'}),
        # The key is matched exactly: no case folding.
        ("{'Cop': 'Liver'}", COP, None, {"Cop": "Liver"}),
        # FCT: the first of the authors' keys present wins, whatever the dict order.
        ("{'Answer': 'b', 'correct_answer': 'a'}", FCT_KEYS, "a", None),
        # A reply cut off while thinking is read all the same.
        ("<think>so {'cop': 'Liver', 'x': 1} maybe", COP, "Liver", None),
        ("Answer: Liver", COP, None, {}),
        ("", COP, None, {}),
        (None, COP, None, {}),
    ],
)
def test_authors_reading_of_the_raw_reply(reply, keys, answer, fields):
    reading = read_authors(reply, keys)
    assert reading.answer == answer
    assert (reading.key is None) == (answer is None)
    if fields is not None:
        assert reading.fields == fields
    if reading.fields:
        assert reading.method == REGEX
    set_name = (
        "reasoning_FCT"
        if keys == FCT_KEYS
        else {"cop": "reasoning_nota", "url": "IR_title2pubmedlink", "paper_title": "IR_pmid2title"}[keys[0]]
    )
    assert oracle.authors_answer(set_name, reply or "") == answer


def test_authors_reading_is_bounded_and_keeps_an_answer_written_first():
    """The regex is read on at most AUTHORS_READ_LIMIT characters (a bound the authors'
    code does not have): a runaway reply that starts with its answer still reads it."""
    from med_halt.replies import AUTHORS_READ_LIMIT

    reply = "{'cop': 'Liver'}" + " filler" * 20_000
    assert len(reply) > AUTHORS_READ_LIMIT
    assert read_authors(reply, COP).answer == "Liver"


# ------------------------------------------------------------------------------ strict


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ('{"cop": "Liver", "cop_index": 0}', "Liver"),
        ("{'cop': 'Liver', 'cop_index': 0}", "Liver"),
        ("  {'cop': 'Liver'}  \n", "Liver"),
        ("{'cop': 'Liver'}Stop Here", "Liver"),
        ("{'cop': 'Liver'}\nStop Here\n", "Liver"),
        ("<think>weighing {'cop': 'Spleen'}</think>\n{'cop': 'Liver'}", "Liver"),
        ("  <THINK>x</THINK>{'cop': 'Liver'}Stop Here", "Liver"),
        ("{'cop': 2}", "2"),
        ("{'cop': ' Liver '}", "Liver"),
        # What the medhal reading tolerates and strict does not:
        ("Answer: {'cop': 'Liver'}", None),
        ('```json\n{"cop": "Liver"}\n```', None),
        ("{'cop': 'Liver'}\nThe liver is the answer.", None),
        ("{'cop': 'Liver'} Stop Here Stop Here", None),
        ("{'cop': 'Liver'}{'cop': 'Spleen'}", None),
        ("<think>a</think><think>b</think>{'cop': 'Liver'}", None),
        ("{'cop': 'Liver'}<think>b</think>", None),
        ("<think>never closed {'cop': 'Liver'}", None),
        ("{'Cop': 'Liver'}", None),
        ("{'cop': 'Parkinson's disease'}", None),
        ("{'cop': True}", None),
        ("{'cop': ['Liver']}", None),
        ("{'cop': None}", None),
        ("Answer: Liver", None),
        ("", None),
        (None, None),
    ],
)
def test_strict_reading(reply, answer):
    reading = read_strict(reply, COP)
    assert reading.answer == answer
    assert (reading.key == "cop") == (answer is not None)


def test_strict_takes_the_first_fct_key_spelled_exactly():
    assert (
        read_strict("{'is_answer_correct': 'no', 'Correct answer': 'b', 'answer': 'a'}", FCT_KEYS).answer
        == "a"
    )
    assert read_strict("{'is_answer_correct': 'no', 'correct_Answer': 'a'}", FCT_KEYS).answer is None


# ---------------------------------------------------------------------- real outputs


def _outputs(shared_data, name):
    path = shared_data / "medhalt" / "samples" / f"{name}.deepseek-r1-7b.outputs.jsonl"
    return [json.loads(line)["output"] for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("name", oracle.SETS)
def test_real_outputs_read_back_identically_as_python_and_json(shared_data, name):
    """deepseek-r1-7b's answers to the sample rows, written back the two ways models write
    them, read to the same fields under medhal (empty outputs stay empty: no answer);
    strict reads the Python form wherever the answer key is spelled as asked; the
    authors' reading of both forms is the oracle's."""
    keys = SET_KEYS[name]
    for output in _outputs(shared_data, name):
        as_python = f"<think>ok</think>\n{output!r}Stop Here"
        as_json = "```json\n" + json.dumps(output, indent=2) + "\n```"
        medhal_python, medhal_json = read_medhal(as_python, keys), read_medhal(as_json, keys)
        assert medhal_python.fields == output and medhal_json.fields == output
        assert medhal_python.method == (JSON if output == {} else PYTHON) and medhal_json.method == JSON
        exact = next((output[k] for k in keys if k in output and str(output[k]).strip()), None)
        assert medhal_python.answer == medhal_json.answer == (exact.strip() if exact is not None else None)
        assert read_strict(as_python, keys).answer == medhal_python.answer
        assert read_strict(as_json, keys).answer is None  # a code fence is not the format asked for
        assert read_authors(as_python, keys).answer == oracle.authors_answer(name, as_python)
        assert read_authors(as_json, keys).answer == oracle.authors_answer(name, as_json)


def test_real_outputs_cover_answers_and_empty_replies(shared_data):
    outputs = [o for name in oracle.SETS for o in _outputs(shared_data, name)]
    assert len(outputs) == 7 * 16
    assert sum(1 for o in outputs if o == {}) == 10  # FCT 6, NOTA 1, pubmedlink2title 3


# ================================================================== edge cases, one by one
# Replies are hand-made; every expected reading is worked out in the comments, not computed with
# the code under test.


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
    # cut, so the later dict is read too: two different answers, none (issue 31: several
    # answer dicts must agree); the same answer twice, that answer.
    assert read_medhal("{'cop': 'a', 'why': 'Stop Here'}\n{'cop': 'b'}", ("cop",)).answer is None
    assert read_medhal("} Stop Here\n{'cop': 'a'}\n{'cop': 'b'}", ("cop",)).answer is None
    assert read_medhal("{'cop': 'a', 'why': 'Stop Here'}\n{'cop': 'a'}", ("cop",)).answer == "a"
    assert read_medhal("{'cop': 'a'}\nStop Here\nInput: {'cop': 'b'}", ("cop",)).answer == "a"


def test_the_scan_of_json_strings_goes_on_to_a_later_answer_dict():
    # Each reply has a first dict whose strings hold a backslash, a quote or a brace, then
    # a second dict naming another answer ("z}w"): two answers, none (issue 31). The first
    # dict is closed where its JSON ends, so the second is a span of its own; when it names
    # the same answer, that answer.
    for first in (
        '{"why": "a\\\\", "cop": "x}y"}',  # an escaped backslash ends the string: a\
        '{"why": "a \\ b", "cop": "x}y"}',  # a lone backslash (Python style) escapes nothing
        '{"why": "C:\\X", "cop": "x}y"}',  # nor does a backslash before a letter
        '{"cop": "x}y", "why": "a \\"q\\" b"}',  # escaped quotes
    ):
        assert read_medhal(first + ' {"cop": "z}w"}', ("cop",)).answer is None, first
        assert read_medhal(first + ' {"cop": "x}y"}', ("cop",)).answer == "x}y", first
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


def test_a_dict_inside_a_json_string_value_is_part_of_the_value():
    assert read_medhal("{\"cop\": \"x} {'cop': 'q'}\"}", ("cop",)).answer == "x} {'cop': 'q'}"
