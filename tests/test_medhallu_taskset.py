"""Loading MedHallu: both configs from the pinned Hub id and from local files, pairing,
filters, options, row validation, and scoring a task."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import datasets
import pytest
from pydantic import ValidationError

import medhallu
from medhal.datasets import DatasetError
from medhal.task import score_reply
from medhallu.taskset import DATASET_ID, REVISION, MedHalluConfig, MedHalluTaskset
from tests.tables import read_jsonl, write_jsonl

pytest_plugins = ["tests.medhallu_fixtures"]

DEMO = Path(medhallu.DEMO_OPTIONS["dataset_path"])


def load(**options) -> list:
    return MedHalluTaskset(MedHalluConfig(id="medhallu", **options)).load()






@pytest.fixture
def labeled(shared_data) -> Path:
    return shared_data / "medhallu" / "pqa_labeled.jsonl"


def test_shared_pqa_labeled_gives_two_items_per_row(official_asset, labeled):
    rows = read_jsonl(labeled)
    tasks = load(dataset_path=str(labeled))
    assert len(rows) == 1000 and len(tasks) == 2000
    assert [t.data.idx for t in tasks] == list(range(2000))
    assert Counter(r["Difficulty Level"] for r in rows) == {"hard": 408, "medium": 318, "easy": 274}
    assert Counter(t.data.difficulty for t in tasks) == {"hard": 816, "medium": 636, "easy": 548}
    for number, row in enumerate(rows):
        factual, hallucinated = tasks[2 * number].data, tasks[2 * number + 1].data
        assert (factual.label, hallucinated.label) == ("factual", "hallucinated")
        assert factual.answer == row["Ground Truth"] and hallucinated.answer == row["Hallucinated Answer"]
        assert factual.source_id == hallucinated.source_id == f"pqa_labeled:{number}"
        assert factual.difficulty == hallucinated.difficulty == row["Difficulty Level"]
        assert factual.category == hallucinated.category == row["Category of Hallucination"]
        assert f"\nQuestion: {row['Question']}\nAnswer: {factual.answer}\n" in factual.prompt
        assert "World Knowledge" not in factual.prompt and factual.system_prompt is None
    provenance = tasks[0].data.provenance
    assert provenance["path"] == str(labeled) and len(provenance["sha256"]) == 64
    assert provenance["config"] == "pqa_labeled" and provenance["split"] == "eval"
    assert provenance["prompt"]["variant"] == "official (not sure offered)"
    assert provenance["prompt"]["asset"]["url"].endswith("/Detection/detection_vllm_notsurecase.py")
    assert provenance["prompt"]["asset"]["sha256"] == json.loads(official_asset["MEDHAL_ASSET_SHA256"]).popitem()[1]
    assert all(t.data.provenance == provenance for t in tasks)


def test_knowledge_and_binary_variant(official_asset, labeled):
    row = read_jsonl(labeled)[0]
    task = load(dataset_path=str(labeled), knowledge=True, not_sure=False, difficulty=row["Difficulty Level"])[0]
    assert f"\nWorld Knowledge: {row['Knowledge']!s}\nQuestion: {row['Question']}\n" in task.data.prompt
    assert "`2`" not in task.data.prompt and not task.data.not_sure_offered
    assert task.data.provenance["prompt"] | {"asset": None} == {
        "variant": "derived: not-sure sentences removed",
        "knowledge": True,
        "layout": "one user turn: system prompt + ' ' + user template",
        "asset": None,
    }


def test_pairing_one_is_seeded_per_row_and_independent_of_order(invented_asset, labeled, tmp_path):
    rows = read_jsonl(labeled)
    tasks = load(dataset_path=str(labeled), pairing="one", seed=7)
    assert len(tasks) == 1000 and [t.data.idx for t in tasks] == list(range(1000))
    assert [int(t.data.source_id.split(":")[1]) for t in tasks] == list(range(1000))
    assert 400 < Counter(t.data.label for t in tasks)["hallucinated"] < 600
    assert tasks[0].data.provenance["seed"] == 7
    by_question = {t.data.question: t.data.label for t in tasks}
    assert len(by_question) == len({r["Question"] for r in rows})
    reversed_file = write_jsonl(tmp_path / "reversed.jsonl", rows[::-1])
    assert {t.data.question: t.data.label for t in load(dataset_path=str(reversed_file), pairing="one", seed=7)} == by_question
    assert [t.data.label for t in load(dataset_path=str(labeled), pairing="one", seed=7)] == [t.data.label for t in tasks]
    other_seed = [t.data.label for t in load(dataset_path=str(labeled), pairing="one", seed=8)]
    assert other_seed != [t.data.label for t in tasks]


def test_difficulty_filter_keeps_row_ids(invented_asset, labeled):
    tasks = load(dataset_path=str(labeled), difficulty="hard")
    assert len(tasks) == 816 and {t.data.difficulty for t in tasks} == {"hard"}
    assert [t.data.idx for t in tasks] == list(range(816))
    rows = read_jsonl(labeled)
    first_hard = next(i for i, r in enumerate(rows) if r["Difficulty Level"] == "hard")
    assert tasks[0].data.source_id == f"pqa_labeled:{first_hard}"


@pytest.mark.parametrize("config", ["pqa_labeled", "pqa_artificial"])
def test_both_configs_load_from_the_pinned_hub_id(invented_asset, monkeypatch, config):
    calls = []
    rows = read_jsonl(DEMO)

    def fake_load_dataset(path, name=None, split=None, revision=None):
        calls.append((path, name, split, revision))
        return datasets.Dataset.from_list(rows)

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    tasks = load(config=config)
    assert calls == [(DATASET_ID, config, "train", REVISION)]
    assert len(tasks) == 2 * len(rows)
    provenance = tasks[0].data.provenance
    assert (provenance["dataset"], provenance["config"], provenance["revision"]) == (DATASET_ID, config, REVISION)
    assert provenance["split"] == {"pqa_labeled": "eval", "pqa_artificial": "train"}[config]
    assert tasks[0].data.source_id == f"{config}:0"
    load(config=config, revision="abc123")
    assert calls[-1][3] == "abc123"


def test_pqa_artificial_from_a_local_file(invented_asset, tmp_path):
    path = write_jsonl(tmp_path / "pqa_artificial.jsonl", read_jsonl(DEMO))
    tasks = load(config="pqa_artificial", split="train", dataset_path=str(path))
    assert len(tasks) == 6 and tasks[0].data.provenance["split"] == "train"


def test_parquet_file_with_knowledge_lists(invented_asset, tmp_path):
    path = tmp_path / "rows.parquet"
    datasets.Dataset.from_list(read_jsonl(DEMO)).to_parquet(str(path))
    tasks = load(dataset_path=str(path), knowledge=True)
    assert len(tasks) == 6 and f"\nContext: {read_jsonl(DEMO)[0]['Knowledge']!s}\n" in tasks[0].data.prompt


def test_demo_options_load(invented_asset):
    tasks = load(**medhallu.DEMO_OPTIONS)
    assert len(tasks) == 6
    assert Counter(t.data.difficulty for t in tasks) == {"easy": 2, "medium": 2, "hard": 2}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"config": "pqa_unlabeled"}, "config 'pqa_unlabeled' is not one of pqa_labeled, pqa_artificial"),
        ({"difficulty": "expert"}, "difficulty 'expert' is not one of all, easy, medium, hard"),
        ({"pairing": "three"}, "pairing"),
        ({"split": "train"}, "pqa_labeled is MedHallu's eval set, and using it for train would mix training and evaluation data; use config='pqa_artificial'"),
        ({"config": "pqa_artificial", "split": "eval"}, "use config='pqa_labeled' for split='eval'"),
        ({"not_sure_reward": 1.5}, "not_sure_reward 1.5 must lie in [0, 1]"),
        ({"not_sure": False, "not_sure_reward": 0.5}, "not_sure_reward is set but not_sure is false"),
    ],
)
def test_option_errors(options, message):
    with pytest.raises(ValidationError) as info:
        MedHalluConfig(id="medhallu", **options)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda r: r.pop("Hallucinated Answer"), "row 2 lacks column(s) Hallucinated Answer"),
        (lambda r: r.update({"Knowledge": "one string"}), "row 2 field 'Knowledge' must be a non-empty list of strings"),
        (lambda r: r.update({"Knowledge": []}), "row 2 field 'Knowledge' must be a non-empty list of strings"),
        (lambda r: r.update({"Ground Truth": "  "}), "row 2 field 'Ground Truth' is empty or not a string"),
        (lambda r: r.update({"Difficulty Level": "Hard"}), "row 2 field 'Difficulty Level' is 'Hard', not one of"),
    ],
)
def test_row_errors_name_file_row_and_field(invented_asset, tmp_path, edit, message):
    rows = read_jsonl(DEMO)
    edit(rows[1])
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(DatasetError) as info:
        load(dataset_path=str(path))
    assert str(info.value).startswith(f"{path}: {message}")


async def test_task_scores_a_reply(invented_asset):
    factual, hallucinated = load(**medhallu.DEMO_OPTIONS)[:2]
    trace = await score_reply(hallucinated, "<think>invented mechanism</think>1 (hallucinated)")
    assert trace.rewards["detection"] == 1.0
    assert trace.metrics == {"correct": 1.0, "parsed": 1.0, "not_sure": 0.0}
    assert (trace.info["verdict"], trace.info["pred_label"]) == (1, "hallucinated")
    trace = await score_reply(factual, "not sure")
    assert trace.rewards["detection"] == 0.0 and trace.metrics["not_sure"] == 1.0 and trace.info["pred_label"] == "not_sure"
    trace = await score_reply(factual, "<think>never closed")
    assert trace.rewards["detection"] == 0.0 and trace.metrics["parsed"] == 0.0 and trace.info["pred_label"] is None


async def test_not_sure_reward_option(invented_asset):
    factual = load(**medhallu.DEMO_OPTIONS, not_sure_reward=0.25)[0]
    assert (await score_reply(factual, "2")).rewards["detection"] == 0.25
    binary = load(**medhallu.DEMO_OPTIONS, not_sure=False)[0]
    trace = await score_reply(binary, "2")
    assert trace.rewards["detection"] == 0.0 and trace.metrics["parsed"] == 0.0
