"""Property-based tests (hypothesis) of Med-HALT's readers and cell parsers.

Three kinds of property:
- arbitrary text never makes a reader, the scorer or a cell parser raise (other than the
  parser's own, documented error, whose message names where);
- round trips that can fail: a dict written in any of the styles models use (JSON, a
  Python literal, single quotes with unescaped apostrophes; quotes, commas, newlines and
  backslashes inside values; in a code fence, after a think block, followed by "Stop
  Here" and invented examples) is read back equal under `medhal`;
- `authors_key_values`, the linear re-implementation of the authors' regex, equals
  `re.findall` of that regex (restated in the oracle) on short strings dense in the
  characters the regex turns on.

Example counts are fixed, examples are derandomized and there is no deadline: bounded,
the same on every machine, never timing-sensitive.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from med_halt.benchmark import SETS
from med_halt.replies import (
    READERS,
    authors_key_values,
    brace_spans,
    find_field,
    key_values,
    read_authors,
    read_medhal,
    read_strict,
)
from med_halt.rows import parse_options, pubmed_id
from med_halt.scoring import rules, score
from medhal.kit.datasets import DatasetError
from tests.med_halt import authors_oracle as oracle
from tests.properties import examples

PROPERTY = settings(
    max_examples=examples(300),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
MANY = settings(PROPERTY, max_examples=examples(2000))

SET_NAMES = list(oracle.SETS)
KEYS = {
    name: (oracle.FCT_KEYS if name == "reasoning_FCT" else (oracle.ANSWER_KEY[name],)) for name in SET_NAMES
}
METHODS = {None, "json", "python", "key-value", "label", "authors-regex"}

# Text that looks like model output: prose, tags, braces, quotes, digits, unicode.
TOKENS = [
    "<think>",
    "</think>",
    "<THINK>",
    "</reasoning>",
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "'",
    '"',
    "\u201c",
    "\u201d",
    "\u2019",
    "```",
    "```json",
    "\n",
    " ",
    "0",
    "1",
    "2",
    "cop",
    "'cop'",
    '"cop"',
    "url",
    "paper_title",
    "correct_answer",
    "'answer'",
    "is_answer_correct",
    "Answer:",
    "Final answer:",
    "\\boxed{",
    "None",
    "null",
    "true",
    "Stop Here",
    "Input:",
    "Output:",
    "**",
    "\\",
    "\x00",
    "é",
    "字",
    "\u2028",
    "\xa0",
]
model_text = st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=8)), max_size=40).map("".join),
)

# Short strings dense in what the authors' regex turns on: quotes, colons, commas,
# braces, backslashes, newlines and every kind of Unicode whitespace.
DENSE = [
    "'",
    '"',
    ":",
    ",",
    "}",
    "{",
    "\\",
    "\n",
    "\r",
    " ",
    "\t",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x1f",
    "\x85",
    "\xa0",
    "\u1680",
    "\u2000",
    "\u2028",
    "\u2029",
    "\u202f",
    "\u3000",
    "a",
    "b",
    "é",
]
dense_text = st.one_of(
    st.text(alphabet=st.sampled_from(DENSE), max_size=40),
    st.lists(
        st.sampled_from([*DENSE, "'k'", '"v"', "': '", '", "', "'}", ":'", "\\'", "''"]), max_size=20
    ).map("".join),
    st.text(max_size=30),
)


# ----------------------------------------------------------------------- never raises


@PROPERTY
@given(model_text, st.sampled_from(SET_NAMES))
def test_readers_never_raise_and_readings_are_consistent(text, name):
    keys = KEYS[name]
    for reader in READERS.values():
        reading = reader(text, keys)
        assert (reading.answer is None) is (reading.key is None)
        assert reading.answer is None or (isinstance(reading.answer, str) and reading.key in reading.fields)
        assert isinstance(reading.fields, dict) and reading.method in METHODS
    brace_spans(text)
    key_values(text)
    authors_key_values(text)
    find_field(read_medhal(text, keys).fields, keys)


@PROPERTY
@given(model_text, st.sampled_from(SET_NAMES), st.sampled_from(["medhal", "authors", "strict"]), st.data())
def test_scoring_arbitrary_text_never_raises(text, name, parser, data):
    item = Item(
        name,
        data.draw(st.sampled_from(["Vitamin C", "Unknown", "https://pubmed.ncbi.nlm.nih.gov/123", "None"])),
        data.draw(st.sampled_from(rules(name))),
        parser,
    )
    scored = score(item, text)
    assert all(v in (0.0, 1.0) for v in scored.metrics.values())
    for convention in ("medhal", "authors", "strict"):
        assert scored.metrics[f"correct_{convention}"] <= scored.metrics[f"parsed_{convention}"]
    assert scored.metrics["correct"] == scored.metrics[f"correct_{parser}"]
    assert set(scored.info["readings"]) == {"medhal", "authors", "strict"}


@dataclass(frozen=True)
class Item:
    test_set: str
    gold: str
    rule: str
    parser: str
    verdict_gold: str = "yes"
    proposed_answer: str = ""
    decline_options: tuple[str, ...] = ("I do not know",)
    paper_exists: bool | None = None
    choices: dict[str, str] = field(default_factory=dict)


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # ast.literal_eval's own, on number-like junk
@PROPERTY
@given(model_text)
def test_options_cell_raises_only_dataset_error(text):
    try:
        options = parse_options(text, "f.csv: row 1")
    except DatasetError as e:
        assert "f.csv: row 1" in str(e) and "options" in str(e)
    else:
        assert isinstance(options, dict) and options and all(isinstance(k, str) for k in options)


@PROPERTY
@given(model_text)
def test_pubmed_id_arbitrary_text(text):
    value = pubmed_id(text)
    assert value is None or value.isdigit()


@PROPERTY
@given(
    st.integers(1, 10**9),
    st.sampled_from(
        [
            "https://pubmed.ncbi.nlm.nih.gov/{}",
            "https://pubmed.ncbi.nlm.nih.gov/{}/",
            "pubmed.ncbi.nlm.nih.gov/{}",
            "https://www.ncbi.nlm.nih.gov/pubmed/{}",
            "http://ncbi.nlm.nih.gov/pubmed/{}",
        ]
    ),
)
def test_pubmed_link_forms(pmid, form):
    assert pubmed_id(form.format(pmid)) == str(pmid)


# ------------------------------------------------- the authors' regex, re-implemented


def test_the_oracle_regex_is_the_authors_verbatim():
    """evaluate.py line 29 @ 3dfe1e4, character for character, without flags."""
    assert oracle.KEY_VALUE.pattern == r"""['"](.*?)['"]\s*:\s*['"]*(.*?)['"]*\s*[,}]"""
    assert oracle.KEY_VALUE.flags == re.UNICODE


@MANY
@given(dense_text)
def test_authors_key_values_is_the_authors_regex(text):
    assert authors_key_values(text) == oracle.KEY_VALUE.findall(text)


@PROPERTY
@given(dense_text, st.sampled_from(SET_NAMES))
def test_authors_reading_is_the_oracle(text, name):
    assert read_authors(text, KEYS[name]).answer == oracle.authors_answer(name, text)


@PROPERTY
@given(st.lists(dense_text, min_size=2, max_size=4).map("".join))
def test_authors_key_values_on_longer_joined_strings(text):
    assert authors_key_values(text) == oracle.KEY_VALUE.findall(text)


# ------------------------------------------------------------------------ round trips

_TAG = re.compile(r"<\s*/?\s*(?:think|thinking|reasoning)\s*>", re.IGNORECASE)


def _plain_value(text: str, fences: bool = False) -> bool:
    """A value the medhal reading is meant to return unchanged: no reasoning tag (a tag is
    read as the end of a reasoning block wherever it is, by design) and no code-fence mark
    (the round trip with fence marks inside values is its own test below)."""
    return not _TAG.search(text) and (fences or "```" not in text)


VALUE_BITS = [
    "'",
    '"',
    ",",
    "\n",
    ":",
    "\\",
    "\t",
    " ",
    "\xa0",
    "\u2028",
    "é",
    "字",
    "[",
    "]",
    "<",
    ">",
    "`",
    "Stop Here",
    "null",
]
BRACES = ["{", "}", "{'cop': 'x'}", "\\frac{1}{2}"]


def values(extra: list[str] = (), fences: bool = False) -> st.SearchStrategy[str]:
    bit = st.one_of(
        st.sampled_from(VALUE_BITS + list(extra)),
        st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="{}"), max_size=5),
    )
    return st.lists(bit, max_size=12).map("".join).filter(lambda v: _plain_value(v, fences))


