"""Hostile predictions files for `medhal score`: one line naming file, line and field for
each, exit 2, never a traceback; an empty file is an error (an all-missing run is not a
result); and a failure never destroys a previous good traces.jsonl."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medhal.kit.predictions import PredictionError, read_predictions, write_traces
from tests.medfact_bench.fixtures import rows as medfact_rows
from tests.running import clean_exit_2, medhal_main, one_line
from tests.tables import write_jsonl

KNOWN = {0, 1, 2}


def fails(path: Path, *fragments: str) -> str:
    with pytest.raises(PredictionError) as e:
        read_predictions(path, KNOWN)
    return one_line(str(e.value), *fragments)


def line(idx, reply="<score>1</score>") -> str:
    return json.dumps({"idx": idx, "reply": reply}) + "\n"


def test_reads_good_predictions(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + (line(0) + "\n" + line(2, "caf\u00e9")).encode())
    assert read_predictions(path, KNOWN) == {0: "<score>1</score>", 2: "caf\u00e9"}


def test_utf16_file(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(line(0) + line(1), encoding="utf-16")
    fails(path, f"{path}:1:", "UTF-16", "expected UTF-8")


def test_non_utf8_byte(tmp_path):
    path = tmp_path / "p.jsonl"
    first = line(0).encode()
    path.write_bytes(first + b'{"idx": 1, "reply": "\xff"}\n')
    # offset: the first line, then '{"idx": 1, "reply": "' (21 bytes)
    fails(path, f"{path}:2:", f"byte 0xff at byte offset {len(first) + 21}", "expected UTF-8")


def test_deeply_nested(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(line(0) + '{"idx": 1, "reply": ' + "[" * 100_000 + "\n")
    fails(path, f"{path}:2:", "nested too deeply")


def test_idx_of_5001_digits(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(line(0) + '{"idx": ' + "1" * 5001 + ', "reply": "x"}\n')
    fails(path, f"{path}:2:", "field 'idx'", "a number with 5001 digits")


def test_duplicate_key(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(line(0) + '{"idx": 1, "reply": "a", "reply": "b"}\n')
    fails(path, f"{path}:2:", "field 'reply' appears more than once")


def test_reply_with_a_lone_surrogate(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(line(0) + line(1, "<score>1</score>\ud800"))  # json.dumps escapes it as \ud800
    fails(path, f"{path}:2:", "field 'reply'", "lone surrogate U+D800")


def test_long_idx_value_is_cut_in_the_message(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"idx": "7" * 500, "reply": "x"}) + "\n")
    message = fails(path, f"{path}:1:", "field 'idx' must be an integer")
    assert len(message) < len(str(path)) + 150


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_empty_file(tmp_path, text):
    path = tmp_path / "p.jsonl"
    path.write_text(text)
    fails(path, str(path), "no predictions")


# ---------------------------------------------------------------------------- medhal score


@pytest.fixture
def dataset(tmp_path) -> Path:
    return write_jsonl(tmp_path / "medfact.jsonl", medfact_rows(3))


def score(tmp_path: Path, dataset: Path, predictions: str, run=medhal_main):
    path = tmp_path / "predictions.jsonl"
    path.write_text(predictions, encoding="utf-8", errors="surrogatepass")
    out = tmp_path / "out"
    proc = run(
        "score", "medfact-bench", "--predictions", str(path), "--dataset-path", str(dataset), "-o", str(out)
    )
    return proc, path, out


def test_score_empty_predictions_exits_2(tmp_path, dataset):
    proc, path, _ = score(tmp_path, dataset, "")
    clean_exit_2(proc, str(path), "no predictions")


def test_score_failure_keeps_the_previous_traces(tmp_path, dataset):
    """A good run, then a run whose predictions are bad: the first traces.jsonl stays."""
    proc, _, out = score(tmp_path, dataset, line(0) + line(1) + line(2))
    assert proc.returncode == 0, proc.stderr
    before = (out / "traces.jsonl").read_bytes()
    assert len(before.splitlines()) == 3
    proc, path, out = score(tmp_path, dataset, line(0) + line(1, "\ud800"))
    clean_exit_2(proc, f"{path}:2:", "field 'reply'", "lone surrogate")
    assert (out / "traces.jsonl").read_bytes() == before
    assert not [p for p in out.iterdir() if ".tmp-" in p.name]


def test_write_traces_is_all_or_nothing(tmp_path, dataset):
    """A trace that cannot be written (its reply holds a lone surrogate, as a bad row or
    reply would give) fails the write before anything replaces the old file."""
    import asyncio

    from medhal.kit.lines import taskset_class, taskset_config_type
    from medhal.kit.predictions import score_tasks

    config = taskset_config_type("medfact-bench").model_validate(
        {"id": "medfact-bench", "dataset_path": str(dataset)}
    )
    tasks = taskset_class("medfact-bench")(config).select()
    traces = asyncio.run(
        score_tasks(tasks, {0: "<score>2</score>", 1: "bad \ud800", 2: "<score>0</score>"}, "m")
    )
    out = tmp_path / "run"
    out.mkdir()
    (out / "traces.jsonl").write_text("old good traces\n")
    with pytest.raises(PredictionError) as e:
        write_traces(traces, out)
    one_line(str(e.value), str(out / "traces.jsonl"), "idx 1")
    assert (out / "traces.jsonl").read_text() == "old good traces\n"
    assert sorted(p.name for p in out.iterdir()) == ["traces.jsonl"]
    path = write_traces([traces[0], traces[2]], out)
    assert [json.loads(x)["task"]["data"]["idx"] for x in path.read_text().splitlines()] == [0, 2]
