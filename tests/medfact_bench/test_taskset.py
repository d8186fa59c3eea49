"""Loading MedFact-Bench tasks (`medfact_bench.taskset`, `rows`, `prompts`) and scoring a
reply through a task, as a rollout does."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from pydantic import ValidationError

from medfact_bench.taskset import MedFactConfig, MedFactTask, MedFactTaskset
from medhal.kit.datasets import DatasetError
from medhal.kit.lines import reward_values
from medhal.kit.task import prompt_messages, score_reply
from tests.medfact_bench.fixtures import rows
from tests.tables import write_jsonl, write_parquet


def load(path, **options) -> list[MedFactTask]:
    return MedFactTaskset(MedFactConfig(dataset_path=str(path), **options)).select()


def test_loads_jsonl_and_parquet_identically(tmp_path):
    data = rows(20)
    a = load(write_jsonl(tmp_path / "d.jsonl", data))
    b = load(write_parquet(tmp_path / "d.parquet", data))

    def comparable(task):
        return task.data.model_dump(exclude={"provenance", "selection"})

    assert [comparable(t) for t in a] == [comparable(t) for t in b]
    assert [t.data.idx for t in a] == list(range(20))
    first = a[0].data
    assert (first.benchmark, first.source_id, first.dataset, first.label) == (
        "medfact-bench",
        "scifact:0",
        "scifact",
        "SUPPORT",
    )
    assert (a[7].data.source_id, a[7].data.dataset, a[7].data.label) == ("medaesqa:7", "medaesqa", "NEI")
    assert first.claim == "Drug 0 lowers blood pressure."
    assert first.provenance["sha256"] and first.provenance["dataset"] == "ncbi/MedFact-Bench"
    assert first.provenance["path"] == str(tmp_path / "d.jsonl")
    assert first.selection["n_expected"] == 20


def test_prompt_is_the_rows_own_system_and_user_prompt(tmp_path):
    """The dataset's system prompt is sent unchanged, byte for byte, and the row's user
    prompt as the user turn: no prompt of ours is added."""
    data = rows(3)
    data = [{**r, "system_prompt": " Exact\tbytes \u2010 kept \n"} for r in data]
    task = load(write_jsonl(tmp_path / "d.jsonl", data))[2]
    messages = prompt_messages(task.data)
    assert [(m.role, m.content) for m in messages] == [
        ("system", " Exact\tbytes \u2010 kept \n"),
        (
            "user",
            "[item 2]\nArticle:\nTrial 2 found an effect of size 2.\n\nClaim:\nDrug 2 lowers blood pressure.",
        ),
    ]


def test_subset_and_duplicates_are_kept(tmp_path):
    data = rows(10) + rows(10)  # exact duplicate rows are real in MedFact-Bench
    tasks = load(write_jsonl(tmp_path / "d.jsonl", data), subset="healthver")
    # healthver is i % 5 == 1: rows 1 and 6 of each copy, at file rows 1, 6, 11 and 16.
    assert [t.data.idx for t in tasks] == [0, 1, 2, 3]
    assert [t.data.source_id for t in tasks] == ["healthver:1", "healthver:6", "healthver:11", "healthver:16"]
    assert [t.data.label for t in tasks] == [
        "NEI",
        "SUPPORT",
        "NEI",
        "SUPPORT",
    ]  # rows 1 and 6 (1 % 3, 6 % 3), twice
    assert tasks[0].data.prompt == tasks[2].data.prompt  # the repeated row is its own task


def test_a_component_without_rows_is_an_error(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", rows(4))  # components scifact..pubmedqa-fact, no bioasq-fact
    with pytest.raises(DatasetError, match="no rows of component 'bioasq-fact'") as e:
        load(path, subset="bioasq-fact")
    assert str(path) in str(e.value)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda r: r[3].pop("label"), "row 4 lacks column"),
        (lambda r: r[2].update(label="TRUE"), "row 3 field 'label' is 'TRUE'"),
        (lambda r: r[2].update(label="support"), "row 3 field 'label' is 'support'"),
        (lambda r: r[1].update(dataset="medqa"), "row 2 field 'dataset' is 'medqa'"),
        (lambda r: r[5].update(user_prompt="  "), "row 6 field 'user_prompt' is empty"),
        (lambda r: r[0].update(claim=None), "row 1 field 'claim' is empty or not a string"),
        (lambda r: r[4].update(source=3), "row 5 field 'source' is empty or not a string"),
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


@pytest.mark.parametrize(
    "options, field",
    [
        ({"split": "train"}, "split"),
        ({"subset": "pubmedqa"}, "subset"),
        ({"parser": "lenient"}, "parser"),
        ({"invalid_reward": 0.5}, "invalid_reward"),
    ],
)
def test_bad_options_are_refused(options, field):
    with pytest.raises(ValidationError) as e:
        MedFactConfig(**options)
    assert [err["loc"] for err in e.value.errors()] == [(field,)]


def test_options_default_and_missing_file():
    config = MedFactConfig()
    assert (config.subset, config.split, config.parser, config.dataset_path) == (
        "all",
        "test",
        "medhal",
        None,
    )
    with pytest.raises(DatasetError, match="does not exist"):
        load("/nonexistent/file.parquet")


@pytest.mark.parametrize("parser", ["medhal", "authors", "strict"])
def test_parser_option_reaches_every_task(tmp_path, parser):
    tasks = load(write_jsonl(tmp_path / "d.jsonl", rows(4)), parser=parser)
    assert {t.data.parser for t in tasks} == {parser}
    assert {t.data.provenance["parser"] for t in tasks} == {parser}
    assert {t.data.provenance["options"]["parser"] for t in tasks} == {parser}


@pytest.mark.parametrize(
    "parser, reward, correct, parsed, label",
    # Gold NEI. medhal reads 0 (NEI, after the reasoning), the authors 1 (SUPPORT, the first
    # block of the raw reply), strict nothing (two score tags).
    [
        ("medhal", 1.0, 1.0, 1.0, "NEI"),
        ("authors", 0.0, 0.0, 1.0, "SUPPORT"),
        ("strict", 0.0, 0.0, 0.0, None),
    ],
)
async def test_task_scores_every_convention_and_rewards_its_own(
    tmp_path, parser, reward, correct, parsed, label
):
    task = load(write_jsonl(tmp_path / "d.jsonl", rows(3)), parser=parser)[1]
    assert task.data.label == "NEI"
    trace = await score_reply(task, "<think>first <score>1</score></think><score>0</score>")
    assert reward_values(trace) == {"accuracy": reward}
    assert trace.metrics == {
        "correct_medhal": 1.0,
        "parsed_medhal": 1.0,
        "correct_authors": 0.0,
        "parsed_authors": 1.0,
        "correct_strict": 0.0,
        "parsed_strict": 0.0,
        "correct": correct,
        "parsed": parsed,
    }
    assert trace.info == {
        "readings": {"medhal": "NEI", "authors": "SUPPORT", "strict": None},
        "scores": {"medhal": 0, "authors": 1, "strict": None},
        "parsed_score": {"medhal": 0, "authors": 1, "strict": None}[parser],
        "pred_label": label,
    }


async def test_unreadable_reply_earns_nothing(tmp_path):
    task = load(write_jsonl(tmp_path / "d.jsonl", rows(3)))[0]
    trace = await score_reply(task, "I think the article supports the claim strongly.")
    assert reward_values(trace) == {"accuracy": 0.0}
    assert trace.info["readings"] == {"medhal": None, "authors": None, "strict": None}
    assert trace.info["pred_label"] is None
    assert trace.metrics["parsed"] == 0.0


async def test_invalid_reward_option(tmp_path):
    """Only a reply without a readable score earns invalid_reward; the option is recorded."""
    task = load(write_jsonl(tmp_path / "d.jsonl", rows(3)), invalid_reward=-0.5)[0]
    assert reward_values(await score_reply(task, "I think the article supports the claim.")) == {
        "accuracy": -0.5
    }
    other = "<score>-2</score>" if task.data.label != "CONTRADICT" else "<score>2</score>"
    assert reward_values(await score_reply(task, other)) == {"accuracy": 0.0}
    assert task.data.provenance["options"]["invalid_reward"] == -0.5


async def test_every_loaded_task_validates(tmp_path):
    tasks = load(write_jsonl(tmp_path / "d.jsonl", rows(6)))
    assert {t.data.label for t in tasks} == {"SUPPORT", "NEI", "CONTRADICT"}
    assert [await t.validate() for t in tasks] == [True] * 6


def test_importing_the_package_does_not_import_verifiers():
    """Reports and the CLI read the declaration and the report spec without verifiers."""
    code = (
        "import sys, json, medfact_bench; from medfact_bench import REPORT, DEMO_OPTIONS; "
        "import medfact_bench.benchmark, medfact_bench.replies, medfact_bench.scoring, medfact_bench.report; "
        "print(json.dumps(['verifiers' in sys.modules, REPORT.benchmark]))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [False, "medfact-bench"]