def answer_values(extra: list[str] = (), fences: bool = False) -> st.SearchStrategy[str]:
    return values(extra, fences).filter(lambda v: v.strip() != "")


prose = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="{}`"), max_size=40).filter(
    _plain_value
)
EXTRA_KEYS = ("cop_index", "why_correct", "is_paper_exists", "is_answer_correct", "note")
STYLES = ["json", "json-indented", "python", "fenced", "think", "stop-here"]


def written(answer: dict, style: str, before: str, after: str, key: str) -> str:
    """`answer` as a model writes it in `style`, with prose around where the style allows."""
    if style == "json":
        body = json.dumps(answer, ensure_ascii=False)
    elif style == "json-indented":
        body = json.dumps(answer, indent=2)
    elif style == "python":
        body = repr(answer)
    elif style == "fenced":
        body = "```json\n" + json.dumps(answer, indent=2, ensure_ascii=False) + "\n```"
    elif style == "think":
        return f"<think>{before} draft {{'{key}': 'not this'}}</think>\n{body_python(answer)}{after}"
    else:
        invented = f"Input: {{'Question': 'q'}}\nOutput: {{'{key}': 'an invented one'}}Stop Here"
        return f"{before}{body_python(answer)}Stop Here\n{invented}"
    return f"{before}{body}{after}"


