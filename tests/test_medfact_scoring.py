import json

import pytest

from medfact_bench.scoring import parse_reply, strict_format
from medfact_bench.taskset import MedFactConfig, MedFactTask, MedFactTaskset
from medhal.datasets import DatasetError
from medhal.task import score_reply
from tests.medfact_fixtures import rows
from tests.tables import write_jsonl, write_parquet


@pytest.mark.parametrize(
    "reply, score, label",
    [
        ("<think>a</think><score>2</score>", 2, "SUPPORT"),
        ("<think>a</think>\n<score> 1 </score>", 1, "SUPPORT"),
        ("<score>0</score>", 0, "NEI"),
        ("<score>-1</score>", -1, "CONTRADICT"),
        ("<SCORE>-2</SCORE>", -2, "CONTRADICT"),
        ("<score>+2</score>", 2, "SUPPORT"),
        ("<score>3</score>", None, None),
        ("<score>-3</score>", None, None),
        ("<score>1.5</score>", None, None),
        ("<score>1.0</score>", None, None),
        ("<score>two</score>", None, None),
        ("<score></score>", None, None),
        ("<score>1", None, None),
        ("The score is 2", None, None),
        ("", None, None),
        ("<score>-2</score><score>2</score>", -2, "CONTRADICT"),
        ("<think>maybe <score>1</score></think><score>-1</score>", 1, "SUPPORT"),
        ("<score>\n0\n</score>", 0, "NEI"),
    ],
)
def test_parse_first_score_block(reply, score, label):
    parsed = parse_reply(reply)
    assert parsed.score == score
    assert parsed.label == label


@pytest.mark.parametrize(
    "reply, ok",
    [
        ("<think>a</think><score>1</score>", True),
        ("  <think>a\nb</think>\n\n<score>1</score>\n", True),
        ("<score>1</score>", False),
        ("<think>a</think><score>1</score> extra", False),
        ("<think>a</think><think>b</think><score>1</score>", False),
        ("<think>a</think><score>1</score><score>2</score>", False),
        ("<score>1</score><think>a</think>", False),
        ("<think>a<score>1</score>", False),
    ],
)
def test_strict_format(reply, ok):
    assert strict_format(reply) is ok


def test_real_med_v1_outputs_parse(shared_data):
    outputs = [json.loads(l) for l in (shared_data / "medfact/medv1_l3b_outputs.jsonl").read_text().splitlines()]
    assert len(outputs) == 340
    parsed = [parse_reply(o["raw_output"]) for o in outputs]
    assert sum(p.score is not None for p in parsed) >= 330
    assert sum(strict_format(o["raw_output"]) for o in outputs) >= 330
    assert {p.label for p in parsed} <= {"SUPPORT", "NEI", "CONTRADICT", None}


def load(path, **options):
    return MedFactTaskset(MedFactConfig(dataset_path=str(path), **options)).select()


def test_loads_jsonl_and_parquet_identically(tmp_path):
    data = rows(20)
    a = load(write_jsonl(tmp_path / "d.jsonl", data))
    b = load(write_parquet(tmp_path / "d.parquet", data))
    assert [t.data.model_dump(exclude={"provenance"}) for t in a] == [t.data.model_dump(exclude={"provenance"}) for t in b]
    assert [t.data.idx for t in a] == list(range(20))
    first = a[0].data
    assert first.system_prompt == data[0]["system_prompt"] and first.prompt == data[0]["user_prompt"]
    assert first.provenance["sha256"] and first.provenance["dataset"] == "ncbi/MedFact-Bench"


def test_subset_and_duplicates_are_kept(tmp_path):
    data = rows(10) + rows(10)  # exact duplicate rows are real in MedFact-Bench
    tasks = load(write_jsonl(tmp_path / "d.jsonl", data), subset="healthver")
    assert len(tasks) == 4
    assert [t.data.idx for t in tasks] == [0, 1, 2, 3]
    assert {t.data.dataset for t in tasks} == {"healthver"}


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda r: r[3].pop("label"), "row 4 lacks column"),
        (lambda r: r[2].update(label="TRUE"), "row 3 field 'label' is 'TRUE'"),
        (lambda r: r[1].update(dataset="medqa"), "row 2 field 'dataset' is 'medqa'"),
        (lambda r: r[5].update(user_prompt="  "), "row 6 field 'user_prompt' is empty"),
        (lambda r: r[0].update(claim=None), "row 1 field 'claim' is empty or not a string"),
        (lambda r: r[7].update(system_prompt="other"), "exactly one distinct system_prompt, found 2"),
    ],
)
def test_bad_rows_are_named(tmp_path, mutate, message):
    data = rows(10)
    mutate(data)
    path = write_jsonl(tmp_path / "bad.jsonl", data)
    with pytest.raises(DatasetError, match=message) as e:
        load(path)
    assert str(path) in str(e.value)


def test_options_are_validated():
    with pytest.raises(ValueError, match="evaluation-only"):
        MedFactConfig(split="train")
    with pytest.raises(ValueError, match="subset 'pubmedqa' is not one of all, scifact"):
        MedFactConfig(subset="pubmedqa")
    with pytest.raises(DatasetError, match="does not exist"):
        load("/nonexistent/file.parquet")


async def test_task_scoring_records_parse_on_trace(tmp_path):
    task = load(write_jsonl(tmp_path / "d.jsonl", rows(3)))[1]  # gold NEI
    trace = await score_reply(task, "<think>no info</think><score>0</score>")
    assert trace.rewards == {"accuracy": 1.0}
    assert trace.metrics == {"parseable_score": 1.0, "strict_format": 1.0}
    assert trace.info == {"parsed_score": 0, "pred_label": "NEI"}
    wrong = await score_reply(task, "I think it supports it: 2")
    assert wrong.rewards == {"accuracy": 0.0} and wrong.info["pred_label"] is None
    assert wrong.metrics == {"parseable_score": 0.0, "strict_format": 0.0}
    assert isinstance(task, MedFactTask)
