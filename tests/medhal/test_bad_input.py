"""Bad input, end to end through the command line: broken datasets for every benchmark
(`medhal score`, and `eval` once) and broken `traces.jsonl` files of every benchmark
(`medhal report`). Each must stop with exit code 2 and one clear line naming the file,
the line or row, and the field; never a traceback, never a partial report.

The traces are real: `medhal score` on each benchmark's bundled demo sample (our own
rows), so every row has exactly the shape `eval` writes for that benchmark.

`medhal` runs in this process through its `main` (argument parsing, error handling and
exit code included), which keeps some sixty cases fast; a few cases also run the
installed `medhal` command to cover the real entry point.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from med_halt.benchmark import DEMO_OPTIONS as MED_HALT_DEMO
from medfact_bench.benchmark import DEMO_OPTIONS as MEDFACT_DEMO
from medhallu.benchmark import DEMO_OPTIONS as MEDHALLU_DEMO
from tests.conftest import BIN, run_medhal
from tests.running import medhal_main
from tests.tables import read_csv, read_jsonl, write_csv, write_jsonl

DEMO = {"medfact-bench": MEDFACT_DEMO, "med-halt": MED_HALT_DEMO, "medhallu": MEDHALLU_DEMO}
REPLY = {
    "medfact-bench": "<think>the article agrees</think><score>2</score>",
    "med-halt": (
        '{"cop": "I do not know", "paper_title": "Unknown", "url": "Unknown", '
        '"correct_answer": "x", "is_answer_correct": "no"}'
    ),
    "medhallu": "1",
}
NEXT = {"medfact-bench": "med-halt", "med-halt": "medhallu", "medhallu": "medfact-bench"}


@pytest.fixture(scope="module")
def assets():
    """Every benchmark's pinned prompt assets, offline: the real upstream files in shared data."""
    shared = os.environ.get("MEDHAL_SHARED_DATA")
    if not shared:
        pytest.skip("the pinned prompt files come from MEDHAL_SHARED_DATA, which is not set")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEDHAL_ASSETS_DIR", shared)
        yield Path(shared)


def medhal(*args: str) -> subprocess.CompletedProcess:
    """`medhal ARGS` in this process (see `tests.running.medhal_main`)."""
    return medhal_main(*args)


def needs_assets(env_id: str, assets: Path) -> None:
    if env_id == "med-halt" and not (assets / "medhalt").exists():
        pytest.skip("Med-HALT's prompt files come from MEDHAL_SHARED_DATA, which is not set")


def score(
    env_id: str,
    out: Path,
    dataset_path: str | Path | None = None,
    replies: dict[int, str] | None = None,
    run=medhal,
    **options,
) -> tuple:
    """`medhal score` with the demo options (or another dataset file); returns the process
    and the traces file. Without `replies`, every task gets the benchmark's stock reply
    except idx 1, which is left without one (a MissingPrediction error row)."""
    demo = {**DEMO[env_id], **options}
    path = dataset_path or demo.pop("dataset_path")
    demo.pop("dataset_path", None)
    predictions = out.parent / f"{out.name}-predictions.jsonl"
    if replies is None:
        from medhal.kit.lines import taskset_class
        from medhal.kit.options import taskset_config

        tasks = taskset_class(env_id)(taskset_config(env_id, {**demo, "dataset_path": str(path)})).select()
        replies = {t.data.idx: REPLY[env_id] for t in tasks if t.data.idx != 1}
    predictions.write_text("".join(json.dumps({"idx": i, "reply": r}) + "\n" for i, r in replies.items()))
    args = [
        f"--taskset.{k.replace('_', '-')}={json.dumps(v) if not isinstance(v, str) else v}"
        for k, v in demo.items()
    ]
    proc = run(
        "score", env_id, "--predictions", str(predictions), "--dataset-path", str(path), "-o", str(out), *args
    )
    return proc, out / "traces.jsonl"


def assert_clean_error(proc, *fragments: str) -> str:
    """Exit 2, no traceback, one error line holding every fragment."""
    assert proc.returncode == 2, f"exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], f"{fragment!r} not in {lines[0]!r}"
    return lines[0]


# ---------------------------------------------------------------------------- traces.jsonl


@pytest.fixture(scope="module")
def traces(assets, tmp_path_factory) -> dict[str, list[str]]:
    """Each benchmark's scored demo traces, as lines."""
    out = {}
    tmp = tmp_path_factory.mktemp("scored")
    for env_id in DEMO:
        if env_id == "med-halt" and not (assets / "medhalt").exists():
            continue
        proc, path = score(env_id, tmp / env_id)
        assert proc.returncode == 0, proc.stderr
        out[env_id] = path.read_text(encoding="utf-8").splitlines(keepends=True)
        assert len(out[env_id]) >= 3
    return out


