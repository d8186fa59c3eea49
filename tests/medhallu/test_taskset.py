"""Loading MedHallu: options (typed, refused when wrong), both configs from the pinned Hub
id and from local files, items and pairing, filters, provenance (data, prompt asset,
`parser`, options, `code` versions), `selection`, the demo prompt, row validation, and
scoring a task under each reading convention.

The prompt is the authors' real script, served from shared data (`assets_dir`)."""

from __future__ import annotations

import hashlib
import tomllib
from collections import Counter
from importlib import metadata
from pathlib import Path

import datasets
import pytest
from pydantic import ValidationError

import medhallu
from medhal.kit.datasets import DatasetError
from medhal.kit.lines import reward_values
from medhal.kit.task import score_reply
from medhallu.benchmark import DATASET, DEMO_ROWS, PROMPT_ASSET
from medhallu.taskset import MedHalluConfig
from tests.medhallu.fixtures import PINNED_SHA256, demo_options, labeled_rows, load, official_strings, select
from tests.tables import read_jsonl, write_jsonl, write_parquet


@pytest.fixture
def labeled(shared_data) -> Path:
    return labeled_rows(shared_data)


DATASET_ID = "UTAustin-AIHealth/MedHallu"
REVISION = "515060458a945c633debc6fd5baac7764416b724"
ROOT = Path(__file__).resolve().parents[2]


def declared_version(pyproject: Path) -> str:
    """The version a pyproject.toml declares (what the installed package reports)."""
    return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]


def test_declaration():
    assert (DATASET.id, DATASET.revision) == (DATASET_ID, REVISION)
    assert {"dataset_path": str(DEMO_ROWS), "config": "pqa_labeled"} == medhallu.DEMO_OPTIONS
    assert DEMO_ROWS.is_file()


def test_shared_pqa_labeled_gives_two_items_per_row(assets_dir, labeled):
    rows = read_jsonl(labeled)
    tasks = load(dataset_path=str(labeled))
    strings = official_strings(assets_dir)
    assert len(rows) == 1000 and len(tasks) == 2000
    assert [t.data.idx for t in tasks] == list(range(2000))
    assert Counter(r["Difficulty Level"] for r in rows) == {"hard": 408, "medium": 318, "easy": 274}
    assert Counter(t.data.difficulty for t in tasks) == {"hard": 816, "medium": 636, "easy": 548}
    for number, row in enumerate(rows):
        factual, hallucinated = tasks[2 * number].data, tasks[2 * number + 1].data
        assert (factual.label, hallucinated.label) == ("factual", "hallucinated")
        assert factual.answer == row["Ground Truth"] and hallucinated.answer == row["Hallucinated Answer"]
        assert factual.question == hallucinated.question == row["Question"]
        assert factual.source_id == hallucinated.source_id == f"pqa_labeled:{number}"
        assert factual.difficulty == hallucinated.difficulty == row["Difficulty Level"]
        assert factual.category == hallucinated.category == row["Category of Hallucination"]
        assert factual.benchmark == "medhallu" and factual.parser == "medhal"
        assert factual.not_sure_offered and factual.not_sure_reward == 0.0
        assert factual.system_prompt is None
    # the prompt: the authors' system prompt, a space, their template (strings from the JSON copy)
    row = rows[0]
    for task, answer in ((tasks[0], row["Ground Truth"]), (tasks[1], row["Hallucinated Answer"])):
        assert task.data.prompt == strings["system_prompt"] + " " + strings["create_prompt"].format(
            question=row["Question"], option1=answer
        )
    assert str(row["Knowledge"]) not in tasks[0].data.prompt
    provenance = tasks[0].data.provenance
    assert (
        provenance["path"] == str(labeled)
        and provenance["sha256"] == hashlib.sha256(labeled.read_bytes()).hexdigest()
    )
    assert (provenance["dataset"], provenance["config"], provenance["role"]) == (
        DATASET_ID,
        "pqa_labeled",
        {"role": "eval", "stated": False},
    )
    assert provenance["prompt"] == {
        "variant": "official (not sure offered)",
        "knowledge": False,
        "layout": "one user turn: system prompt + ' ' + user template",
        "asset": {"name": PROMPT_ASSET.name, "url": PROMPT_ASSET.url, "sha256": PINNED_SHA256},
    }
    assert provenance["parser"] == "medhal"
    assert provenance["options"] == {
        "config": "pqa_labeled",
        "split": None,
        "pairing": "both",
        "seed": 0,
        "knowledge": False,
        "not_sure": True,
        "not_sure_reward": 0.0,
        "invalid_reward": 0.0,
        "difficulty": "all",
        "answer_vocabulary": "digits",
        "role": None,
        "binary_reward": False,
        "parser": "medhal",
        "prompts": "pinned",
        "dataset_path": str(labeled),
        "revision": None,
    }
    assert provenance["code"] == {
        "environment": "medhallu",
        "environment_version": declared_version(ROOT / "environments" / "medhallu" / "pyproject.toml"),
        "medhal": declared_version(ROOT / "pyproject.toml"),
        "verifiers": metadata.version("verifiers"),
    }
    assert all(t.data.provenance == provenance for t in tasks)
    assert all(t.data.selection == {} for t in tasks)  # load() selects nothing; select() stamps it


