"""Property tests of what `medhal report` does with one trace line: a counted item, or a
TraceFileError naming the file and line, whatever the line holds (a crash would lose the
run's report). Example counts are fixed and there is no per-example deadline."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from medhal.reports.registry import report_spec
from medhal.reports.report import Run, build_report
from medhal.reports.traces import TraceFileError, parse_trace_line
from tests.properties import examples

settings.register_profile(
    "medhal-trace-lines",
    max_examples=examples(300),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
    database=None,
)
PROFILE = settings.get_profile("medhal-trace-lines")


def valid_v1_row(benchmark: str = "medfact-bench") -> dict:
    return {
        "id": "r0",
        "task": {
            "type": "MedFactTask",
            "data": {
                "idx": 0,
                "prompt": "p",
                "system_prompt": "s",
                "benchmark": benchmark,
                "source_id": "scifact:0",
                "parser": "medhal",
                "provenance": {"dataset": "d"},
                "dataset": "scifact",
                "claim": "c",
                "label": "SUPPORT",
                "selection": {
                    "n_expected": 1,
                    "contiguous": True,
                    "num_tasks": None,
                    "shuffle": False,
                    "idx_sha256": "x",
                },
            },
        },
        "agent": {"model": "m", "sampling": {}},
        "verifiers": {"version": "0.2.1"},
        "nodes": [
            {"message": {"role": "system", "content": "s"}, "sampled": False},
            {"parent": 0, "message": {"role": "user", "content": "p"}, "sampled": False},
            {
                "parent": 1,
                "message": {"role": "assistant", "content": "<think>x</think><score>2</score>"},
                "sampled": True,
            },
        ],
        "rewards": {"accuracy": 1.0},
        "metrics": {
            "correct": 1.0,
            "parsed": 1.0,
            "correct_medhal": 1.0,
            "parsed_medhal": 1.0,
            "correct_authors": 1.0,
            "parsed_authors": 1.0,
            "correct_strict": 1.0,
            "parsed_strict": 1.0,
        },
        "info": {"readings": {"medhal": "SUPPORT", "authors": "SUPPORT", "strict": "SUPPORT"}},
        "errors": [],
        "stop_condition": "agent_completed",
    }


def valid_v0_row() -> dict:
    row = valid_v1_row()
    return {
        "prompt": [{"role": "user", "content": "p"}],
        "completion": [{"role": "assistant", "content": "<score>2</score>"}],
        "reward": 1.0,
        "metrics": row["metrics"],
        "info": {"task_data": row["task"]["data"], "task_type": "MedFactTask", **row["info"]},
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
SPEC = report_spec("medfact-bench")


def add(line: str | bytes, where=("run/traces.jsonl", 7)) -> Run:
    run = Run(SPEC, where[0])
    run.add(parse_trace_line(line, *where))
    return run


def read_or_trace_error(line: str | bytes) -> None:
    """One line read as `medhal report` reads it: counted, or refused with file and line."""
    try:
        run = add(line)
    except TraceFileError as e:
        assert str(e).startswith("run/traces.jsonl:7: "), e
        assert "\n" not in str(e)
    else:
        assert run.n == 1
        build_report(run)  # and the report can be built from it


@PROFILE
@given(st.binary(max_size=200))
def test_arbitrary_bytes(raw):
    read_or_trace_error(raw)


@PROFILE
@given(st.booleans(), st.data(), json_value)
def test_any_field_replaced(v1, data, value):
    row = valid_v1_row() if v1 else valid_v0_row()
    path = data.draw(st.sampled_from(V1_PATHS if v1 else V0_PATHS))
    target = row
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    read_or_trace_error(json.dumps(row))


@PROFILE
@given(st.sampled_from(V1_PATHS))
def test_any_field_removed(path):
    row = valid_v1_row()
    target = row
    for key in path[:-1]:
        target = target[key]
    if isinstance(target, dict):
        del target[path[-1]]
    else:
        target.pop(path[-1])
    read_or_trace_error(json.dumps(row))


def test_valid_rows_are_counted_as_read():
    for row in (valid_v1_row(), valid_v0_row()):
        report = build_report(add(json.dumps(row)))
        assert (report["n"], report["micro_accuracy"], report["confusion"]["SUPPORT"]["SUPPORT"]) == (
            1,
            1.0,
            1,
        )


@pytest.mark.parametrize("benchmark", ["med-halt", "medhallu", "other", ""])
def test_a_row_from_another_benchmark_is_named(benchmark):
    with pytest.raises(TraceFileError, match=r"^t:3: field 'task.data.benchmark' is .*another benchmark"):
        add(json.dumps(valid_v1_row(benchmark)), ("t", 3))


def test_a_timed_out_rollout_without_error_counts_as_an_error():
    """The stock harness leaves a rollout stopped by its timeout without an error."""
    row = valid_v1_row()
    row["nodes"] = row["nodes"][:2]
    row["stop_condition"] = "harness_timeout"
    report = build_report(add(json.dumps(row)))
    assert report["n_errors"] == 1 and report["confusion"]["SUPPORT"]["ERROR"] == 1


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda r: r["task"]["data"].update(label="TRUE"), "t:1: field 'task.data.label' is 'TRUE'"),
        (
            lambda r: r["info"]["readings"].update(medhal="MAYBE"),
            "t:1: field 'info.readings.medhal' is 'MAYBE'",
        ),
        (lambda r: r["task"]["data"].update(idx="zero"), "t:1: field 'task.data.idx' is not an integer"),
        (lambda r: r["metrics"].update(correct_medhal="1"), "t:1: field 'metrics.correct_medhal'"),
        (lambda r: r.update(nodes={"a": 1}), "t:1: field 'nodes' is not a list"),
        (lambda r: r["nodes"].append(3), "t:1: field 'nodes\\[3\\]' is not an object"),
        (lambda r: r.update(errors=["boom"]), "t:1: field 'errors\\[0\\]' is not an object"),
        (lambda r: r.update(agent=[]), "t:1: field 'agent' is not an object"),
        (lambda r: r["task"]["data"].pop("dataset"), "t:1: field 'task.data.dataset' is missing"),
    ],
)
def test_bad_fields_are_named(mutate, message):
    row = copy.deepcopy(valid_v1_row())
    mutate(row)
    with pytest.raises(TraceFileError, match=message):
        add(json.dumps(row), ("t", 1))
