"""Property-based tests (hypothesis) for every parser: reply parsers and scorers of each
benchmark, the trace-line reader, and the dataset/asset cell parsers.

Two properties each: arbitrary input never raises (or raises only the parser's own,
documented error type, whose message names where), and every documented answer format
parses to the value it spells, whatever surrounds it. Example counts are fixed and there
is no per-example deadline, so the suite is bounded and not timing-sensitive.
"""

from __future__ import annotations

import copy
import json
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from medhal.report import to_item
from medhal.traces import TraceFileError, parse_trace_line

settings.register_profile(
    "medhal-parsers", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True,
    database=None,  # the same examples on every machine: nothing replayed from a local store
)
settings.load_profile("medhal-parsers")

# Text that looks like model output: prose, tags, braces, quotes, digits, unicode.
TOKENS = [
    "<think>", "</think>", "<score>", "</score>", "<THINK>", "</SCORE>", "{", "}", "[", "]", ":", ",",
    "'", '"', "\u201c", "\u2019", "```", "```json", "\n", " ", "0", "1", "2", "-1", "-2", "+2", "3", "1.5",
    "cop", "'cop'", '"cop"', "url", "paper_title", "correct_answer", "is_answer_correct", "Answer:", "answer is",
    "not sure", "hallucinated", "not hallucinated", "factual", "non-factual", "I do not know", "Unknown",
    "Stop Here", "Input:", "Output:", "**", "#", ">", "None", "null", "true", "\\", "\x00", "\udcff"[:0], "é", "字",
]
model_text = st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=8)), max_size=40).map("".join),
)
no_tags = st.text(alphabet=st.characters(blacklist_characters="<>", blacklist_categories=("Cs",)), max_size=80)


# ---------------------------------------------------------------------------- MedFact-Bench

from medfact_bench.scoring import SCORE_TO_LABEL, parse_reply as medfact_parse, strict_format  # noqa: E402


@given(model_text)
def test_medfact_arbitrary_text_never_raises(text):
    parsed = medfact_parse(text)
    assert parsed.score is None or parsed.score in SCORE_TO_LABEL
    assert parsed.label in (None, "SUPPORT", "NEI", "CONTRADICT")
    assert strict_format(text) in (True, False)


@given(no_tags, st.integers(-2, 2), st.sampled_from(["", "+"]), st.sampled_from(["", " ", "\n", " \t"]), st.sampled_from(["", "\n", "\n\n", " "]))
def test_medfact_documented_format(think, score, plus, pad, gap):
    body = f"{plus if score >= 0 else ''}{score}"
    reply = f"<think>{think}</think>{gap}<score>{pad}{body}{pad}</score>"
    parsed = medfact_parse(reply)
    assert parsed.score == score
    assert parsed.label == SCORE_TO_LABEL[score]
    assert strict_format(reply)


@given(no_tags, st.integers().filter(lambda v: v not in SCORE_TO_LABEL))
def test_medfact_out_of_range_score_is_invalid(think, score):
    assert medfact_parse(f"<think>{think}</think><score>{score}</score>").score is None


@given(no_tags, st.integers(-2, 2), model_text)
def test_medfact_first_score_block_wins(prefix, score, rest):
    reply = f"{prefix}<score>{score}</score>{rest}"
    assert medfact_parse(reply).score == score


# ---------------------------------------------------------------------------- Med-HALT

from med_halt.parsing import brace_spans, find_field, key_values, parse_reply as halt_parse  # noqa: E402
from med_halt.rows import parse_options, pubmed_id  # noqa: E402
from med_halt.scoring import grade, rules  # noqa: E402
from med_halt.sets import SETS  # noqa: E402
from medhal.datasets import DatasetError  # noqa: E402

ANSWER_KEYS = sorted({spec.answer_keys for spec in SETS.values()})
# An answer value as models write them: no quotes, braces or newlines (those are what the
# tolerant readings split on), not empty, no surrounding blanks.
answer_value = st.text(
    alphabet=st.characters(blacklist_characters="\"'{}\n\r\\\u201c\u201d\u2018\u2019`", blacklist_categories=("Cs", "Cc")),
    min_size=1, max_size=40,
).map(str.strip).filter(bool).filter(lambda s: "think>" not in s.lower())
# (an answer holding a think tag is read as a reasoning block by design, so it is not a plain answer)
prose = st.text(alphabet=st.characters(blacklist_characters="{}<>`", blacklist_categories=("Cs",)), max_size=60)