def test_knowledge_and_binary_variant(assets_dir, labeled):
    strings = official_strings(assets_dir)
    row = read_jsonl(labeled)[0]
    task = load(
        dataset_path=str(labeled), knowledge=True, not_sure=False, difficulty=row["Difficulty Level"]
    )[0]
    assert f"{row['Knowledge']!s}\n" in task.data.prompt and task.data.prompt.startswith(
        strings["system_prompt"][:40]
    )
    assert "`2`" not in task.data.prompt and not task.data.not_sure_offered
    assert task.data.provenance["prompt"] == {
        "variant": "derived: not-sure sentences removed",
        "knowledge": True,
        "layout": "one user turn: system prompt + ' ' + user template",
        "asset": {"name": PROMPT_ASSET.name, "url": PROMPT_ASSET.url, "sha256": PINNED_SHA256},
    }
    with_sure = load(dataset_path=str(labeled), knowledge=True, difficulty=row["Difficulty Level"])[0]
    assert with_sure.data.prompt == strings["system_prompt"] + " " + strings[
        "create_prompt_withknowledge"
    ].format(question=row["Question"], option1=row["Ground Truth"], knowledge=str(row["Knowledge"]))


def test_pairing_one_is_seeded_per_row_and_independent_of_order(assets_dir, labeled, tmp_path):
    rows = read_jsonl(labeled)
    tasks = load(dataset_path=str(labeled), pairing="one", seed=7)
    assert len(tasks) == 1000 and [t.data.idx for t in tasks] == list(range(1000))
    assert [int(t.data.source_id.split(":")[1]) for t in tasks] == list(range(1000))
    assert 400 < Counter(t.data.label for t in tasks)["hallucinated"] < 600
    assert (
        tasks[0].data.provenance["options"]["seed"] == 7
        and tasks[0].data.provenance["options"]["pairing"] == "one"
    )
    for task in tasks[:50]:
        row = rows[int(task.data.source_id.split(":")[1])]
        assert task.data.answer == (
            row["Hallucinated Answer"] if task.data.label == "hallucinated" else row["Ground Truth"]
        )
    by_question = {t.data.question: t.data.label for t in tasks}
    assert len(by_question) == len({r["Question"] for r in rows})
    reversed_file = write_jsonl(tmp_path / "reversed.jsonl", rows[::-1])
    assert {
        t.data.question: t.data.label for t in load(dataset_path=str(reversed_file), pairing="one", seed=7)
    } == by_question
    assert [t.data.label for t in load(dataset_path=str(labeled), pairing="one", seed=7)] == [
        t.data.label for t in tasks
    ]
    other_seed = [t.data.label for t in load(dataset_path=str(labeled), pairing="one", seed=8)]
    assert other_seed != [t.data.label for t in tasks]


def test_difficulty_filter_keeps_row_ids(assets_dir, labeled):
    tasks = load(dataset_path=str(labeled), difficulty="hard")
    assert len(tasks) == 816 and {t.data.difficulty for t in tasks} == {"hard"}
    assert [t.data.idx for t in tasks] == list(range(816))
    rows = read_jsonl(labeled)
    first_hard = next(i for i, r in enumerate(rows) if r["Difficulty Level"] == "hard")
    assert tasks[0].data.source_id == f"pqa_labeled:{first_hard}"