def lines_of(traces, env_id: str) -> list[str]:
    if env_id not in traces:
        pytest.skip(f"{env_id} traces need MEDHAL_SHARED_DATA")
    return list(traces[env_id])


def report(tmp_path: Path, lines: list[str] | bytes, run=medhal):
    (tmp_path / "run").mkdir()
    path = tmp_path / "run" / "traces.jsonl"
    if isinstance(lines, bytes):
        path.write_bytes(lines)
    else:
        path.write_text("".join(lines), encoding="utf-8")
    proc = run("report", str(path.parent), "-o", str(tmp_path / "report"), "--max-error-rate", "1")
    return proc, path


def no_report(tmp_path: Path) -> None:
    assert not (tmp_path / "report" / "report.json").exists(), "a partial report was written"


ENVS = list(DEMO)


@pytest.mark.parametrize("env_id", ENVS)
def test_good_traces_report(env_id, traces, tmp_path):
    lines = lines_of(traces, env_id)
    proc, _ = report(tmp_path, [*lines[:1], "\n", "  \n", *lines[1:]])  # blank lines are not rows
    assert proc.returncode == 0, proc.stderr
    rep = json.loads((tmp_path / "report" / "report.json").read_text())
    assert rep["n"] == len(lines) and rep["n_errors"] == 1  # the MissingPrediction row