@given(model_text, st.sampled_from(ANSWER_KEYS))
def test_med_halt_arbitrary_text_never_raises(text, keys):
    parsed = halt_parse(text, keys)
    assert parsed.fields is None or isinstance(parsed.fields, dict)
    assert parsed.method in (None, "json", "python", "key-value")
    brace_spans(text)
    key_values(text)
    find_field(parsed.fields, keys)


@given(model_text, st.sampled_from(sorted(SETS)), st.data())
def test_med_halt_grading_arbitrary_text_never_raises(text, test_set, data):
    rule = data.draw(st.sampled_from(rules(test_set)))
    gold = data.draw(st.sampled_from(["Vitamin C", "Unknown", "https://pubmed.ncbi.nlm.nih.gov/123", "A title."]))
    result = grade(test_set, text, gold, rule, verdict_gold="yes", decline_options=("I do not know",))
    assert result.parsed in (True, False) and result.correct in (True, False)
    assert all(v in (0.0, 1.0) for v in result.outcomes.values())
    assert not (result.correct and not result.parsed)


@given(st.sampled_from(sorted(SETS)), answer_value, prose, prose, st.sampled_from(["json", "python", "fenced", "think"]))
def test_med_halt_documented_formats(test_set, value, before, after, style):
    key = SETS[test_set].answer_keys[0]
    answer = {key: value}
    if style == "python":
        body = repr(answer)
    else:
        body = json.dumps(answer, ensure_ascii=False)
    if style == "fenced":
        body = f"```json\n{body}\n```"
    if style == "think":
        body = f"<think>draft {{'{key}': 'not this'}}</think>{body}"
    reply = f"{before}{body}{after}" if style != "think" else f"{body}{after}"
    parsed = halt_parse(reply, SETS[test_set].answer_keys)
    found = find_field(parsed.fields, SETS[test_set].answer_keys)
    assert found is not None, reply
    assert str(found[1]).strip() == value


@given(st.sampled_from(sorted(SETS)), answer_value, answer_value)
def test_med_halt_first_answer_wins_over_invented_examples(test_set, first, second):
    key = SETS[test_set].answer_keys[0]
    reply = f"{json.dumps({key: first})}\nStop Here\nInput: {{'Question': 'q'}}\nOutput: {json.dumps({key: second})}"
    found = find_field(halt_parse(reply, SETS[test_set].answer_keys).fields, SETS[test_set].answer_keys)
    assert found is not None and found[1] == first


@given(answer_value, st.sampled_from([" ", "", "  "]))
def test_med_halt_right_answer_is_graded_right(gold, pad):
    reply = json.dumps({"cop": f"{pad}{gold.upper()}{pad}"})
    assert grade("reasoning_nota", reply, gold, "exact").correct == (gold.upper().lower() == gold.lower())
    assert grade("reasoning_nota", json.dumps({"cop": gold}), gold, "exact").correct


@given(prose, no_tags)
def test_med_halt_open_think_block_has_no_answer(before, thinking):
    assert halt_parse(f"{before}<think>{thinking} {{'cop': 'x'}}", ("cop",)).fields is None


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # ast.literal_eval's own, on number-like junk
@given(model_text)
def test_med_halt_options_cell_raises_only_dataset_error(text):
    try:
        options = parse_options(text, "f.csv: row 1")
    except DatasetError as e:
        assert "f.csv: row 1" in str(e) and "options" in str(e)
    else:
        assert isinstance(options, dict) and options and all(isinstance(k, str) for k in options)


@given(st.integers(1, 10**9), st.sampled_from([
    "https://pubmed.ncbi.nlm.nih.gov/{}", "https://pubmed.ncbi.nlm.nih.gov/{}/", "pubmed.ncbi.nlm.nih.gov/{}",
    "https://www.ncbi.nlm.nih.gov/pubmed/{}", "http://ncbi.nlm.nih.gov/pubmed/{}",
]))
def test_med_halt_pubmed_link_forms(pmid, form):
    assert pubmed_id(form.format(pmid)) == str(pmid)


@given(model_text)
def test_med_halt_pubmed_id_arbitrary_text(text):
    value = pubmed_id(text)
    assert value is None or value.isdigit()