def test_difficulty_with_no_rows_is_an_error(assets_dir, tmp_path):
    path = write_jsonl(
        tmp_path / "easy_only.jsonl", [r for r in read_jsonl(DEMO_ROWS) if r["Difficulty Level"] == "easy"]
    )
    with pytest.raises(DatasetError, match=f"^{path}: no rows of difficulty 'hard'"):
        load(dataset_path=str(path), difficulty="hard")


@pytest.mark.parametrize("config", ["pqa_labeled", "pqa_artificial"])
def test_both_configs_load_from_the_pinned_hub_id(assets_dir, monkeypatch, config):
    calls = []
    rows = read_jsonl(DEMO_ROWS)

    def fake_load_dataset(path, name=None, split=None, revision=None):
        calls.append((path, name, split, revision))
        return datasets.Dataset.from_list(rows)

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    tasks = load(config=config)
    assert calls == [(DATASET_ID, config, "train", REVISION)]
    assert len(tasks) == 2 * len(rows) == 6
    provenance = tasks[0].data.provenance
    assert (provenance["dataset"], provenance["config"], provenance["revision"]) == (
        DATASET_ID,
        config,
        REVISION,
    )
    assert "path" not in provenance and "sha256" not in provenance
    assert provenance["role"] == {"role": "eval", "stated": False}  # no role stated: an evaluation
    assert tasks[0].data.source_id == f"{config}:0"
    tasks = load(config=config, revision="abc123")
    assert calls[-1][3] == "abc123" and tasks[0].data.provenance["revision"] == "abc123"


def test_pqa_artificial_from_a_local_file(assets_dir, tmp_path):
    path = write_jsonl(tmp_path / "pqa_artificial.jsonl", read_jsonl(DEMO_ROWS))
    tasks = load(config="pqa_artificial", split="train", dataset_path=str(path))
    assert len(tasks) == 6 and tasks[0].data.provenance["role"] == {"role": "train", "stated": True}
    assert tasks[0].data.source_id == "pqa_artificial:0"


def test_parquet_file_with_knowledge_lists(assets_dir, tmp_path):
    rows = read_jsonl(DEMO_ROWS)
    path = write_parquet(tmp_path / "rows.parquet", rows)
    tasks = load(dataset_path=str(path), knowledge=True)
    assert len(tasks) == 6 and f"{rows[0]['Knowledge']!s}\n" in tasks[0].data.prompt


def test_demo_options_load(assets_dir):
    tasks = load(**demo_options())
    assert len(tasks) == 6
    assert Counter(t.data.difficulty for t in tasks) == {"easy": 2, "medium": 2, "hard": 2}


# ------------------------------------------------------------------------- selection


def _idx_sha256(idx: list[int]) -> str:
    return hashlib.sha256(",".join(str(i) for i in sorted(idx)).encode()).hexdigest()


def test_selection_is_stamped_on_every_selected_task(assets_dir, labeled):
    tasks = select(dataset_path=str(labeled))
    assert len(tasks) == 2000
    record = {
        "n_expected": 2000,
        "num_tasks": None,
        "shuffle": False,
        "contiguous": True,
        "idx_sha256": _idx_sha256(list(range(2000))),
    }
    assert all(t.data.selection == record for t in tasks)
    first = select(num_tasks=10, dataset_path=str(labeled))
    assert [t.data.idx for t in first] == list(range(10))
    assert first[0].data.selection == {
        "n_expected": 10,
        "num_tasks": 10,
        "shuffle": False,
        "contiguous": True,
        "idx_sha256": _idx_sha256(list(range(10))),
    }
    shuffled = select(num_tasks=5, shuffle=True, dataset_path=str(labeled))
    idx = [t.data.idx for t in shuffled]
    assert len(set(idx)) == 5 and all(0 <= i < 2000 for i in idx)
    assert shuffled[0].data.selection["n_expected"] == 5 and shuffled[0].data.selection["shuffle"] is True
    assert shuffled[0].data.selection["idx_sha256"] == _idx_sha256(idx)
    assert shuffled[0].data.selection["contiguous"] == (sorted(idx) == list(range(5)))


# --------------------------------------------------------------------------- options


