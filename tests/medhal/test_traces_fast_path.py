"""The trace reader's fast path (msgspec) returns exactly what the reference path (stdlib
json with the integer hook, full checks) returns, or hands the line to it: a line is never
read differently because it was read fast. Hostile values go where a report reads them
(task data, info, rewards, metrics, errors, the reply, agent fields) and where it does not
(other node fields)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from medhal.kit.files import MAX_INT_DIGITS
from medhal.reports import traces
from medhal.reports.traces import TraceFileError, TraceRecord, parse_trace_line
from tests.medhal.test_traces_reader import trace_row
from tests.properties import examples

PLACEHOLDER = "@@HOSTILE@@"

# Raw JSON texts, spliced in where json.dumps cannot write them (long integers, NaN, bad
# escapes) or where the reference path words a message the fast path must not reword.
HOSTILE = [
    "9" * (MAX_INT_DIGITS - 1),
    "9" * MAX_INT_DIGITS,  # the longest integer read as a number
    "-" + "9" * MAX_INT_DIGITS,
    "1" + "0" * MAX_INT_DIGITS,  # 1,001 digits: msgspec reads it, the walks must refuse it
    "-1" + "0" * MAX_INT_DIGITS,
    "7" * 2000,
    "7" * 4300,  # Python's own limit: the last length msgspec turns into an int
    "7" * 4301,
    "18446744073709551616",  # past 64 bits (orjson would silently make it a float)
    "-9223372036854775809",
    "NaN",
    "Infinity",
    "-Infinity",
    "1e400",
    "-1e400",
    "1e-400",
    "0.30000000000000004",
    '"\\ud800"',
    '"a\\udc00b"',
    '"\\ud83d\\ude00"',  # a proper pair: fine
    '"\\u0000"',
    '"caf\u00e9 \u2014 \U0001f600"',
    "[" * 63 + "]" * 63,
    "[" * 64 + "]" * 64,
    "[" * 65 + "]" * 65,
    "{}",
    "[]",
    "null",
    "true",
    "-0",
    "-0.0",
]


def _at(row: dict, place: str) -> None:
    """Put the placeholder at `place` in `row`."""
    if place == "idx":
        row["task"]["data"]["idx"] = PLACEHOLDER
    elif place == "data":
        row["task"]["data"]["extra"] = [1, PLACEHOLDER]
    elif place == "selection":
        row["task"]["data"]["selection"] = {"n_expected": PLACEHOLDER}
    elif place == "info":
        row["info"]["note"] = {"deep": PLACEHOLDER}
    elif place == "reward":
        row["rewards"]["accuracy"] = PLACEHOLDER
    elif place == "metric":
        row["metrics"]["parseable_score"] = PLACEHOLDER
    elif place == "error":
        row["errors"] = [{"type": "X", "message": "m", "detail": PLACEHOLDER}]
    elif place == "sampling":
        row["agent"]["sampling"]["seed"] = PLACEHOLDER
    elif place == "model":
        row["agent"]["model"] = PLACEHOLDER
    elif place == "reply":
        row["nodes"][-1]["message"]["content"] = PLACEHOLDER
    elif place == "node":
        row["nodes"][0]["usage"] = PLACEHOLDER  # a field no report reads
    else:
        raise AssertionError(place)


PLACES = [
    "idx",
    "data",
    "selection",
    "info",
    "reward",
    "metric",
    "error",
    "sampling",
    "model",
    "reply",
    "node",
]


def line_with(value: str, place: str, ensure_ascii: bool = True) -> bytes:
    row = trace_row(7)
    _at(row, place)
    return (json.dumps(row, ensure_ascii=ensure_ascii).replace(f'"{PLACEHOLDER}"', value) + "\n").encode()


def reference(raw: bytes, monkeypatch: pytest.MonkeyPatch) -> TraceRecord | str:
    with monkeypatch.context() as m:
        m.setattr(traces, "_fast_record", lambda *args: None)
        return read(raw)


def read(raw: bytes) -> TraceRecord | str:
    try:
        return parse_trace_line(raw, "t.jsonl", 1, 0)
    except TraceFileError as e:
        return f"error: {e}"


def test_clean_lines_take_the_fast_path():
    """Otherwise every other test here would pass with the fast path switched off."""
    for row in (trace_row(0), trace_row(1, reply=None), trace_row(2, errors=[{"type": "T", "message": "m"}])):
        raw = json.dumps(row).encode()
        record = traces._fast_record(raw, "t.jsonl:1", "t.jsonl", 1)
        assert isinstance(record, TraceRecord)
        assert record.data["idx"] == row["task"]["data"]["idx"]


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize(
    "value", HOSTILE, ids=[v[:12] + (f"..{len(v)}" if len(v) > 12 else "") for v in HOSTILE]
)
def test_fast_path_reads_as_the_reference_does(value, place, monkeypatch):
    raw = line_with(value, place)
    assert read(raw) == reference(raw, monkeypatch)


@pytest.mark.parametrize(
    "value, place, expected",
    [
        ("9" * MAX_INT_DIGITS, "info", None),
        (
            "1" + "0" * MAX_INT_DIGITS,
            "idx",
            "field 'task.data.idx' is not an integer (got a number with 1001 digits)",
        ),
        ("7" * 2000, "info", "field 'info.note.deep' is a number with 2000 digits (at most 1000 are read)"),
        ("7" * 1500, "reward", "field 'rewards.accuracy' is not a number (got a number with 1500 digits)"),
        (
            "7" * 4300,
            "metric",
            "field 'metrics.parseable_score' is not a number (got a number with 4300 digits)",
        ),
        ("-" + "7" * 1001, "selection", "field 'task.data.selection.n_expected' is not a task count"),
        ("7" * 3000, "sampling", "field 'agent.sampling.seed' is a number with 3000 digits"),
        ("7" * 3000, "model", "field 'agent.model' is not a string (got a number with 3000 digits)"),
        ("7" * 3000, "node", None),  # nothing reads it: the line is fine
    ],
)
def test_integers_msgspec_reads_but_we_refuse(value, place, expected):
    """1,001 to 4,300 digits: the one gap between what msgspec refuses and what the
    reference path marks. Each message is the reference path's, with the field named."""
    result = read(line_with(value, place))
    if expected is None:
        assert isinstance(result, TraceRecord)
    else:
        assert isinstance(result, str) and result.startswith("error: t.jsonl:1: ") and expected in result


JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=12,
)


@settings(
    max_examples=examples(300),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=True,
    database=None,
)
@given(
    value=st.one_of(JSON_VALUES.map(json.dumps), st.sampled_from(HOSTILE)),
    place=st.sampled_from(PLACES),
    ensure_ascii=st.booleans(),
)
def test_any_value_anywhere_reads_as_the_reference_does(value, place, ensure_ascii, monkeypatch):
    raw = line_with(value, place, ensure_ascii)
    assert read(raw) == reference(raw, monkeypatch)


def _from_a_deep_stack(frames: int, read_line):
    return read_line() if frames == 0 else _from_a_deep_stack(frames - 1, read_line)


@pytest.mark.parametrize("levels", [900, 990, 998, 1050, 1200])
@pytest.mark.parametrize("frames", [0, 200])
def test_deep_nesting_in_a_field_no_report_reads_gets_one_answer(levels, frames, monkeypatch):
    """msgspec reads up to 1,000 levels anywhere in a line; the reference path must not refuse
    what it accepts because its caller's stack is deep (Python's recursion limit counts the
    caller's frames): one answer for both paths, from any call site."""
    raw = line_with("[" * levels + "]" * levels, "node")
    fast = _from_a_deep_stack(frames, lambda: read(raw))
    slow = _from_a_deep_stack(frames, lambda: reference(raw, monkeypatch))
    assert fast == slow
    assert isinstance(fast, TraceRecord) == (levels <= 1050)