# ---------------------------------------------------------------------------- MedHallu

from medhal.assets import AssetError  # noqa: E402
from medhallu.prompts import extract_prompts  # noqa: E402
from medhallu.scoring import parse_reply as hallu_parse, reward as hallu_reward  # noqa: E402

# Text after a verdict digit that cannot be read as more of the number.
after_digit = st.one_of(st.just(""), st.text(max_size=60).filter(lambda t: not t[:1].isdigit() and not (t[:1] == "." and t[1:2].isdigit())))


@given(model_text, st.booleans())
def test_medhallu_arbitrary_text_never_raises(text, offered):
    verdict = hallu_parse(text, offered)
    assert verdict.code in (None, 0, 1, 2)
    if not offered:
        assert verdict.code != 2
    assert hallu_reward(verdict, "hallucinated", 0.5) in (0.0, 0.5, 1.0)


@given(
    st.sampled_from([0, 1, 2]), st.booleans(),
    st.sampled_from(["", "Answer: ", "answer: ", "**", "Verdict: ", "Final answer is ", "\n  ", "`"]),
    after_digit,
    st.one_of(st.just(""), no_tags.map(lambda t: f"<think>{t}</think>")),
)
def test_medhallu_documented_digit_verdicts(code, offered, label, rest, think):
    reply = f"{think}{label}{code}{rest}"
    verdict = hallu_parse(reply, offered)
    if code == 2 and not offered:
        assert verdict.code is None
    else:
        assert verdict.code == code, reply


@given(
    st.sampled_from([("not sure", 2), ("I don't know", 2), ("hallucinated", 1), ("not hallucinated", 0), ("factual", 0), ("non-factual", 1)]),
    st.booleans(),
)
def test_medhallu_documented_word_verdicts(phrase_code, offered):
    phrase, code = phrase_code
    verdict = hallu_parse(f"The answer is {phrase}.", offered)
    assert verdict.code == (None if code == 2 and not offered else code)


@given(no_tags, st.booleans())
def test_medhallu_open_think_block_is_invalid(thinking, offered):
    assert hallu_parse(f"<think>{thinking} 1", offered).code is None


@given(model_text)
def test_medhallu_prompt_asset_parser_raises_only_asset_error(text):
    try:
        extract_prompts(text, "asset.py")
    except AssetError as e:
        assert "asset.py" in str(e)


# ---------------------------------------------------------------------------- trace lines


def valid_v1_row(benchmark: str = "medfact-bench") -> dict:
    return {
        "id": "r0",
        "task": {"type": "MedFactTask", "data": {
            "idx": 0, "prompt": "p", "system_prompt": "s", "benchmark": benchmark, "source_id": "scifact:0",
            "provenance": {"dataset": "d"}, "dataset": "scifact", "claim": "c", "label": "SUPPORT",
        }},
        "agent": {"model": "m", "sampling": {}},
        "verifiers": {"version": "0.2.1"},
        "nodes": [
            {"message": {"role": "system", "content": "s"}, "sampled": False},
            {"parent": 0, "message": {"role": "user", "content": "p"}, "sampled": False},
            {"parent": 1, "message": {"role": "assistant", "content": "<think>x</think><score>2</score>"}, "sampled": True},
        ],
        "rewards": {"accuracy": 1.0},
        "metrics": {"parseable_score": 1.0, "strict_format": 1.0},
        "info": {"parsed_score": 2, "pred_label": "SUPPORT"},
        "errors": [],
        "stop_condition": "agent_completed",
    }


def valid_v0_row() -> dict:
    data = valid_v1_row()["task"]["data"]
    return {
        "prompt": [{"role": "user", "content": "p"}],
        "completion": [{"role": "assistant", "content": "<score>2</score>"}],
        "reward": 1.0, "metrics": {"accuracy": 1.0, "parseable_score": 1.0},
        "info": {"task_data": data, "task_type": "MedFactTask", "pred_label": "SUPPORT"},
    }


def paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from paths(v, (*prefix, i))


V1_PATHS = [p for p in paths(valid_v1_row()) if p]
V0_PATHS = [p for p in paths(valid_v0_row()) if p]
json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


def report_spec():
    from medfact_bench import REPORT

    return REPORT