@pytest.mark.parametrize(
    ("options", "fragments"),
    [
        ({"config": "pqa_unlabeled"}, ["config", "'pqa_labeled' or 'pqa_artificial'"]),
        ({"difficulty": "expert"}, ["difficulty", "'all', 'easy', 'medium' or 'hard'"]),
        ({"pairing": "three"}, ["pairing", "'both' or 'one'"]),
        ({"parser": "lenient"}, ["parser", "'medhal', 'authors' or 'strict'"]),
        ({"prompts": "mine"}, ["prompts", "'pinned' or 'demo'"]),
        ({"split": "test"}, ["split", "'eval' or 'train'"]),
        (
            {"split": "train"},
            [
                (
                    "pqa_labeled is MedHallu's eval set, and using it for train would mix training and "
                    "evaluation data; use config='pqa_artificial'"
                )
            ],
        ),
        ({"config": "pqa_artificial", "split": "eval"}, ["use config='pqa_labeled' for role='eval'"]),
        ({"role": "test"}, ["role", "'eval' or 'train'"]),
        ({"not_sure_reward": 1.5}, ["not_sure_reward", "less than or equal to 1"]),
        ({"not_sure_reward": -0.1}, ["not_sure_reward", "greater than or equal to 0"]),
        ({"not_sure": False, "not_sure_reward": 0.5}, ["not_sure_reward is set but not_sure is false"]),
        ({"invalid_reward": 0.5}, ["invalid_reward", "less than or equal to 0"]),
        ({"invalid_reward": -1.5}, ["invalid_reward", "greater than or equal to -1"]),
        ({"prompts": "demo"}, ["prompts 'demo' is for the bundled demo rows only"]),
    ],
)
def test_option_errors(options, fragments):
    with pytest.raises(ValidationError) as info:
        MedHalluConfig(id="medhallu", **options)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_demo_prompt_is_refused_on_other_rows(labeled, tmp_path):
    with pytest.raises(ValidationError, match="prompts 'demo' is for the bundled demo rows only"):
        MedHalluConfig(id="medhallu", prompts="demo", dataset_path=str(labeled))
    copy = write_jsonl(tmp_path / "pqa_labeled.jsonl", read_jsonl(DEMO_ROWS))  # the same rows, another file
    with pytest.raises(ValidationError, match="prompts 'demo' is for the bundled demo rows only"):
        MedHalluConfig(id="medhallu", prompts="demo", dataset_path=str(copy))


def test_demo_prompt_with_the_demo_rows(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDHAL_ASSETS_DIR", str(tmp_path))  # empty: the pinned script is not needed
    tasks = load(**demo_options(), prompts="demo")
    assert len(tasks) == 6
    asset = tasks[0].data.provenance["prompt"]["asset"]
    assert asset["name"] == "medhallu/demo/detection_prompt.py.txt" and asset["written_by"].startswith(
        "medhal"
    )
    assert (
        asset["sha256"]
        == hashlib.sha256((DEMO_ROWS.parent / "detection_prompt.py.txt").read_bytes()).hexdigest()
    )
    rows = read_jsonl(DEMO_ROWS)
    assert rows[0]["Question"] in tasks[0].data.prompt and rows[0]["Ground Truth"] in tasks[0].data.prompt
    binary = load(**demo_options(), prompts="demo", not_sure=False)
    assert "`2`" not in binary[0].data.prompt and "`2`" in tasks[0].data.prompt
    relative = (
        Path(DEMO_ROWS).relative_to(Path.cwd()) if Path(DEMO_ROWS).is_relative_to(Path.cwd()) else DEMO_ROWS
    )
    assert len(load(dataset_path=str(relative), config="pqa_labeled", prompts="demo")) == 6


def test_parser_option_is_recorded(assets_dir):
    for parser in ("medhal", "authors", "strict"):
        tasks = load(**demo_options(), parser=parser)
        assert {t.data.parser for t in tasks} == {parser}
        assert tasks[0].data.provenance["parser"] == parser == tasks[0].data.provenance["options"]["parser"]


# ------------------------------------------------------------------------------ rows


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda r: r.pop("Hallucinated Answer"), "row 2 lacks column(s) Hallucinated Answer"),
        (
            lambda r: r.update({"Knowledge": "one string"}),
            "row 2 field 'Knowledge' must be a non-empty list of strings",
        ),
        (
            lambda r: r.update({"Knowledge": []}),
            "row 2 field 'Knowledge' must be a non-empty list of strings",
        ),
        (
            lambda r: r.update({"Knowledge": ["ok", 3]}),
            "row 2 field 'Knowledge' must be a non-empty list of strings",
        ),
        (lambda r: r.update({"Ground Truth": "  "}), "row 2 field 'Ground Truth' is empty or not a string"),
        (lambda r: r.update({"Question": 7}), "row 2 field 'Question' is empty or not a string"),
        (
            lambda r: r.update({"Difficulty Level": "Hard"}),
            "row 2 field 'Difficulty Level' is 'Hard', not one of",
        ),
    ],
)
def test_row_errors_name_file_row_and_field(assets_dir, tmp_path, edit, message):
    rows = read_jsonl(DEMO_ROWS)
    edit(rows[1])
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(DatasetError) as info:
        load(dataset_path=str(path))
    assert str(info.value).startswith(f"{path}: {message}")


