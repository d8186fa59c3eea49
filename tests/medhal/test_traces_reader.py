"""Hostile trace files: the streaming reader turns every broken line into one
TraceFileError line naming file, line and field (never RecursionError, ValueError from
int(), UnicodeDecodeError or a TypeError later in a report), and reads what is merely
unusual (a byte-order mark). Rows are built here in the shape verifiers writes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from medhal.reports.traces import TraceFileError, iter_traces
from tests.running import clean_exit_2, medhal_main, one_line


def trace_row(idx: int = 0, reply: str | None = "<score>1</score>", errors: list | None = None) -> dict:
    nodes = [{"message": {"role": "user", "content": "q"}, "sampled": False}]
    if reply is not None:
        nodes.append({"parent": 0, "message": {"role": "assistant", "content": reply}, "sampled": True})
    return {
        "task": {"type": "MedFactTask", "data": {"idx": idx, "benchmark": "medfact-bench", "prompt": "q"}},
        "nodes": nodes,
        "rewards": {"accuracy": 1.0},
        "metrics": {"parseable_score": 1.0},
        "info": {"pred_label": "SUPPORT"},
        "errors": errors or [],
        "agent": {"model": "m", "sampling": {"temperature": 0.0}},
        "verifiers": {"version": "0.2.1"},
    }


def write_lines(tmp_path: Path, lines: list[str | bytes]) -> Path:
    path = tmp_path / "traces.jsonl"
    path.write_bytes(b"".join(line if isinstance(line, bytes) else line.encode() for line in lines))
    return path


def good(idx: int) -> str:
    return json.dumps(trace_row(idx)) + "\n"


def fails(path: Path, *fragments: str) -> str:
    with pytest.raises(TraceFileError) as e:
        list(iter_traces(path))
    return one_line(str(e.value), *fragments)


def test_deeply_nested_line(tmp_path):
    path = write_lines(tmp_path, [good(0), "[" * 100_000 + "\n", good(2)])
    fails(path, f"{path}:2:", "nested too deeply")


def test_deep_but_parseable_task_data(tmp_path):
    row = trace_row(1)
    row["task"]["data"]["meta"] = json.loads("[" * 70 + "]" * 70)
    path = write_lines(tmp_path, [good(0), json.dumps(row) + "\n"])
    fails(path, f"{path}:2:", "field 'task.data.meta", "nested more than 64 levels")


def test_non_utf8_byte_names_line_and_offset(tmp_path):
    first, second = good(0).encode(), good(1).encode()
    bad = b'{"task": "caf\xe9"}\n'
    path = write_lines(tmp_path, [first, second, bad])
    offset = len(first) + len(second) + len(b'{"task": "caf')
    fails(path, f"{path}:3:", "not valid JSON", f"byte 0xe9 at byte offset {offset}", "expected UTF-8")


def test_utf16_file(tmp_path):
    path = tmp_path / "traces.jsonl"
    path.write_text(good(0) + good(1), encoding="utf-16")
    fails(path, f"{path}:1:", "UTF-16", "expected UTF-8")


def test_utf8_bom_is_read(tmp_path):
    path = write_lines(tmp_path, [b"\xef\xbb\xbf" + good(0).encode(), good(1)])
    assert [r.data["idx"] for r in iter_traces(path)] == [0, 1]


def test_idx_of_5001_digits(tmp_path):
    line = good(3).replace('"idx": 3', '"idx": ' + "9" * 5001)
    path = write_lines(tmp_path, [good(0), line])
    fails(path, f"{path}:2:", "field 'task.data.idx'", "a number with 5001 digits")


def test_huge_number_elsewhere_names_its_field(tmp_path):
    row = trace_row(1)
    row["info"]["votes"] = [1, 2]
    line = json.dumps(row).replace('"votes": [1, 2]', '"votes": [1, ' + "8" * 5001 + "]")
    path = write_lines(tmp_path, [line + "\n"])
    fails(path, f"{path}:1:", "field 'info.votes[1]'", "5001 digits")


WRONG_TYPES = [
    (lambda r: r["task"]["data"].update(idx="3"), "field 'task.data.idx' is not an integer (got str)"),
    (lambda r: r["task"]["data"].update(idx=True), "field 'task.data.idx' is not an integer (got bool)"),
    (lambda r: r["task"]["data"].pop("idx"), "field 'task.data.idx' is missing"),
    (
        lambda r: r["task"]["data"].update(benchmark=["medfact-bench"]),
        "field 'task.data.benchmark' is not a string (got list)",
    ),
    (lambda r: r["task"].update(type=7), "field 'task.type' is not a string (got int)"),
    (lambda r: r["rewards"].update(accuracy="1.0"), "field 'rewards.accuracy' is not a number (got str)"),
    (
        lambda r: r["metrics"].update(parseable_score=[1]),
        "field 'metrics.parseable_score' is not a number (got list)",
    ),
    (
        lambda r: r.update(errors=[{"type": "X", "message": {"a": 1}}]),
        "field 'errors[0].message' is not a string (got dict)",
    ),
    (lambda r: r.update(errors=["boom"]), "field 'errors[0]' is not an object (got str)"),
    (lambda r: r["agent"].update(model=["m"]), "field 'agent.model' is not a string (got list)"),
    (lambda r: r["agent"].update(sampling=[0.0]), "field 'agent.sampling' is not an object (got list)"),
    (lambda r: r.update(rewards=[1.0]), "field 'rewards' is not an object (got list)"),
    (lambda r: r["nodes"].__setitem__(1, "reply"), "field 'nodes[1]' is not an object (got str)"),
    (lambda r: r["nodes"][1].update(message="hi"), "field 'nodes[1].message' is not an object (got str)"),
    # The selection the completeness checks read: a shard with no task count of its own
    # would otherwise be reported complete with 0 tasks expected, a malformed one crash.
    (
        lambda r: r["task"]["data"].update(selection=[1]),
        "field 'task.data.selection' is not an object (got list)",
    ),
    (
        lambda r: r["task"]["data"].update(selection={"n_expected": -1}),
        "field 'task.data.selection.n_expected' is not a task count (got int)",
    ),
    (
        lambda r: r["task"]["data"].update(selection={"n_expected": 4, "shard": "x", "n_shard": 2}),
        "field 'task.data.selection.shard' is not i/k with i below k (got 'x')",
    ),
    (
        lambda r: r["task"]["data"].update(selection={"n_expected": 4, "shard": "2/2", "n_shard": 2}),
        "field 'task.data.selection.shard' is not i/k with i below k (got '2/2')",
    ),
    (
        lambda r: r["task"]["data"].update(selection={"n_expected": 4, "shard": "1/2"}),
        "field 'task.data.selection.n_shard' is not a task count (got nothing)",
    ),
    (
        lambda r: r["task"]["data"].update(selection={"n_expected": 4, "shard": "1/2", "n_shard": "2"}),
        "field 'task.data.selection.n_shard' is not a task count (got str)",
    ),
]


@pytest.mark.parametrize("mutate, message", WRONG_TYPES, ids=[m for _, m in WRONG_TYPES])
def test_field_of_the_wrong_type(tmp_path, mutate, message):
    row = trace_row(1)
    mutate(row)
    path = write_lines(tmp_path, [good(0), json.dumps(row) + "\n"])
    fails(path, f"{path}:2: {message}")


@pytest.mark.parametrize(
    "where, field",
    [("reply", "nodes[1].message.content"), ("info", "info.note"), ("data", "task.data.prompt")],
)
def test_lone_surrogate(tmp_path, where, field):
    row = trace_row(1)
    if where == "reply":
        row["nodes"][1]["message"]["content"] = "<score>1</score> \ud800"
    elif where == "info":
        row["info"]["note"] = "x\udc00"
    else:
        row["task"]["data"]["prompt"] = "q\ud834"
    path = write_lines(tmp_path, [json.dumps(row) + "\n"])  # ensure_ascii writes the \uXXXX escape
    fails(path, f"{path}:1:", f"field '{field}'", "lone surrogate")


def test_v0_row_checks(tmp_path):
    row = {
        "prompt": [{"role": "user", "content": "q"}],
        "completion": [{"role": "assistant", "content": "x\ud800"}],
        "reward": 1.0,
        "info": {"task_data": {"idx": 0, "benchmark": "medfact-bench"}},
    }
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(row) + "\n")
    fails(path, f"{path}:1:", "field 'completion'", "lone surrogate")
    row["completion"] = "ok"
    row["info"]["task_data"]["idx"] = "zero"
    path.write_text(json.dumps(row) + "\n")
    fails(path, f"{path}:1:", "field 'info.task_data.idx' is not an integer (got str)")


# ---------------------------------------------------------------------------- error messages


def test_provider_error_without_message_is_described(tmp_path):
    """verifiers records a connection reset as ProviderError with an empty message and
    status 503 (httpx.ReadError('')); the record still says what kind of failure it was."""
    errors = [{"type": "ProviderError", "message": "", "status_code": 503}]
    timeout = [{"type": "ProviderError", "message": "", "status_code": 504}]
    other = [{"type": "HarnessError", "message": "  "}]
    path = write_lines(
        tmp_path,
        [
            json.dumps(trace_row(i, reply=None, errors=e)) + "\n"
            for i, e in enumerate([errors, timeout, other])
        ],
    )
    messages = [r.error_message for r in iter_traces(path)]
    assert messages[0].startswith(
        "ProviderError: no detail recorded (503: the connection to the endpoint failed"
    )
    assert "reset" in messages[0]
    assert messages[1] == "ProviderError: no detail recorded (504: the request to the endpoint timed out)"
    assert messages[2] == "HarnessError: no detail recorded"


def test_provider_error_with_message_is_kept(tmp_path):
    errors = [{"type": "ProviderError", "message": "upstream 500: boom", "status_code": 500}]
    path = write_lines(tmp_path, [json.dumps(trace_row(0, reply=None, errors=errors)) + "\n"])
    assert next(iter_traces(path)).error_message == "ProviderError: upstream 500: boom"


# ---------------------------------------------------------------------------- through the CLI


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> list[str]:
    """Real MedFact-Bench trace lines: `medhal score` on three rows of ours."""
    from tests.medfact_bench.fixtures import rows
    from tests.tables import write_jsonl

    tmp = tmp_path_factory.mktemp("scored")
    dataset = write_jsonl(tmp / "medfact.jsonl", rows(3))
    predictions = tmp / "predictions.jsonl"
    predictions.write_text(
        "".join(json.dumps({"idx": i, "reply": "<score>2</score>"}) + "\n" for i in range(3))
    )
    proc = medhal_main(
        "score",
        "medfact-bench",
        "--predictions",
        str(predictions),
        "--dataset-path",
        str(dataset),
        "-o",
        str(tmp / "out"),
    )
    assert proc.returncode == 0, proc.stderr
    return (tmp / "out" / "traces.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)


@pytest.mark.parametrize("case", ["deep", "long-idx", "utf16-line", "bad-shard"])
def test_report_exits_2_with_one_line(tmp_path, scored, case):
    lines: list[str | bytes] = list(scored)
    if case == "bad-shard":
        row = json.loads(lines[1])
        row["task"]["data"]["selection"]["shard"] = "one of two"
        lines[1], fragments = json.dumps(row) + "\n", ("field 'task.data.selection.shard'",)
    elif case == "deep":
        lines[1], fragments = "[" * 100_000 + "\n", ("nested too deeply",)
    elif case == "long-idx":
        lines[1] = (
            lines[1]
            .replace('"idx":1,', '"idx":' + "9" * 5001 + ",")
            .replace('"idx": 1,', '"idx": ' + "9" * 5001 + ",")
        )
        assert "9" * 5001 in lines[1]
        fragments = ("field 'task.data.idx'", "5001 digits")
    else:
        lines[1], fragments = lines[1].encode("utf-16-le"), ("not valid JSON", "expected UTF-8")
    path = write_lines(tmp_path, lines)
    proc = medhal_main("report", str(path), "-o", str(tmp_path / "report"))
    clean_exit_2(proc, f"{path}:2:", *fragments)
    assert not (tmp_path / "report" / "report.json").exists()


# ------------------------------------------------------- rewards and weights: finite and bounded


def medfact_traces(tmp_path: Path) -> list[dict]:
    """The six MedFact-Bench demo items as `medhal score` writes them (one right)."""
    from tests.medfact_bench.fixtures import score_demo

    run = score_demo(["<score>2</score>"] + ["no score"] * 5, tmp_path / "scored", "--no-plots")
    return [json.loads(line) for line in (run / "traces.jsonl").read_text().splitlines()]


def reported(tmp_path: Path, rows: list[dict]) -> subprocess.CompletedProcess:
    run = tmp_path / "run"
    run.mkdir(exist_ok=True)
    # json writes NaN and Infinity as the bare words (not JSON, but what Python writes).
    (run / "traces.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return medhal_main("report", str(run), "--no-plots", "--max-error-rate", "1", "--allow-incomplete")


@pytest.mark.parametrize(
    "value",
    [float("nan"), float("inf"), float("-inf"), 1e300, -2e12],
    ids=["nan", "inf", "-inf", "1e300", "-2e12"],
)
def test_a_reward_that_is_not_a_bounded_number_is_bad_input(tmp_path, value):
    # Issue 33 item 5: a NaN reward was read as 0 (the mean dropped, the run "complete", exit
    # 0); rewards near the float limit overflowed the mean ("Out of range float values are not
    # JSON compliant", naming nothing). Both are one line naming file, line and field.
    rows = medfact_traces(tmp_path)
    rows[3]["rewards"]["accuracy"] = value
    clean_exit_2(reported(tmp_path, rows), "traces.jsonl:4:", "field 'rewards.accuracy'", "10^12")


def test_a_metric_that_is_not_a_bounded_number_is_bad_input(tmp_path):
    rows = medfact_traces(tmp_path)
    rows[1]["metrics"]["correct_authors"] = 1e308
    clean_exit_2(reported(tmp_path, rows), "traces.jsonl:2:", "field 'metrics.correct_authors'")


@pytest.mark.parametrize(
    ("part", "value"),
    [
        ("weight", float("nan")),
        ("weight", float("inf")),
        ("score", float("-inf")),
        ("score", 1e200),
        ("weight", 1e13),
    ],
)
def test_a_0_4_reward_whose_score_or_weight_is_not_a_bounded_number_is_bad_input(tmp_path, part, value):
    from tests.medhal.test_compare_identity import as_episode

    episodes = [as_episode(row) for row in medfact_traces(tmp_path)]
    episodes[2]["traces"][0]["rewards"]["accuracy"][part] = value
    clean_exit_2(reported(tmp_path, episodes), "traces.jsonl:3:", f"field 'rewards.accuracy.{part}'")


def test_a_0_4_reward_whose_product_overflows_is_bad_input(tmp_path):
    # score and weight each within the bound, their product beyond it.
    from tests.medhal.test_compare_identity import as_episode

    episodes = [as_episode(row) for row in medfact_traces(tmp_path)]
    episodes[0]["traces"][0]["rewards"]["accuracy"] = {"score": 1e9, "weight": 1e9}
    clean_exit_2(reported(tmp_path, episodes), "traces.jsonl:1:", "field 'rewards.accuracy'")


def test_a_v0_reward_that_is_not_a_number_is_bad_input(tmp_path):
    row = {
        "prompt": [{"role": "user", "content": "q"}],
        "completion": [{"role": "assistant", "content": "x"}],
        "reward": float("nan"),
        "info": {"task_data": {"idx": 0, "benchmark": "medfact-bench"}},
    }
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(row) + "\n")
    fails(path, f"{path}:1:", "field 'reward'")


def test_rewards_at_the_bound_are_summed_without_overflow(tmp_path):
    rows = medfact_traces(tmp_path)
    for row in rows:
        row["rewards"] = {"accuracy": 1e12, "bonus": 1e12}
    proc = reported(tmp_path, rows)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["rollouts"]["mean_reward"] == 2e12


# ------------------------------------------------------- a 0.4 episode's errors: linear work


class CountingError(dict):
    """An error object that counts how often it is compared for equality."""

    comparisons = 0

    def __eq__(self, other: object) -> bool:
        CountingError.comparisons += 1
        return dict.__eq__(self, other)

    __hash__ = None  # type: ignore[assignment]


def test_merging_an_episodes_errors_with_its_traces_is_linear():
    # Issue 33 item 13: an episode lists its errors, and so does its trace; merging them by
    # list membership compared each of the episode's with each of the trace's (20,000 each:
    # 21 s; 80,000: 299 s). The work per error must not grow with their number.
    from medhal.reports.traces import _from_episode

    n = 400
    own = [CountingError(type="ProviderError", message=f"trace error {i}") for i in range(n)]
    around = [CountingError(type="EnvError", message=f"episode error {i}") for i in range(n)]
    around += [CountingError(own[i]) for i in range(0, n, 2)]  # half of the trace's, listed again
    trace = {**trace_row(0, reply=None), "errors": own}
    episode = {"task": trace["task"], "traces": [trace], "errors": around}
    CountingError.comparisons = 0
    record = _from_episode(episode, "traces.jsonl:1", "traces.jsonl", 1)
    assert CountingError.comparisons <= 10 * n, CountingError.comparisons
    assert [e["message"] for e in record.errors] == [
        *(f"trace error {i}" for i in range(n)),
        *(f"episode error {i}" for i in range(n)),
    ]


def test_a_0_3_0_episode_records_its_task_on_its_trace_only(tmp_path):
    # verifiers 0.3.0 writes an episode as {id, env, ok, errors, traces}: no top-level task
    # (0.3.1 and 0.4 repeat it there). It is the same rollout, read from its trace.
    trace = {**trace_row(7), "errors": [{"type": "HarnessError", "message": "agent timeout"}]}
    episode = {"id": "e", "env": {"id": "medfact-bench"}, "ok": False, "errors": [], "traces": [trace]}
    (record,) = iter_traces(write_lines(tmp_path, [json.dumps(episode) + "\n"]))
    assert (record.data["idx"], record.reply, record.rewards) == (7, "<score>1</score>", {"accuracy": 1.0})
    assert record.errors == [{"type": "HarnessError", "message": "agent timeout"}]
    bare = {"id": "e", "ok": True, "errors": [], "traces": [trace]}  # neither task nor env: not an episode
    fails(write_lines(tmp_path, [json.dumps(bare) + "\n"]), "traces.jsonl:1", "neither a verifiers trace")
