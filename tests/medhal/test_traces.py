import json

import pytest

from medhal.reports.traces import TraceFileError, iter_traces, resolve_trace_file


def v1_row(idx=0, reply="<score>1</score>", errors=None, rewards=None):
    nodes = [{"message": {"role": "user", "content": "q"}, "sampled": False}]
    if reply is not None:
        nodes.append({"parent": 0, "message": {"role": "assistant", "content": reply}, "sampled": True})
    return {
        "task": {"type": "MedFactTask", "data": {"idx": idx, "benchmark": "medfact-bench", "prompt": "q"}},
        "nodes": nodes,
        "rewards": rewards if rewards is not None else {"accuracy": 1.0},
        "metrics": {"parseable_score": 1.0},
        "info": {"pred_label": "SUPPORT"},
        "errors": errors or [],
        "agent": {"model": "m", "sampling": {"temperature": 0.0}},
        "verifiers": {"version": "0.2.1"},
    }


def write(path, lines):
    path.write_text("".join(lines))
    return path


def test_reads_v1_rows_streaming(tmp_path):
    err = [{"type": "ProviderError", "message": "boom", "status_code": 500}]
    f = write(
        tmp_path / "traces.jsonl",
        [
            json.dumps(v1_row(0)) + "\n",
            "\n",
            json.dumps(v1_row(1, reply=None, errors=err, rewards={})) + "\n",
        ],
    )
    records = list(iter_traces(tmp_path))
    assert [r.data["idx"] for r in records] == [0, 1]
    assert records[0].reply == "<score>1</score>" and records[0].model == "m"
    assert records[0].sampling == {"temperature": 0.0} and records[0].verifiers_version == "0.2.1"
    assert records[1].errored and records[1].reply is None
    assert records[1].error_message == "ProviderError: boom"
    assert records[1].line == 3 and records[1].path == str(f)


def test_prompt_supplied_assistant_message_is_not_the_reply(tmp_path):
    row = v1_row(reply=None)
    row["nodes"].append(
        {"parent": 0, "message": {"role": "assistant", "content": "few-shot"}, "sampled": False}
    )
    write(tmp_path / "traces.jsonl", [json.dumps(row) + "\n"])
    assert next(iter_traces(tmp_path)).reply is None


@pytest.mark.parametrize(
    "bad, message",
    [
        ('{"task": {"type": "X", "data": {"idx": 0}}, "nodes": [', "traces.jsonl:2: not valid JSON"),
        ("[1, 2, 3]", "traces.jsonl:2: expected a JSON object, got list"),
        ('{"hello": 1}', "traces.jsonl:2: neither a verifiers trace"),
        ('{"task": {"type": "X"}, "nodes": []}', "traces.jsonl:2: field 'task.data' is missing"),
        (
            '{"task": {"data": {}}, "nodes": [], "errors": "x"}',
            "traces.jsonl:2: field 'errors' is not a list",
        ),
        ("\udcff".encode("utf-8", "surrogateescape").decode("latin-1"), "traces.jsonl:2: not valid JSON"),
    ],
)
def test_bad_lines_name_file_and_line(tmp_path, bad, message):
    write(tmp_path / "traces.jsonl", [json.dumps(v1_row()) + "\n", bad])
    with pytest.raises(TraceFileError, match=message.replace("(", r"\(")):
        list(iter_traces(tmp_path / "traces.jsonl"))


def test_reads_v0_results_rows(tmp_path):
    row = {
        "prompt": [{"role": "user", "content": "q"}],
        "completion": [{"role": "assistant", "content": " <score>0</score> "}],
        "reward": 1.0,
        "metrics": {"parseable_score": 1.0},
        "info": {
            "task_data": {"idx": 4, "benchmark": "medfact-bench"},
            "task_type": "MedFactTask",
            "scored": {},
        },
    }
    write(tmp_path / "results.jsonl", [json.dumps(row) + "\n", json.dumps({**row, "info": {}}) + "\n"])
    records = iter_traces(tmp_path)
    first = next(records)
    assert first.data["idx"] == 4 and first.reply == "<score>0</score>" and first.task_type == "MedFactTask"
    with pytest.raises(
        TraceFileError, match=r"results\.jsonl:2: results\.jsonl row has no 'info\.task_data'"
    ):
        next(records)


def test_missing_paths(tmp_path):
    with pytest.raises(TraceFileError, match=r"no traces\.jsonl or results\.jsonl"):
        resolve_trace_file(tmp_path)
    with pytest.raises(TraceFileError, match="no such file"):
        resolve_trace_file(tmp_path / "nope.jsonl")


def call(prompt=10, completion=3, start=100.0, end=100.5):
    return {
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion},
        "time": {"start": start, "end": end},
    }


@pytest.mark.parametrize(
    "calls, usage, latency",
    [
        ([call()], (10, 3), 0.5),
        ([call(), call(5, 7, 200.0, 201.25)], (15, 10), 1.75),  # summed over the calls
        (None, None, None),  # no calls recorded (a hand-made trace, v0)
        ([], None, None),
        (
            [call(), {"usage": {"prompt_tokens": 1}, "time": {"start": 1, "end": 2}}],
            None,
            1.5,
        ),  # tokens in part
        ([call(prompt=True)], None, 0.5),  # a boolean is no count
        ([call(prompt=-1)], None, 0.5),
        ([call(start=5.0, end=4.0)], (10, 3), None),  # time running backwards
        ([call(start=10**400, end=1)], (10, 3), None),  # past a float's range
        ([call(start="1", end="2")], (10, 3), None),
    ],
)
def test_tokens_and_model_time_are_summed_over_calls_or_not_known(tmp_path, calls, usage, latency):
    """Shown beside an item, never counted: a trace that records either in part or not as
    numbers has it as not known, and is read all the same."""
    row = v1_row(0)
    if calls is not None:
        row["calls"] = calls
    [record] = iter_traces(write(tmp_path / "traces.jsonl", [json.dumps(row) + "\n"]))
    assert record.usage == usage and record.latency == latency


@pytest.mark.parametrize(
    "calls, field",
    [(["not a call"], r"'calls\[0\]' is not an object"), ({"calls": 1}, "'calls' is not a list")],
)
def test_model_calls_not_as_verifiers_records_them_are_refused(tmp_path, calls, field):
    """The calls the reply's finish reason is looked up in must be a list of objects: one line
    naming the file, the line and the field."""
    row = v1_row(0)
    row["calls"] = calls
    with pytest.raises(TraceFileError, match=r"traces\.jsonl:1: field " + field):
        list(iter_traces(write(tmp_path / "traces.jsonl", [json.dumps(row) + "\n"])))