def test_missing_file_is_named(assets_dir, tmp_path):
    with pytest.raises(DatasetError, match="does not exist or is not a file"):
        load(dataset_path=str(tmp_path / "nope.jsonl"))


# --------------------------------------------------------------------------- scoring


async def test_task_scores_a_reply(assets_dir):
    factual, hallucinated = load(**demo_options())[:2]
    trace = await score_reply(hallucinated, "<think>invented mechanism</think>1 (hallucinated)")
    assert reward_values(trace) == {"detection": 1.0}
    assert trace.metrics == {
        "correct": 1.0,
        "parsed": 1.0,
        "not_sure": 0.0,
        "detection_reward": 1.0,
        "correct_medhal": 1.0,
        "parsed_medhal": 1.0,
        "correct_authors": 1.0,
        "parsed_authors": 1.0,
        "correct_strict": 0.0,
        "parsed_strict": 0.0,
    }
    assert trace.info["readings"] == {"medhal": "hallucinated", "authors": "hallucinated", "strict": None}
    assert trace.info["pred_label"] == "hallucinated"
    trace = await score_reply(factual, "not sure")
    assert (
        reward_values(trace)["detection"] == 0.0
        and trace.metrics["not_sure"] == 1.0
        and trace.info["pred_label"] == "not_sure"
    )
    assert trace.metrics["correct_authors"] == 0.0  # the authors read 'not' as hallucinated
    trace = await score_reply(factual, "<think>never closed")
    assert (
        reward_values(trace)["detection"] == 0.0
        and trace.metrics["parsed"] == 0.0
        and trace.info["pred_label"] is None
    )
    assert trace.metrics["correct_authors"] == 1.0  # the authors' rule: no 1/not/non -> 0


async def test_invalid_reward_option(assets_dir):
    """An unreadable reply earns invalid_reward; a wrong verdict and an abstention keep theirs;
    the option is recorded in provenance."""
    factual = load(**demo_options(), invalid_reward=-0.5, not_sure_reward=0.25)[0]
    assert reward_values(await score_reply(factual, "0 or 1"))["detection"] == -0.5
    assert reward_values(await score_reply(factual, "1"))["detection"] == 0.0
    assert reward_values(await score_reply(factual, "2"))["detection"] == 0.25
    assert factual.data.provenance["options"]["invalid_reward"] == -0.5
    binary = load(**demo_options(), not_sure=False, invalid_reward=-1.0)[0]
    assert reward_values(await score_reply(binary, "2"))["detection"] == -1.0  # not offered: INVALID


async def test_not_sure_reward_option(assets_dir):
    factual = load(**demo_options(), not_sure_reward=0.25)[0]
    assert reward_values(await score_reply(factual, "2"))["detection"] == 0.25
    binary = load(**demo_options(), not_sure=False)[0]
    trace = await score_reply(binary, "2")
    assert reward_values(trace)["detection"] == 0.0 and trace.metrics["parsed"] == 0.0
    assert binary.data.provenance["prompt"]["variant"] == "derived: not-sure sentences removed"