def read_or_trace_error(line: str | bytes) -> None:
    """What `medhal report` does with one line: a record and an item, or a TraceFileError
    naming the file and line. Anything else would escape as a crash."""
    try:
        to_item(parse_trace_line(line, "run/traces.jsonl", 7), report_spec())
    except TraceFileError as e:
        assert str(e).startswith("run/traces.jsonl:7: "), e


@given(st.binary(max_size=200))
def test_trace_line_arbitrary_bytes(raw):
    read_or_trace_error(raw)


@given(model_text)
def test_trace_line_arbitrary_text(text):
    read_or_trace_error(text)


@given(st.booleans(), st.data(), json_value)
def test_trace_row_with_any_field_replaced(v1, data, value):
    row = valid_v1_row() if v1 else valid_v0_row()
    path = data.draw(st.sampled_from(V1_PATHS if v1 else V0_PATHS))
    target = row
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    read_or_trace_error(json.dumps(row))


@given(st.sampled_from(V1_PATHS))
def test_trace_row_with_any_field_removed(path):
    row = valid_v1_row()
    target = row
    for key in path[:-1]:
        target = target[key]
    if isinstance(target, dict):
        del target[path[-1]]
    else:
        target.pop(path[-1])
    read_or_trace_error(json.dumps(row))


def test_valid_rows_read_back():
    spec = report_spec()
    item = to_item(parse_trace_line(json.dumps(valid_v1_row()), "t", 1), spec)
    assert (item.idx, item.gold, item.pred, item.correct, item.parsed) == (0, "SUPPORT", "SUPPORT", 1.0, True)
    item = to_item(parse_trace_line(json.dumps(valid_v0_row()), "t", 1), spec)
    assert (item.idx, item.pred, item.correct) == (0, "SUPPORT", 1.0)


@given(st.sampled_from(["med-halt", "medhallu", "other", ""]))
def test_row_from_another_benchmark_is_named(benchmark):
    with pytest.raises(TraceFileError, match=r"^t:3: field 'task.data.benchmark' is .*another benchmark"):
        to_item(parse_trace_line(json.dumps(valid_v1_row(benchmark)), "t", 3), report_spec())


def test_timed_out_rollout_without_error_counts_as_error():
    """The stock harness leaves a rollout stopped by its timeout without an error."""
    row = valid_v1_row()
    row["nodes"] = row["nodes"][:2]
    row["stop_condition"] = "harness_timeout"
    row["rewards"] = {"accuracy": 0.0}
    record = parse_trace_line(json.dumps(row), "t", 1)
    assert record.errored and "harness_timeout" in record.error_message
    assert to_item(record, report_spec()).pred == "ERROR"


@given(st.text(alphabet=string.printable, max_size=30))
def test_unknown_task_type_is_named(task_type):
    row = valid_v1_row()
    row["task"]["type"] = task_type
    try:
        to_item(parse_trace_line(json.dumps(row), "t", 2), report_spec())
    except TraceFileError as e:
        assert task_type != "MedFactTask" and "t:2: field 'task.type'" in str(e)
    else:
        assert task_type == "MedFactTask"


@pytest.mark.parametrize("mutate, message", [
    (lambda r: r["task"]["data"].update(label="TRUE"), "t:1: field 'task.data.label' is 'TRUE'"),
    (lambda r: r["info"].update(pred_label="MAYBE"), "t:1: field 'info.pred_label' is 'MAYBE'"),
    (lambda r: r["task"]["data"].update(idx="zero"), "t:1: field 'task.data.idx' is 'zero', not an integer"),
    (lambda r: r["rewards"].update(accuracy="1"), "t:1: field 'metrics.accuracy' is '1', not a number"),
    (lambda r: r.update(nodes={"a": 1}), "t:1: field 'nodes' is not a list"),
    (lambda r: r["nodes"].append(3), "t:1: field 'nodes\\[3\\]' is not an object"),
    (lambda r: r.update(errors=["boom"]), "t:1: field 'errors\\[0\\]' is not an object"),
    (lambda r: r.update(agent=[]), "t:1: field 'agent' is not an object"),
    (lambda r: r["task"]["data"].pop("dataset"), "t:1: field 'task.data.dataset' is missing"),
])
def test_bad_fields_are_named(mutate, message):
    row = copy.deepcopy(valid_v1_row())
    mutate(row)
    with pytest.raises(TraceFileError, match=message):
        to_item(parse_trace_line(json.dumps(row), "t", 1), report_spec())