@pytest.mark.parametrize("env_id", ENVS)
def test_truncated_last_line(env_id, traces, tmp_path):
    lines = lines_of(traces, env_id)
    lines[-1] = lines[-1][: len(lines[-1]) // 2]
    proc, path = report(tmp_path, lines, run=run_medhal if env_id == "medfact-bench" else medhal)
    assert_clean_error(proc, f"{path}:{len(lines)}:", "not valid JSON", "truncated")
    no_report(tmp_path)


@pytest.mark.parametrize("env_id", ENVS)
@pytest.mark.parametrize(
    "value, kind", [("[1, 2]", "list"), ('"a string"', "str"), ("42", "int"), ("null", "NoneType")]
)
def test_non_object_line(env_id, value, kind, traces, tmp_path):
    lines = lines_of(traces, env_id)
    lines.insert(1, value + "\n")
    proc, path = report(tmp_path, lines)
    assert_clean_error(proc, f"{path}:2:", f"expected a JSON object, got {kind}")
    no_report(tmp_path)


@pytest.mark.parametrize("env_id", ENVS)
def test_row_from_another_benchmark(env_id, traces, tmp_path):
    lines = lines_of(traces, env_id)
    foreign = lines_of(traces, NEXT[env_id])[0]
    lines.insert(2, foreign)
    proc, path = report(tmp_path, lines)
    assert_clean_error(
        proc, f"{path}:3:", "field 'task.data.benchmark'", repr(NEXT[env_id]), "another benchmark"
    )
    no_report(tmp_path)


@pytest.mark.parametrize("env_id", ENVS)
@pytest.mark.parametrize("field", ["idx", "benchmark", "data"])
def test_missing_field(env_id, field, traces, tmp_path):
    lines = lines_of(traces, env_id)
    row = json.loads(lines[2])
    if field == "data":
        del row["task"]["data"]
        expected = "field 'task.data' is missing"
    else:
        del row["task"]["data"][field]
        expected = f"field 'task.data.{field}' is"
    lines[2] = json.dumps(row) + "\n"
    proc, path = report(tmp_path, lines)
    assert_clean_error(proc, f"{path}:3:", expected)
    no_report(tmp_path)


@pytest.mark.parametrize("env_id", ENVS)
def test_scored_row_without_its_metric(env_id, traces, tmp_path):
    lines = lines_of(traces, env_id)
    row = json.loads(lines[0])
    assert not row["errors"]
    row["rewards"], row["metrics"] = {}, {}
    lines[0] = json.dumps(row) + "\n"
    proc, path = report(tmp_path, lines)
    assert_clean_error(proc, f"{path}:1:", "field 'metrics.", "is missing", "was it scored")


@pytest.mark.parametrize("env_id", ENVS)
def test_non_utf8_line(env_id, traces, tmp_path):
    lines = lines_of(traces, env_id)
    raw = (
        b"".join(line.encode() for line in lines[:2])
        + b'{"task": "\xff\xfe"}\n'
        + b"".join(line.encode() for line in lines[2:])
    )
    proc, path = report(tmp_path, raw)
    assert_clean_error(proc, f"{path}:3:", "not valid JSON")


def test_empty_file_and_missing_file(tmp_path):
    proc, path = report(tmp_path, [], run=run_medhal)
    assert_clean_error(proc, str(path), "no rollouts")
    proc = medhal("report", str(tmp_path / "nowhere"))
    assert_clean_error(proc, str(tmp_path / "nowhere"), "no such file")


# ---------------------------------------------------------------------------- datasets


def medfact_rows() -> list[dict]:
    rows = read_jsonl(DEMO["medfact-bench"]["dataset_path"])
    assert len(rows) >= 5
    return rows


MEDFACT_BAD = [
    ("missing column", lambda r: r[2].pop("label"), "row 3 lacks column(s) label"),
    ("wrong label", lambda r: r[1].update(label="TRUE"), "row 2 field 'label' is 'TRUE', not one of"),
    ("unknown component", lambda r: r[0].update(dataset="medqa"), "row 1 field 'dataset' is 'medqa'"),
    ("empty string", lambda r: r[3].update(claim=""), "row 4 field 'claim' is empty"),
    ("blank string", lambda r: r[4].update(user_prompt="  \n "), "row 5 field 'user_prompt' is empty"),
    ("wrong type", lambda r: r[0].update(source=["a", "b"]), "row 1 field 'source' is empty or not a string"),
]


@pytest.mark.parametrize("case, mutate, message", MEDFACT_BAD, ids=[c[0] for c in MEDFACT_BAD])
def test_medfact_bad_rows(case, mutate, message, tmp_path):
    rows = medfact_rows()
    mutate(rows)
    path = write_jsonl(tmp_path / "medfact.jsonl", rows)
    proc, _ = score(
        "medfact-bench",
        tmp_path / "out",
        path,
        replies={},
        run=run_medhal if case == "wrong label" else medhal,
    )
    assert_clean_error(proc, str(path), message)


def test_medfact_bad_files(tmp_path):
    rows = medfact_rows()
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(rows[0]) + "\n" + json.dumps(rows[1])[:-7] + "\n")
    assert_clean_error(
        score("medfact-bench", tmp_path / "a", path, replies={})[0], f"{path}:2:", "not valid JSON"
    )
    path = tmp_path / "list.jsonl"
    path.write_text(json.dumps(rows[0]) + "\n[1, 2]\n")
    assert_clean_error(
        score("medfact-bench", tmp_path / "b", path, replies={})[0], str(path), "row 2 is a list"
    )
    path = write_csv(tmp_path / "medfact.csv", [{k: v for k, v in r.items() if k != "source"} for r in rows])
    assert_clean_error(
        score("medfact-bench", tmp_path / "c", path, replies={})[0], str(path), "row 1 lacks column(s) source"
    )
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows[2]["label"] = None
    path = tmp_path / "medfact.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    assert_clean_error(
        score("medfact-bench", tmp_path / "d", path, replies={})[0], str(path), "row 3 field 'label'"
    )
    path = tmp_path / "medfact.xlsx"
    path.write_text("x")
    assert_clean_error(
        score("medfact-bench", tmp_path / "e", path, replies={})[0],
        str(path),
        "unsupported dataset file type '.xlsx'",
    )


def test_medfact_duplicated_rows_are_kept_apart(tmp_path):
    """MedFact-Bench has no id column and repeats some (claim, article) pairs; a repeated
    row is its own item, never merged away."""
    rows = medfact_rows()
    path = write_jsonl(tmp_path / "dup.jsonl", rows + rows[:2])
    proc, traces_file = score("medfact-bench", tmp_path / "out", path)
    assert proc.returncode == 0, proc.stderr
    scored = read_jsonl(traces_file)
    assert len(scored) == len(rows) + 2
    assert sorted(r["task"]["data"]["idx"] for r in scored) == list(range(len(rows) + 2))
    assert len({r["task"]["data"]["source_id"] for r in scored}) == len(rows) + 2