@pytest.mark.parametrize(
    ("parser", "reply", "reward", "parsed"),
    [
        # hallucinated item (idx 1)
        ("medhal", "not sure", 0.0, 1.0),  # an abstention
        ("authors", "not sure", 1.0, 1.0),  # 'not' -> 1
        ("strict", "not sure", 0.0, 0.0),
        ("medhal", "Answer: 1", 1.0, 1.0),
        ("authors", "Answer: 1", 1.0, 1.0),
        ("strict", "Answer: 1", 0.0, 0.0),
        ("medhal", "The answer is hallucinated.", 1.0, 1.0),
        ("authors", "The answer is hallucinated.", 0.0, 1.0),  # no 1/not/non -> 0
        ("strict", "<think>x</think>1", 1.0, 1.0),
    ],
)
async def test_parser_option_drives_the_reward(assets_dir, parser, reply, reward, parsed):
    task = load(**demo_options(), parser=parser)[1]
    assert task.data.label == "hallucinated"
    trace = await score_reply(task, reply)
    assert reward_values(trace)["detection"] == reward and trace.metrics["correct"] == reward
    assert trace.metrics["parsed"] == parsed == trace.metrics[f"parsed_{parser}"]
    assert trace.info["pred_label"] == trace.info["readings"][parser]


def test_a_repeated_row_gives_its_own_two_items(assets_dir, tmp_path):
    """MedHallu rows have no id: a repeated row is kept, as two more items with their own source id."""
    rows = read_jsonl(DEMO_ROWS)
    path = write_jsonl(tmp_path / "pqa_labeled.jsonl", rows + rows[:1])
    tasks = load(dataset_path=str(path))
    assert len(tasks) == 2 * (len(rows) + 1) == 8
    assert [t.data.source_id for t in tasks[-2:]] == ["pqa_labeled:3", "pqa_labeled:3"]
    assert tasks[-2].data.prompt == tasks[0].data.prompt and tasks[-1].data.prompt == tasks[1].data.prompt
    assert len({(t.data.source_id, t.data.label) for t in tasks}) == len(tasks)


def medhal_score(predictions: Path, dataset: Path, out: Path, *args: str):
    """`medhal score medhallu` on a predictions file, in this process."""
    from tests.running import medhal_main

    paths = ("--predictions", str(predictions), "--dataset-path", str(dataset), "-o", str(out))
    return medhal_main("score", "medhallu", *paths, *args)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda r: r[1].pop("Ground Truth"), "row 2 lacks column(s) Ground Truth"),
        (
            lambda r: r[0].update({"Difficulty Level": "trivial"}),
            "row 1 field 'Difficulty Level' is 'trivial'",
        ),
        (lambda r: r[2].update(Question=""), "row 3 field 'Question' is empty"),
        (lambda r: r[0].update(Knowledge="one context"), "row 1 field 'Knowledge' must be a non-empty list"),
    ],
    ids=["missing column", "wrong label", "empty string", "knowledge not a list"],
)
def test_bad_rows_through_medhal_score_are_one_clean_line(assets_dir, tmp_path, mutate, message):
    from tests.running import clean_exit_2

    rows = read_jsonl(DEMO_ROWS)
    mutate(rows)
    path = write_jsonl(tmp_path / "pqa_labeled.jsonl", rows)
    predictions = write_jsonl(tmp_path / "predictions.jsonl", [{"idx": 0, "reply": "1"}])
    proc = medhal_score(predictions, path, tmp_path / "out")
    clean_exit_2(proc, str(path), message)
    assert not (tmp_path / "out" / "traces.jsonl").exists()


V0_REPLIES = [
    "",
    "I am not sure.",
    "0",
    "1",
    "2",
    "Answer: 1 (hallucinated)",
    "<think>unclosed",
    "\\boxed{0}",
    "The answer isn't hallucinated.",
    "0 or 1",
    "<think>x</think>1",
    "not sure",
    "Hallucination: No",
]