def body_python(answer: dict) -> str:
    return repr(answer)


@st.composite
def answer_dicts(draw, value_strategy, answer_strategy):
    name = draw(st.sampled_from(SET_NAMES))
    key = draw(st.sampled_from(KEYS[name]))
    extras = draw(st.lists(st.sampled_from(EXTRA_KEYS), unique=True, max_size=3))
    answer = {key: draw(answer_strategy)}
    for extra in extras:
        answer[extra] = draw(st.one_of(value_strategy, st.integers(-5, 5)))
    order = draw(st.permutations(list(answer)))
    return name, key, {k: answer[k] for k in order}


@PROPERTY
@given(answer_dicts(values(), answer_values()), st.sampled_from(STYLES), prose, prose)
def test_a_dict_in_any_style_is_read_back_equal(case, style, before, after):
    name, key, answer = case
    reply = written(answer, style, before, after, key)
    reading = read_medhal(reply, KEYS[name])
    assert reading.fields == answer, reply
    assert (reading.key, reading.answer) == (key, answer[key].strip()), reply


@PROPERTY
@given(answer_dicts(values(BRACES), answer_values(BRACES)), st.sampled_from(STYLES), prose, prose)
def test_a_dict_with_braces_inside_values_is_read_back_equal(case, style, before, after):
    name, key, answer = case
    reading = read_medhal(written(answer, style, before, after, key), KEYS[name])
    assert reading.fields == answer and reading.answer == answer[key].strip()


@PROPERTY
@given(
    answer_dicts(values(["```", "```json"], fences=True), answer_values(["```"], fences=True)),
    st.sampled_from(STYLES[:3]),
)
def test_a_dict_with_fence_marks_inside_values_is_read_back_equal(case, style):
    name, key, answer = case
    reading = read_medhal(written(answer, style, "", "", key), KEYS[name])
    assert reading.fields == answer


# Single-quoted values with apostrophes left unescaped ('Parkinson's disease'), as models
# print them: not a Python literal, read by the tolerant key-value pass. Words may hold an
# apostrophe between letters; between words: spaces, commas, newlines, double quotes,
# brackets, dashes. (Not generated, because they make the text ambiguous to any reader:
# `, 'x':` inside a value, which looks like the next key; a backslash or two apostrophes
# in a row, which make a different valid Python literal; braces, which the tolerant pass
# cuts by counting; curly quotes, which the tolerant pass reads as straight quotes.)
word = st.builds(
    lambda head, tail: head + ("'" + tail if tail else ""),
    st.text(st.sampled_from("abcxyzXYZéß字0123456789"), min_size=1, max_size=6),
    st.one_of(st.just(""), st.text(st.sampled_from("stdlre"), min_size=1, max_size=3)),
)
separator = st.sampled_from([" ", ", ", "\n", ' "', '" ', " - ", ". ", " [", "] ", "\xa0", " (", ") ", "; "])
loose_value = st.builds(
    lambda first, rest: first + "".join(s + w for s, w in rest),
    word,
    st.lists(st.tuples(separator, word), max_size=5),
)