def test_eval_names_the_bad_row(tmp_path):
    rows = medfact_rows()
    rows[1]["label"] = "TRUE"
    path = write_jsonl(tmp_path / "medfact.jsonl", rows)
    proc = subprocess.run(
        [
            str(BIN / "eval"),
            "medfact-bench",
            "--client.base-url",
            "http://127.0.0.1:9/v1",
            "--no-push",
            "--no-rich",
            "-m",
            "scripted",
            "-o",
            str(tmp_path / "run"),
            "--taskset.dataset-path",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0
    last = [line for line in proc.stderr.splitlines() if line.strip()][-1]
    assert str(path) in last and "row 2 field 'label' is 'TRUE'" in last, proc.stderr[-2000:]


def halt_file(tmp_path: Path, name: str, mutate) -> Path:
    rows = read_csv(Path(DEMO["med-halt"]["dataset_path"]) / f"{name}.csv")
    mutate(rows)
    if not rows[0]:
        raise AssertionError("mutation emptied the header row")
    return write_csv(tmp_path / f"{name}.csv", rows)


def drop_column(column: str):
    def mutate(rows: list[dict]) -> None:
        for row in rows:
            row.pop(column)

    return mutate


MED_HALT_BAD = [
    ("missing column", "reasoning_nota", drop_column("correct_answer"), "column 'correct_answer' is missing"),
    (
        "wrong split label",
        "reasoning_fake",
        lambda r: r[1].update(split_type="exam"),
        "row 2: field 'split_type' is 'exam'",
    ),
    (
        "empty question",
        "reasoning_FCT",
        lambda r: r[0].update(question=""),
        "row 1: field 'question' is empty",
    ),
    (
        "broken options",
        "reasoning_nota",
        lambda r: r[2].update(options="{'0': 'a'"),
        "row 3: field 'options' is not a Python dict literal",
    ),
    ("bad PMID", "IR_pmid2title", lambda r: r[1].update(PMID="PMC123"), "row 2: field 'PMID' is 'PMC123'"),
    (
        "wrong data type",
        "IR_title2pubmedlink",
        lambda r: r[0].update(pubmed_data_type="maybe"),
        "row 1: field 'pubmed_data_type' is 'maybe'",
    ),
]


@pytest.mark.parametrize("case, name, mutate, message", MED_HALT_BAD, ids=[c[0] for c in MED_HALT_BAD])
def test_med_halt_bad_rows(case, name, mutate, message, assets, tmp_path):
    needs_assets("med-halt", assets)
    path = halt_file(tmp_path, name, mutate)
    proc, _ = score("med-halt", tmp_path / "out", path, replies={}, subset=name)
    assert_clean_error(proc, str(path), message)


def test_med_halt_duplicated_id_is_named(assets, tmp_path):
    """Every Med-HALT row has its own uuid (none repeats in the real files), so a repeated
    id is a corrupt file: it must be named, not silently become a second item."""
    needs_assets("med-halt", assets)

    def duplicate(rows):
        rows[2]["id"] = rows[0]["id"]

    path = halt_file(tmp_path, "reasoning_nota", duplicate)
    proc, _ = score("med-halt", tmp_path / "out", path, replies={}, subset="reasoning_nota")
    assert_clean_error(proc, str(path), "row 3", "'id'")


def hallu_rows() -> list[dict]:
    rows = read_jsonl(DEMO["medhallu"]["dataset_path"])
    assert len(rows) >= 3
    return rows


MEDHALLU_BAD = [
    ("missing column", lambda r: r[1].pop("Ground Truth"), "row 2 lacks column(s) Ground Truth"),
    (
        "wrong label",
        lambda r: r[0].update({"Difficulty Level": "trivial"}),
        "row 1 field 'Difficulty Level' is 'trivial'",
    ),
    ("empty string", lambda r: r[2].update(Question=""), "row 3 field 'Question' is empty"),
    (
        "knowledge not a list",
        lambda r: r[0].update(Knowledge="one context"),
        "row 1 field 'Knowledge' must be a non-empty list",
    ),
]


@pytest.mark.parametrize("case, mutate, message", MEDHALLU_BAD, ids=[c[0] for c in MEDHALLU_BAD])
def test_medhallu_bad_rows(case, mutate, message, assets, tmp_path):
    rows = hallu_rows()
    mutate(rows)
    path = write_jsonl(tmp_path / "pqa_labeled.jsonl", rows)
    proc, _ = score("medhallu", tmp_path / "out", path, replies={})
    assert_clean_error(proc, str(path), message)


def test_medhallu_duplicated_rows_are_kept_apart(assets, tmp_path):
    """MedHallu rows have no id; a repeated row gives its own two items."""
    rows = hallu_rows()
    path = write_jsonl(tmp_path / "pqa_labeled.jsonl", rows + rows[:1])
    proc, traces_file = score("medhallu", tmp_path / "out", path)
    assert proc.returncode == 0, proc.stderr
    scored = read_jsonl(traces_file)
    assert len(scored) == 2 * (len(rows) + 1)
    assert len({(r["task"]["data"]["source_id"], r["task"]["data"]["label"]) for r in scored}) == len(scored)
