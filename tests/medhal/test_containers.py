"""`medhal.kit.containers`: answers in XML-like tags and in nested or function-call JSON.

Expected values written by hand. WHY: readers of every benchmark take these containers as
answers; a tag that holds another must give way to the inner one (`<answer><cop>X</cop>`),
an unclosed tag must hold nothing, and a function call's arguments written as a JSON
string must be read as a chat API writes them."""

from __future__ import annotations

import json

from medhal.kit.containers import inner_dicts, tag_name, tag_values

NAMES = frozenset({"answer", "cop", "final_answer"})


def test_tag_values_in_order_with_their_positions():
    text = "x <answer>Iron</answer> y <FINAL-ANSWER>Zinc</FINAL-ANSWER>"
    assert tag_values(text, NAMES) == [(2, 23, "Iron"), (26, 59, "Zinc")]
    assert tag_name("Final-Answer") == "final_answer" and tag_name("answer.v2") == "answer_v2"


def test_a_tag_holding_another_gives_way_to_it():
    text = "<answer>\n<cop>Iron</cop>\n<why>rich in heme</why>\n</answer>"
    assert [v for _, _, v in tag_values(text, NAMES)] == ["Iron"]


def test_unlisted_unclosed_and_attribute_tags():
    assert tag_values("<why>Iron</why>", NAMES) == []
    assert tag_values("<answer>Iron", NAMES) == []  # never closed: holds nothing
    assert tag_values('<answer type="final">Iron</answer>', NAMES)[0][2] == "Iron"
    assert [v for *_, v in tag_values("<answer>Iron</answer><answer>Zinc</answer>", NAMES)] == [
        "Iron",
        "Zinc",
    ]


def test_inner_dicts_of_a_function_call():
    call = {"name": "submit", "arguments": json.dumps({"cop": "Iron"})}
    assert list(inner_dicts(call)) == [{"cop": "Iron"}]
    nested = {"tool_calls": [{"function": {"name": "f", "arguments": {"cop": "Zinc"}}}]}
    assert {"cop": "Zinc"} in list(inner_dicts(nested))
    assert list(inner_dicts({"arguments": "{not json"})) == []
    assert list(inner_dicts({"note": '{"cop": "Iron"}'})) == []  # only arguments-like keys are parsed


def test_inner_dicts_stop_at_the_depth_bound():
    deep: dict = {"cop": "Iron"}
    for _ in range(10):
        deep = {"next": deep}
    assert {"cop": "Iron"} not in list(inner_dicts(deep, depth=6))
    assert {"cop": "Iron"} in list(inner_dicts(deep, depth=12))


def test_a_token_opening_a_prose_tag_is_no_answer_position():
    """Expected readings written first: the first word of `<explanation>` is the explanation's
    own word (prose rules decide), the first word of any other tag is where an answer stands."""
    from medhal.kit.positions import Places
    from medhal.kit.vocabulary import fold

    places = Places(labels=("answer",), leads=(), followers=(), token=r"\d")
    for text, token, held in [
        ("<explanation>Aortic stenosis is systolic.</explanation>", "Aortic stenosis", False),
        ("<reasoning type='x'>2 is ruled out by the murmur", "2", False),
        ("<Thinking>2 because of the murmur", "2", False),
        ("<answer>2 because of the murmur</answer>", "2", True),
        ("<judgement>2 because of the murmur", "2", True),
        ("\\boxed{2 because}", "2", True),
    ]:
        start = text.index(token)
        assert places.holds(text, fold(text), start, start + len(token)) is held, text