@PROPERTY
@given(st.sampled_from(SET_NAMES), st.data(), st.booleans(), st.booleans())
def test_a_dict_with_unescaped_apostrophes_is_read_back_equal(name, data, think, stop_here):
    key = data.draw(st.sampled_from(KEYS[name]))
    extras = data.draw(st.lists(st.sampled_from(EXTRA_KEYS), unique=True, max_size=3))
    answer = {k: data.draw(loose_value) for k in [key, *extras]}
    body = "{" + ", ".join(f"'{k}': '{v}'" for k, v in answer.items()) + "}"
    reply = (
        ("<think>first {'a': 'b'}</think>\n" if think else "")
        + body
        + ("Stop Here\nInput: {'Question': 'q'}" if stop_here else "")
    )
    reading = read_medhal(reply, KEYS[name])
    assert reading.fields == answer, reply
    assert reading.answer == answer[key].strip()


@PROPERTY
@given(
    answer_dicts(values(BRACES), answer_values(BRACES)),
    st.sampled_from(["json", "python"]),
    st.booleans(),
    st.booleans(),
)
def test_strict_reads_one_dict_literal_back_equal(case, style, think, stop_here):
    """Strict reads the whole reply as one literal, so braces inside values are fine."""
    name, key, answer = case
    body = json.dumps(answer) if style == "json" else repr(answer)
    reply = ("<think>draft</think>\n" if think else "") + body + ("\nStop Here" if stop_here else "")
    reading = read_strict(reply, KEYS[name])
    expected = str(answer[key]).strip()
    first = next(k for k in KEYS[name] if k in answer)
    assert reading.fields == answer and (reading.key, reading.answer) == (first, expected)


simple_value = st.text(
    st.characters(blacklist_categories=("Cs", "Zl", "Zp", "Cc"), blacklist_characters="'\",}{\\\x85"),
    min_size=1,
    max_size=30,
).filter(str.isprintable)  # repr escapes what is not printable


@PROPERTY
@given(st.sampled_from(SET_NAMES), simple_value, st.sampled_from(["json", "python"]), prose)
def test_authors_read_a_simple_value_exactly(name, value, style, after):
    """A value without quotes, commas, braces, backslashes or line breaks is read by the
    authors' regex exactly as written (spaces included)."""
    key = KEYS[name][0]
    body = json.dumps({key: value}, ensure_ascii=False) if style == "json" else repr({key: value})
    assert read_authors(body + after.replace("'", "").replace('"', ""), KEYS[name]).answer == value


@PROPERTY
@given(st.sampled_from(SET_NAMES), answer_values(), answer_values())
def test_first_answer_wins_over_invented_examples(name, first, second):
    key = KEYS[name][0]
    invented = f"Input: {{'Question': 'q'}}\nOutput: {json.dumps({key: second})}"
    reply = f"{json.dumps({key: first})}\nStop Here\n{invented}"
    assert read_medhal(reply, KEYS[name]).answer == first.strip()


@PROPERTY
@given(answer_values(), st.sampled_from([" ", "", "  ", "\n"]))
def test_right_answer_is_graded_right(gold, pad):
    gold = gold.strip()
    item = Item("reasoning_nota", gold, "exact", "medhal")
    reply = json.dumps({"cop": f"{pad}{gold.upper()}{pad}"})
    # Med-HALT's equality rule, restated: compatibility forms and case folded, spaces
    # collapsed (the final punctuation is the same on both sides here).
    folded = lambda text: " ".join(unicodedata.normalize("NFKC", text).casefold().split())  # noqa: E731
    assert score(item, reply).metrics["correct"] == float(folded(gold.upper()) == folded(gold))
    assert score(item, json.dumps({"cop": gold})).metrics["correct"] == 1.0


@PROPERTY
@given(prose, prose)
def test_open_think_block_has_no_answer(before, thinking):
    reply = f"{before}<think>{thinking} {{'cop': 'x'}}"
    assert read_medhal(reply, ("cop",)).answer is None
    assert read_strict(reply, ("cop",)).answer is None


@PROPERTY
@given(
    st.sampled_from(SET_NAMES),
    st.sampled_from(
        ['{"%s": null}', "{'%s': None}", "{'%s': ''}", '{"%s": "  "}', "{'%s': None, 'why': 'it's'}"]
    ),
    prose,
)
def test_null_answers_are_format_errors_under_medhal_and_strict(name, template, after):
    key = KEYS[name][0]
    reply = template % key + after.replace("{", "")
    assert read_medhal(reply, KEYS[name]).answer is None
    assert read_strict(reply, KEYS[name]).answer is None


def test_every_set_has_a_round_trip_key():
    assert {name: spec.answer_keys for name, spec in SETS.items()} == KEYS