@pytest.mark.parametrize(
    "options", [{}, {"parser": "authors", "not_sure_reward": 0.5}, {"parser": "strict", "not_sure": False}]
)
async def test_v0_and_v1_agree(assets_dir, options):
    """The classic v0 environment (`load_environment`) scores every reply as the v1 task does."""
    from medhal.kit.lines import taskset_class, taskset_config_type

    config = {**demo_options(), **options}
    env = medhallu.load_environment(**config, max_turns=1)
    rows = env.eval_dataset
    v1 = taskset_class("medhallu")(
        taskset_config_type("medhallu").model_validate({"id": "medhallu", **config})
    ).select()
    assert len(rows) == len(v1) == 6
    compared = 0
    for row, task in zip(rows, v1, strict=True):
        assert row["info"]["task_data"]["idx"] == task.data.idx
        for reply in V0_REPLIES:
            state = {
                "prompt": row["prompt"],
                "completion": [{"role": "assistant", "content": reply}],
                "info": dict(row["info"]),
                "answer": "",
                "input": {},
            }
            await env.rubric.score_rollout(state)
            trace = await score_reply(task, reply)
            assert state["reward"] == pytest.approx(trace.reward), (task.data.idx, reply)
            for name, value in {**reward_values(trace), **trace.metrics}.items():
                assert state["metrics"][name] == pytest.approx(value), (name, reply)
            compared += 1
    assert compared == 6 * len(V0_REPLIES)


# ------------------------------------------------------------------- answer vocabulary


def test_answer_vocabulary_is_an_option_recorded_on_every_task(assets_dir):
    tasks = load(**demo_options(), answer_vocabulary="halueval")
    assert {t.data.answer_vocabulary for t in tasks} == {"halueval"}
    assert tasks[0].data.provenance["options"]["answer_vocabulary"] == "halueval"
    assert {t.data.answer_vocabulary for t in load(**demo_options())} == {"digits"}  # the default
    with pytest.raises(ValidationError) as info:
        MedHalluConfig(id="medhallu", answer_vocabulary="yes-no")
    assert "answer_vocabulary" in str(info.value) and "'digits' or 'halueval'" in str(info.value)


async def test_answer_vocabulary_reads_halueval_judgements_under_medhal_only(assets_dir):
    factual, hallucinated = load(**demo_options(), answer_vocabulary="halueval")[:2]
    trace = await score_reply(hallucinated, "#Your Judgement#: Yes")
    assert reward_values(trace) == {"detection": 1.0}
    assert trace.info["readings"] == {"medhal": "hallucinated", "authors": "factual", "strict": None}
    trace = await score_reply(factual, "#Your Judgement#: No")
    assert reward_values(trace) == {"detection": 1.0} and trace.metrics["correct_authors"] == 1.0
    assert reward_values(await score_reply(factual, "0")) == {"detection": 1.0}  # the digits still read
    plain_factual, plain_hallucinated = load(**demo_options())[:2]
    for task, word in ((plain_hallucinated, "Yes"), (plain_factual, "No")):
        reply = f"#Your Judgement#: {word}"
        trace = await score_reply(task, reply)  # no vocabulary declared: nothing is guessed
        assert reward_values(trace) == {"detection": 0.0} and trace.info["readings"]["medhal"] is None


def test_medhal_score_with_the_halueval_vocabulary(assets_dir, tmp_path):
    """`medhal score medhallu --taskset.answer_vocabulary halueval` reads replies made with
    HaluEval-style prompts (F1 1 on the demo items here); without the option the same
    replies are unreadable under `medhal` (F1 0), and the option is on every trace."""
    import json

    tasks = load(**demo_options())
    words = {"hallucinated": "Yes", "factual": "No"}
    replies = [{"idx": t.data.idx, "reply": f"#Your Judgement#: {words[t.data.label]}"} for t in tasks]
    predictions = write_jsonl(tmp_path / "predictions.jsonl", replies)
    figures = {}
    for name, extra in (("halueval", ["--taskset.answer_vocabulary", "halueval"]), ("digits", [])):
        out = tmp_path / name
        proc = medhal_score(predictions, DEMO_ROWS, out, "--no-plots", *extra)
        assert proc.returncode == 0, proc.stderr
        figures[name] = json.loads((out / "report.json").read_text(encoding="utf-8"))["conventions"]["medhal"]
        traces = read_jsonl(out / "traces.jsonl")
        assert {t["task"]["data"]["provenance"]["options"]["answer_vocabulary"] for t in traces} == {name}
    assert figures["halueval"]["f1_strict"] == 1.0 and figures["halueval"]["parse_rate"] == 1.0
    assert figures["digits"]["f1_strict"] == 0.0 and figures["digits"]["parse_rate"] == 0.0
