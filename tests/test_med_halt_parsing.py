"""Med-HALT reply parsing: every path (JSON, Python literal, tolerant key-value, no
answer) on the malformed replies real models produce, and on real model outputs."""

from __future__ import annotations

import json

import pytest

from med_halt.parsing import JSON, KEY_VALUE, PYTHON, answer_text, brace_spans, find_field, key_values, parse_reply
from med_halt.sets import FCT_ANSWER_KEYS, SETS

COP = ("cop",)
URL = ("url",)


def test_strict_json_object():
    parsed = parse_reply('{"cop": "Vitamin C", "cop_index": 1}', COP)
    assert parsed.method == JSON
    assert parsed.fields == {"cop": "Vitamin C", "cop_index": 1}


def test_python_dict_as_the_shots_show_it():
    parsed = parse_reply("{'cop': 'Vitamin C', 'cop_index': 1, 'why_correct': \"scurvy's cause\"}", COP)
    assert parsed.method == PYTHON
    assert parsed.fields["cop"] == "Vitamin C"


def test_json_over_several_lines_in_a_code_fence_after_prose():
    reply = 'Here is my answer:\n```json\n{\n  "cop": "Pancreas",\n  "cop_index": 2\n}\n```\nHope this helps.'
    parsed = parse_reply(reply, COP)
    assert (parsed.method, parsed.fields["cop"]) == (JSON, "Pancreas")


def test_think_block_is_skipped_and_its_draft_dicts_ignored():
    reply = "<think>Maybe {'cop': 'Liver'}? No.</think>\n{'cop': 'Pancreas', 'cop_index': 2}"
    assert parse_reply(reply, COP).fields["cop"] == "Pancreas"


def test_reply_cut_off_while_thinking_has_no_answer():
    reply = "<think>The options are {'0': 'Liver', '1': 'Pancreas'} and I think the answer is"
    assert answer_text(reply) is None
    assert parse_reply(reply, COP).fields is None


def test_unescaped_apostrophes_in_single_quoted_values_fall_back_to_key_values():
    reply = "{'cop': 'Parkinson's disease', 'cop_index': 2, 'why_correct': 'it's the classic triad'}"
    parsed = parse_reply(reply, COP)
    assert parsed.method == KEY_VALUE
    assert parsed.fields["cop"] == "Parkinson's disease"
    assert parsed.fields["cop_index"] == "2"
    assert parsed.fields["why_correct"] == "it's the classic triad"


def test_first_answer_wins_over_invented_next_examples():
    reply = (
        "{'cop': 'Vitamin C', 'cop_index': 1}Stop Here\n\n"
        "Input: {'Question': 'Which vitamin is fat soluble?', 'Options': {'0': 'B1', '1': 'D'}}\n"
        "Output: {'cop': 'D', 'cop_index': 1}Stop Here"
    )
    assert parse_reply(reply, COP).fields["cop"] == "Vitamin C"


def test_dict_without_the_answer_key_is_skipped_for_a_later_one():
    reply = "Input echoed: {'Question': 'Q?', 'Options': {'0': 'A'}}\nOutput: {'cop': 'A', 'cop_index': 0}"
    assert parse_reply(reply, COP).fields == {"cop": "A", "cop_index": 0}


def test_truncated_reply_keeps_the_completed_fields():
    reply = "{'is_paper_exists': 'Yes', 'url': 'https://pubmed.ncbi.nlm.nih.gov/29596064', 'note': 'This paper discuss"
    parsed = parse_reply(reply, URL)
    assert parsed.method == KEY_VALUE
    assert parsed.fields["url"] == "https://pubmed.ncbi.nlm.nih.gov/29596064"
    assert parsed.fields["note"] == "This paper discuss"


def test_truncated_inside_the_answer_value_keeps_what_was_written():
    parsed = parse_reply('{"cop": "None of the ab', COP)
    assert parsed.fields["cop"] == "None of the ab"


def test_curly_quotes_are_read_as_quotes():
    parsed = parse_reply("{\u201ccop\u201d: \u201cI do not know\u201d, \u201ccop_index\u201d: 4}", COP)
    assert (parsed.method, parsed.fields["cop"]) == (KEY_VALUE, "I do not know")


def test_json_literals_true_null_trailing_comma():
    assert parse_reply('{"is_answer_correct": true, "answer": null, "correct answer": "X"}', FCT_ANSWER_KEYS).method == JSON
    assert parse_reply("{'cop': 'A', 'cop_index': 0,}", COP).method == PYTHON


def test_answer_without_braces_is_read_line_by_line():
    parsed = parse_reply("paper_title: Unknown\nis_paper_exists: Unknown", ("paper_title",))
    assert (parsed.method, parsed.fields["paper_title"]) == (KEY_VALUE, "Unknown")


@pytest.mark.parametrize("reply", ["", "   ", "I am not able to answer this question.", "Answer: B"])
def test_replies_with_nothing_dict_like(reply):
    assert parse_reply(reply, COP) == parse_reply(reply, COP).__class__(None, None)


def test_empty_or_foreign_dict_is_parsed_but_holds_no_answer():
    empty = parse_reply("{}", COP)
    assert (empty.fields, empty.method) == ({}, JSON)
    assert find_field(empty.fields, COP) is None
    other = parse_reply("{'answer': 'B'}", COP)
    assert other.fields == {"answer": "B"} and find_field(other.fields, COP) is None


def test_find_field_order_null_values_and_loose_keys():
    assert find_field({"answer": "a", "correct_answer": "b"}, FCT_ANSWER_KEYS) == ("correct_answer", "b")
    assert find_field({"correct_answer": None, "Answer": "c"}, FCT_ANSWER_KEYS) == ("Answer", "c")
    assert find_field({" COP ": "d"}, COP) == (" COP ", "d")
    assert find_field({"cop": None}, COP) is None


def test_brace_spans_nested_and_unclosed():
    assert brace_spans("a {'x': {'y': 1}} b {'z': 2") == ["{'x': {'y': 1}}", "{'z': 2"]


def test_key_values_does_not_split_inside_links_or_at_apostrophes():
    fields = key_values("{'url': 'https://ncbi.nlm.nih.gov/pubmed/1', 'why': 'the author's claim'}")
    assert fields == {"url": "https://ncbi.nlm.nih.gov/pubmed/1", "why": "the author's claim"}


def _outputs(shared_data, name):
    path = shared_data / "medhalt" / "samples" / f"{name}.deepseek-r1-7b.outputs.jsonl"
    return [json.loads(line)["output"] for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("name", list(SETS))
def test_real_outputs_read_back_identically_as_python_and_json(shared_data, name):
    """deepseek-r1-7b's answers to the sample rows, written back the two ways models write
    them, parse to the same fields (empty outputs stay empty: no answer)."""
    keys = SETS[name].answer_keys
    for output in _outputs(shared_data, name):
        as_python = parse_reply(f"<think>ok</think>\n{output!r}Stop Here", keys)
        as_json = parse_reply("```json\n" + json.dumps(output, indent=2) + "\n```", keys)
        assert as_python.fields == output and as_json.fields == output
        assert as_python.method in (PYTHON, JSON) and as_json.method == JSON  # "{}" is JSON too


def test_real_outputs_cover_answers_and_empty_replies(shared_data):
    outputs = [o for name in SETS for o in _outputs(shared_data, name)]
    assert len(outputs) == 7 * 16
    assert sum(1 for o in outputs if o == {}) >= 5
