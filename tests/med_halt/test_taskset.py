"""Med-HALT's taskset: options (including `parser` and `prompts`), loading every set from
local files (real rows via MEDHAL_SHARED_DATA, rows written here otherwise) and from the
pinned Hub id, the prompts, and the provenance every task carries (data, prompt assets,
options, reading convention, selection, code versions). Bad data and bad options fail
with messages naming the file, row, field or option."""

from __future__ import annotations

import hashlib
import json
import shutil
from importlib.metadata import version
from pathlib import Path

import pytest
from pydantic import ValidationError

from med_halt.benchmark import (
    DATASET,
    DEMO_DIR,
    DEMO_OPTIONS,
    DEMO_PROMPT_FILES,
    FULL_SIZE,
    PROMPT_COMMIT,
    PROMPT_FILES,
    SETS,
    SUBSETS,
)
from med_halt.prompts import SHOT_MIX
from med_halt.taskset import MedHaltConfig, MedHaltTaskset
from medhal.kit.assets import AssetError
from medhal.kit.datasets import DatasetError
from tests.running import clean_exit_2, medhal_main
from tests.tables import write_csv

OPTIONS = "{'0': 'Liver', '1': 'Pancreas', '2': 'Spleen', '3': 'None of the above'}"
SET_ORDER = (
    "reasoning_FCT",
    "reasoning_nota",
    "reasoning_fake",
    "IR_pmid2title",
    "IR_pubmedlink2title",
    "IR_title2pubmedlink",
    "IR_abstract2pubmedlink",
)


def config(**options) -> MedHaltConfig:
    return MedHaltConfig.model_validate({"id": "med-halt", **options})


def load(num_tasks: int | None = None, **options):
    return MedHaltTaskset(config(**options)).select(num_tasks)


def nota_row(n: int, **extra) -> dict:
    return {
        "id": f"ours-{n}",
        "dataset": "medmcqa",
        "question": f"Which organ makes insulin (variant {n})?",
        "options": OPTIONS,
        "correct_answer": "Pancreas",
        "correct_index": 1,
        "split_type": "test",
        "subject_name": "",
        "topic_name": "",
        "year": "",
        "exam_name": "",
        **extra,
    }


def samples_dir(shared_data: Path, tmp_path: Path, sets=SET_ORDER) -> Path:
    """A dataset directory of the real sample rows: <config>.jsonl per set."""
    target = tmp_path / "samples"
    target.mkdir()
    for name in sets:
        shutil.copy(shared_data / "medhalt" / "samples" / f"{name}.jsonl", target / f"{name}.jsonl")
    return target


def idx_sha256(n: int) -> str:
    """The documented selection hash: sha256 of the sorted idx list joined by commas."""
    return hashlib.sha256(",".join(str(i) for i in range(n)).encode()).hexdigest()


# ------------------------------------------------------------------------- declaration


def test_sets_sizes_and_subsets():
    assert tuple(SETS) == SET_ORDER
    assert {n: s.size for n, s in SETS.items()} == {
        "reasoning_FCT": 18_866,
        "reasoning_nota": 18_866,
        "reasoning_fake": 1_858,
        "IR_pmid2title": 4_916,
        "IR_pubmedlink2title": 4_916,
        "IR_title2pubmedlink": 4_916,
        "IR_abstract2pubmedlink": 4_916,
    }
    assert FULL_SIZE == 59_254  # 2 * 18,866 + 1,858 + 4 * 4,916
    assert SUBSETS["reasoning"] == SET_ORDER[:3] and SUBSETS["memory"] == SET_ORDER[3:]
    assert SUBSETS["all"] == SET_ORDER and all(SUBSETS[n] == (n,) for n in SET_ORDER)


def test_revision_pin_is_a_full_commit_hash():
    assert DATASET.id == "openlifescienceai/Med-HALT"
    assert len(DATASET.revision) == 40 and int(DATASET.revision, 16) >= 0
    assert len(PROMPT_COMMIT) == 40


# ------------------------------------------------------------------------- options


@pytest.mark.parametrize(
    ("options", "loc", "message"),
    [
        ({"subset": "reasoning_Nota"}, ("subset",), "Input should be 'reasoning_FCT'"),
        (
            {"split_type": "validation"},
            ("split_type",),
            "Input should be 'all', 'train', 'val', 'test' or 'dev'",
        ),
        ({"prompt_version": "v3"}, ("prompt_version",), "Input should be 'v0', 'v1' or 'v2'"),
        ({"num_shots": 6}, ("num_shots",), "less than or equal to 5"),
        ({"num_shots": -1}, ("num_shots",), "greater than or equal to 0"),
        ({"fake_scoring": "lenient"}, ("fake_scoring",), "Input should be 'decline' or 'keywords'"),
        ({"ir_matching": "fuzzy"}, ("ir_matching",), "Input should be 'normalized' or 'exact'"),
        ({"parser": "lenient"}, ("parser",), "Input should be 'medhal', 'authors' or 'strict'"),
        ({"prompts": "mine"}, ("prompts",), "Input should be 'pinned' or 'demo'"),
        ({"task": {"wrong_reward": 0.5}}, ("task", "wrong_reward"), "less than or equal to 0"),
        ({"task": {"wrong_reward": -1.5}}, ("task", "wrong_reward"), "greater than or equal to -1"),
        ({"task": {"invalid_reward": 0.5}}, ("task", "invalid_reward"), "less than or equal to 0"),
        ({"split_type": "test"}, (), "includes IR sets, which have no split"),
        ({"prompts": "demo"}, (), "prompts 'demo' is for the bundled demo rows only"),
        (
            {"prompts": "demo", "dataset_path": "/elsewhere"},
            (),
            "prompts 'demo' is for the bundled demo rows only",
        ),
    ],
)
def test_bad_options_are_refused_with_the_option_named(options, loc, message):
    with pytest.raises(ValidationError) as raised:
        config(**options)
    [error] = raised.value.errors()
    assert tuple(error["loc"]) == loc and message in error["msg"]


def test_good_options():
    cfg = config(
        subset="reasoning", split_type="test", parser="strict", fake_scoring="keywords", ir_matching="exact"
    )
    assert (cfg.parser, cfg.sets) == ("strict", SET_ORDER[:3])
    assert [cfg.rule(n) for n in SET_ORDER] == [
        "exact",
        "exact",
        "keywords",
        "exact",
        "exact",
        "exact",
        "exact",
    ]
    default = config()
    assert (
        default.parser,
        default.prompts,
        default.num_shots,
        default.shot_seed,
        default.prompt_version,
    ) == ("medhal", "pinned", 2, 0, "v0")
    assert [default.rule(n) for n in SET_ORDER] == ["exact", "exact", "decline"] + ["normalized"] * 4
    assert config(prompts="demo", dataset_path=str(DEMO_DIR)).prompts == "demo"
    assert config(**{**DEMO_OPTIONS, "prompts": "demo"}).subset == "all"


def test_bad_option_through_medhal_score_is_one_line(tmp_path):
    predictions = tmp_path / "p.jsonl"
    predictions.write_text('{"idx": 0, "reply": "x"}\n')
    proc = medhal_main(
        "score",
        "med-halt",
        "--predictions",
        str(predictions),
        "-o",
        str(tmp_path / "out"),
        "--taskset.parser",
        "lenient",
    )
    clean_exit_2(proc, "option parser", "'medhal', 'authors' or 'strict'", "'lenient'")


# ------------------------------------------------------------------------- assets


def test_prompt_assets_mirror_the_shared_copies(shared_data):
    """One asset per upstream file, named as in the offline mirror, pinned to its sha256."""
    assert list(PROMPT_FILES) == list(SET_ORDER)
    for files in PROMPT_FILES.values():
        for asset in (files.prompts, files.shots):
            local = shared_data / asset.name
            assert local.is_file(), asset.name
            assert hashlib.sha256(local.read_bytes()).hexdigest() == asset.sha256
            assert (
                asset.url.endswith(asset.name.removeprefix("medhalt/"))
                and "3dfe1e4efa4f565a610e90328500b14c16c1e81c" in asset.url
            )


def test_changed_prompt_file_is_refused(shared_data, tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    shutil.copytree(shared_data / "medhalt", mirror / "medhalt")
    target = mirror / PROMPT_FILES["reasoning_nota"].prompts.name
    target.chmod(0o644)
    target.write_text(target.read_text().replace("v0", "v9"))
    monkeypatch.setenv("MEDHAL_ASSETS_DIR", str(mirror))
    path = write_csv(tmp_path / "nota.csv", [nota_row(1)])
    with pytest.raises(AssetError, match=r"Reasoning_Nota/prompts\.json.*sha256"):
        load(subset="reasoning_nota", dataset_path=str(path))


# ------------------------------------------------------------------------- prompts


def _expected_prompt(prompts_json: Path, shots_json: Path, version: str, ids, item: str) -> str:
    entry = next(p for p in json.loads(prompts_json.read_text())["prompts"] if p["id"] == version)
    shots = json.loads(shots_json.read_text())["shots"][0]
    examples = "".join(f"Input : {shots[i]['input']}\nOutput: {shots[i]['Output']}Stop Here\n\n" for i in ids)
    return (
        f"{entry['prompt']}\n{entry['output_format']}\n"
        + (f"Examples: \n{examples}" if ids else "")
        + f"Input: {item}\nOutput: "
    )


def test_prompt_is_instruction_format_shots_then_item(assets_dir, tmp_path):
    path = write_csv(tmp_path / "nota.csv", [nota_row(1)])
    [task] = load(subset="reasoning_nota", dataset_path=str(path))
    files = PROMPT_FILES["reasoning_nota"]
    ids = task.data.provenance["shot_ids"]
    item = "{'Question': 'Which organ makes insulin (variant 1)?', 'Options': " + OPTIONS + "}"
    assert task.data.prompt == _expected_prompt(
        assets_dir / files.prompts.name, assets_dir / files.shots.name, "v0", ids, item
    )
    assert task.data.system_prompt is None
    shots = json.loads((assets_dir / files.shots.name).read_text())["shots"][0]
    assert [shots[i]["prompt_type"] for i in ids] == ["default", "task_specific"]


@pytest.mark.parametrize("num_shots", sorted(SHOT_MIX))
def test_shot_mix_and_seeded_draw(assets_dir, tmp_path, num_shots):
    path = write_csv(tmp_path / "nota.csv", [nota_row(1), nota_row(2)])
    shots = json.loads((assets_dir / PROMPT_FILES["reasoning_nota"].shots.name).read_text())["shots"][0]
    first = load(subset="reasoning_nota", dataset_path=str(path), num_shots=num_shots, shot_seed=7)
    again = load(subset="reasoning_nota", dataset_path=str(path), num_shots=num_shots, shot_seed=7)
    ids = first[0].data.provenance["shot_ids"]
    assert [t.data.prompt for t in first] == [t.data.prompt for t in again]
    assert first[1].data.provenance["shot_ids"] == ids  # one draw per set, as upstream
    kinds = [shots[i]["prompt_type"] for i in ids]
    n_default, n_task = {0: (0, 0), 1: (1, 0), 2: (1, 1), 3: (2, 1), 4: (2, 2), 5: (3, 2)}[num_shots]
    assert kinds == ["default"] * n_default + ["task_specific"] * n_task
    assert len(set(ids)) == len(ids)
    assert ("Examples: \n" in first[0].data.prompt) is (num_shots > 0)


def test_different_seeds_draw_different_shots(assets_dir, tmp_path):
    path = write_csv(tmp_path / "nota.csv", [nota_row(1)])
    draws = {
        tuple(
            load(subset="reasoning_nota", dataset_path=str(path), num_shots=3, shot_seed=s)[
                0
            ].data.provenance["shot_ids"]
        )
        for s in range(12)
    }
    assert len(draws) > 1


def test_each_set_draws_its_own_shots(assets_dir, tmp_path):
    directory = samples_dir(assets_dir, tmp_path, sets=SET_ORDER[:3])
    tasks = load(subset="reasoning", dataset_path=str(directory), num_shots=3, shot_seed=1)
    by_set = {t.data.test_set: tuple(t.data.provenance["shot_ids"]) for t in tasks}
    assert len(by_set) == 3 and all(len(ids) == 3 for ids in by_set.values())


@pytest.mark.parametrize("version", ["v0", "v1", "v2"])
def test_prompt_versions(assets_dir, tmp_path, version):
    path = write_csv(tmp_path / "nota.csv", [nota_row(1)])
    [task] = load(subset="reasoning_nota", dataset_path=str(path), prompt_version=version, num_shots=0)
    files = PROMPT_FILES["reasoning_nota"]
    item = "{'Question': 'Which organ makes insulin (variant 1)?', 'Options': " + OPTIONS + "}"
    assert task.data.prompt == _expected_prompt(
        assets_dir / files.prompts.name, assets_dir / files.shots.name, version, (), item
    )
    assert task.data.provenance["prompt_version"] == version
    assert [a["name"] for a in task.data.provenance["prompt_assets"]] == [
        "medhalt/prompts/Reasoning_Nota/prompts.json"
    ]


def test_demo_prompts_need_no_pinned_asset(tmp_path, monkeypatch):
    """`prompts = demo` with the demo rows loads the prompts written by medhal, so a demo
    runs where the pinned files cannot be fetched (an empty offline directory here)."""
    monkeypatch.setenv("MEDHAL_ASSETS_DIR", str(tmp_path))
    with pytest.raises(AssetError, match="not found"):
        load(**DEMO_OPTIONS)
    tasks = load(**DEMO_OPTIONS, prompts="demo")
    assert len(tasks) == 21
    for task in tasks:
        files = DEMO_PROMPT_FILES[task.data.test_set]
        prov = task.data.provenance
        assert prov["prompts"] == "demo" and prov["options"]["prompts"] == "demo"
        assert [a["written_by"] for a in prov["prompt_assets"]] == [
            "medhal (demo prompt, not the benchmark's)"
        ] * 2
        assert [a["name"] for a in prov["prompt_assets"]] == [
            f"med_halt/demo/prompts/{task.data.test_set}/{f}" for f in ("prompts.json", "shots.json")
        ]
        assert (
            prov["prompt_assets"][0]["sha256"] == hashlib.sha256(files.prompts.path.read_bytes()).hexdigest()
        )
        assert task.data.prompt.startswith(
            _expected_prompt(files.prompts.path, files.shots.path, "v0", prov["shot_ids"], "")[
                : -len("Input: \nOutput: ")
            ]
        )
        assert task.data.prompt.endswith("\nOutput: ")


# ------------------------------------------------------------------ provenance


def test_provenance_of_a_local_file(tmp_path, assets_dir):
    path = write_csv(tmp_path / "nota.csv", [nota_row(1), nota_row(2)])
    tasks = load(subset="reasoning_nota", dataset_path=str(path), parser="authors", shot_seed=3)
    prov = tasks[0].data.provenance
    assert {k: prov[k] for k in ("dataset", "config", "path", "sha256")} == {
        "dataset": "openlifescienceai/Med-HALT",
        "config": "reasoning_nota",
        "path": str(path),
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
    }
    assert (
        prov["test_set"],
        prov["prompt_version"],
        prov["num_shots"],
        prov["shot_seed"],
        prov["prompts"],
    ) == ("reasoning_nota", "v0", 2, 3, "pinned")
    assert prov["scoring_rule"] == "exact" and prov["parser"] == "authors"
    assert prov["options"] == {
        "subset": "reasoning_nota",
        "split_type": "all",
        "prompt_version": "v0",
        "num_shots": 2,
        "shot_seed": 3,
        "fake_scoring": "decline",
        "ir_matching": "normalized",
        "role": None,
        "binary_reward": False,
        "parser": "authors",
        "prompts": "pinned",
        "dataset_path": str(path),
        "revision": None,
    }
    assert prov["reward"] == {"wrong_reward": 0.0, "invalid_reward": None, "binary_reward": False}
    assert prov["code"] == {
        "environment": "med-halt",
        "environment_version": version("med-halt"),
        "medhal": version("medhal"),
        "verifiers": version("verifiers"),
    }
    assert [a["name"] for a in prov["prompt_assets"]] == [
        "medhalt/prompts/Reasoning_Nota/prompts.json",
        "medhalt/prompts/Reasoning_Nota/shots.json",
    ]
    assert all(t.data.provenance == prov for t in tasks)
    assert all(t.data.parser == "authors" for t in tasks)


def test_selection_is_recorded_on_every_task(tmp_path, assets_dir):
    path = write_csv(tmp_path / "nota.csv", [nota_row(n) for n in range(1, 6)])
    tasks = load(subset="reasoning_nota", dataset_path=str(path))
    assert all(
        t.data.selection
        == {
            "n_expected": 5,
            "num_tasks": None,
            "shuffle": False,
            "contiguous": True,
            "idx_sha256": idx_sha256(5),
        }
        for t in tasks
    )
    first_two = load(2, subset="reasoning_nota", dataset_path=str(path))
    assert [t.data.idx for t in first_two] == [0, 1]
    assert first_two[0].data.selection == {
        "n_expected": 2,
        "num_tasks": 2,
        "shuffle": False,
        "contiguous": True,
        "idx_sha256": idx_sha256(2),
    }


def test_each_set_records_its_own_rule_and_file(assets_dir, tmp_path):
    directory = samples_dir(assets_dir, tmp_path)
    tasks = load(subset="all", dataset_path=str(directory), fake_scoring="keywords")
    rules = {
        t.data.test_set: (t.data.rule, t.data.provenance["scoring_rule"], t.data.provenance["config"])
        for t in tasks
    }
    assert rules == {
        "reasoning_FCT": ("exact", "exact", "reasoning_FCT"),
        "reasoning_nota": ("exact", "exact", "reasoning_nota"),
        "reasoning_fake": ("keywords", "keywords", "reasoning_fake"),
        **{n: ("normalized", "normalized", n) for n in SET_ORDER[3:]},
    }


# ------------------------------------------------------------------ real rows, all sets


def test_every_set_loads_from_its_real_sample_file(assets_dir, tmp_path):
    directory = samples_dir(assets_dir, tmp_path)
    tasks = load(subset="all", dataset_path=str(directory))
    assert len(tasks) == 7 * 16
    assert [t.data.idx for t in tasks] == list(range(len(tasks)))
    assert [t.data.test_set for t in tasks[::16]] == list(SET_ORDER)
    assert [t.data.family for t in tasks[::16]] == ["reasoning"] * 3 + ["memory"] * 4
    by_set = {name: [t.data for t in tasks if t.data.test_set == name] for name in SET_ORDER}
    fct = by_set["reasoning_FCT"][0]
    assert (
        fct.verdict_gold == "no"
        and fct.proposed_answer in fct.prompt
        and fct.gold == "They are benzamides with methoxy group in ortho."
    )
    assert all(d.gold == "I do not know" and d.decline_options for d in by_set["reasoning_fake"])
    p2t = by_set["IR_pmid2title"]
    assert p2t[0].prompt.endswith("Input: {'Pmid': '35020963'}\nOutput: ")
    assert sum(not d.paper_exists for d in p2t) == sum(d.gold == "Unknown" for d in p2t) == 7
    assert all(
        d.gold.startswith("https://ncbi.nlm.nih.gov/pubmed/") or d.gold == "Unknown"
        for d in by_set["IR_abstract2pubmedlink"]
    )
    prov = fct.provenance
    assert prov["dataset"] == DATASET.id and prov["config"] == "reasoning_FCT" and len(prov["sha256"]) == 64
    assert prov["num_shots"] == 2 and prov["shot_seed"] == 0 and prov["scoring_rule"] == "exact"
    assert by_set["reasoning_fake"][0].provenance["scoring_rule"] == "decline"
    assert p2t[0].provenance["scoring_rule"] == "normalized"
    assert tasks[0].data.selection["n_expected"] == 112


def test_real_fake_questions_file_has_1858_rows(assets_dir):
    tasks = load(subset="reasoning_fake", dataset_path=str(assets_dir / "medhalt" / "reasoning_fake.csv"))
    assert len(tasks) == 1_858 == SETS["reasoning_fake"].size
    without_decline_option = sum(not t.data.decline_options for t in tasks)
    assert 0 < without_decline_option < 10  # almost every fake question offers "I do not know"
    assert {t.data.split_type for t in tasks} == {"train"}
    assert len({t.data.source_question for t in tasks}) == 1_858


@pytest.mark.parametrize("name", ["IR_pmid2title", "IR_pubmedlink2title", "IR_title2pubmedlink"])
def test_real_ir_column_subsets_load_with_the_official_gold(assets_dir, name):
    tasks = load(subset=name, dataset_path=str(assets_dir / "medhalt" / f"{name}.json"), num_shots=0)
    assert len(tasks) == 4_916 == SETS[name].size
    fake = [t.data for t in tasks if not t.data.paper_exists]
    assert len(fake) == 1_989 and all(d.gold == "Unknown" for d in fake)
    assert all(t.data.source_question.startswith("pmid:") for t in tasks if t.data.paper_exists)
    fake_clusters = {d.source_question.split(":")[0] for d in fake}
    assert fake_clusters == ({"row"} if name == "IR_title2pubmedlink" else {"pmid"})  # no PMID column there


def test_ir_sets_cluster_by_paper_across_sets(assets_dir):
    root = assets_dir / "medhalt"
    p2t = load(subset="IR_pmid2title", dataset_path=str(root / "IR_pmid2title.json"), num_shots=0)
    l2t = load(subset="IR_pubmedlink2title", dataset_path=str(root / "IR_pubmedlink2title.json"), num_shots=0)
    assert {t.data.source_question for t in p2t} == {t.data.source_question for t in l2t}
    assert len({t.data.source_id for t in p2t} & {t.data.source_id for t in l2t}) == 0


def test_fct_and_nota_items_of_one_question_share_a_cluster(assets_dir, tmp_path):
    question = "Which organ makes insulin?"
    fct = dict(
        nota_row(1),
        id="f-1",
        question=question,
        options="{'0': 'Liver', '1': 'Pancreas', 'correct answer': 'Liver'}",
        student_answer="Liver",
        student_index=0,
    )
    nota = dict(
        nota_row(2),
        id="n-1",
        question="which organ  makes insulin",
        options="{'0': 'Liver', '1': 'None of the above'}",
        correct_answer="None of the above",
    )
    directory = tmp_path / "pair"
    directory.mkdir()
    write_csv(directory / "reasoning_FCT.csv", [fct])
    write_csv(directory / "reasoning_nota.csv", [nota])
    write_csv(
        directory / "reasoning_fake.csv",
        [
            {
                "id": "k-1",
                "subject_name": "",
                "topic_name": "",
                "split_type": "train",
                "dataset": "medmcqa",
                "len": 5,
                "year": "",
                "exam_name": "",
                "question": question,
                "options": "{'0': 'Moon dust', '1': 'I do not know'}",
            }
        ],
    )
    tasks = load(subset="reasoning", dataset_path=str(directory))
    assert tasks[0].data.source_question == tasks[1].data.source_question
    assert tasks[2].data.source_question == "fake:k-1"
    assert tasks[0].data.verdict_gold == "no" and tasks[2].data.decline_options == ("I do not know",)


def test_demo_sample_loads_every_set(assets_dir):
    tasks = load(**DEMO_OPTIONS)
    assert len(tasks) == 21
    assert [t.data.test_set for t in tasks] == [n for n in SET_ORDER for _ in range(3)]
    assert all(t.data.source_id.startswith("medhal-demo-") for t in tasks)
    assert sorted(p.name for p in DEMO_DIR.glob("*.csv")) == sorted(f"{name}.csv" for name in SET_ORDER)
    assert all(t.data.provenance["prompts"] == "pinned" for t in tasks)


def test_the_text_none_as_a_gold_loads_and_a_missing_gold_is_refused(assets_dir, tmp_path):
    path = write_csv(
        tmp_path / "nota.csv", [nota_row(1, options="{'0': 'None', '1': 'Liver'}", correct_answer="None")]
    )
    [task] = load(subset="reasoning_nota", dataset_path=str(path))
    assert task.data.gold == "None"
    json_path = tmp_path / "reasoning_nota.jsonl"
    json_path.write_text(json.dumps(nota_row(1)) + "\n" + json.dumps(nota_row(2, correct_answer=None)) + "\n")
    with pytest.raises(DatasetError, match=r"reasoning_nota\.jsonl: row 2: field 'correct_answer' is empty"):
        load(subset="reasoning_nota", dataset_path=str(json_path))


# ----------------------------------------------------------------------- Hub route


def test_every_set_loads_from_the_pinned_hub_dataset(assets_dir, monkeypatch):
    """The Hub route asks `datasets` for each configuration at the pinned revision."""
    import datasets

    calls = []
    samples = assets_dir / "medhalt" / "samples"

    def fake_load_dataset(path, name, split, revision):
        calls.append((path, name, split, revision))
        rows = [json.loads(line) for line in (samples / f"{name}.jsonl").read_text().splitlines()]
        return datasets.Dataset.from_list(rows)

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    tasks = load(subset="all")
    assert calls == [(DATASET.id, name, "train", DATASET.revision) for name in SET_ORDER]
    assert len(tasks) == 7 * 16
    assert tasks[0].data.provenance["revision"] == DATASET.revision and "path" not in tasks[0].data.provenance
    calls.clear()
    load(subset="IR_pmid2title", revision="0123456789abcdef0123456789abcdef01234567")
    assert calls[0][3] == "0123456789abcdef0123456789abcdef01234567"


def test_loading_is_lazy_across_sets(assets_dir, monkeypatch):
    import datasets

    asked = []

    def fake_load_dataset(path, name, split, revision):
        asked.append(name)
        return datasets.Dataset.from_list([nota_row(1)] if name == "reasoning_nota" else [])

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    assert len(load(1, subset="reasoning_nota")) == 1 and asked == ["reasoning_nota"]


# --------------------------------------------------------------- split_type option


def test_split_type_filters_reasoning_rows(assets_dir, tmp_path):
    path = write_csv(
        tmp_path / "nota.csv",
        [nota_row(1, split_type="train"), nota_row(2, split_type="test"), nota_row(3, split_type="test")],
    )
    assert len(load(subset="reasoning_nota", dataset_path=str(path))) == 3
    tests = load(subset="reasoning_nota", dataset_path=str(path), split_type="test")
    assert [t.data.source_id for t in tests] == ["ours-2", "ours-3"] and [t.data.idx for t in tests] == [0, 1]


def test_split_type_leaving_a_set_empty_fails(assets_dir):
    with pytest.raises(DatasetError, match=r"reasoning_fake.*no rows with split_type 'test'.*train split"):
        load(
            subset="reasoning_fake",
            dataset_path=str(assets_dir / "medhalt" / "reasoning_fake.csv"),
            split_type="test",
        )


# -------------------------------------------------------------------- bad data


def test_directory_missing_a_set_names_the_expected_path(assets_dir, tmp_path):
    directory = samples_dir(assets_dir, tmp_path, sets=("reasoning_FCT", "reasoning_nota"))
    with pytest.raises(
        DatasetError, match=r"no file for set 'reasoning_fake'; expected .*samples/reasoning_fake\.<ext>"
    ):
        load(subset="reasoning", dataset_path=str(directory))


def test_one_file_for_several_sets_is_refused(tmp_path):
    path = write_csv(tmp_path / "nota.csv", [nota_row(1)])
    with pytest.raises(DatasetError, match="is a file, but the subset selects 3 sets"):
        load(subset="reasoning", dataset_path=str(path))


def test_two_files_for_one_set_are_refused(assets_dir, tmp_path):
    directory = tmp_path / "dup"
    directory.mkdir()
    write_csv(directory / "reasoning_nota.csv", [nota_row(1)])
    (directory / "reasoning_nota.jsonl").write_text(json.dumps(nota_row(1)) + "\n")
    with pytest.raises(DatasetError, match="several files for set 'reasoning_nota'"):
        load(subset="reasoning_nota", dataset_path=str(directory))


def test_single_set_from_a_directory(assets_dir, tmp_path):
    directory = samples_dir(assets_dir, tmp_path, sets=("IR_title2pubmedlink",))
    assert len(load(subset="IR_title2pubmedlink", dataset_path=str(directory))) == 16


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"correct_answer": ""}, r"row 2: field 'correct_answer' is empty"),
        ({"options": "['Liver', 'Pancreas']"}, r"row 2: field 'options' is not a non-empty dict"),
        (
            {"options": "{'0': 'Liver', '1': __import__('os')}"},
            r"row 2: field 'options' is not a Python dict literal",
        ),
        ({"split_type": "holdout"}, r"row 2: field 'split_type' is 'holdout'"),
        ({"id": "ours-1"}, r"row 2 field 'id' repeats 'ours-1' \(first at row 1\)"),
    ],
)
def test_bad_reasoning_rows_name_file_row_and_field(assets_dir, tmp_path, change, message):
    path = write_csv(tmp_path / "nota.csv", [nota_row(1), nota_row(2, **change)])
    with pytest.raises(DatasetError, match=f"nota.csv: {message}"):
        load(subset="reasoning_nota", dataset_path=str(path))


def test_missing_column_is_named(assets_dir, tmp_path):
    rows = [{k: v for k, v in nota_row(1).items() if k != "question"}]
    path = write_csv(tmp_path / "nota.csv", rows)
    with pytest.raises(DatasetError, match="row 1: column 'question' is missing"):
        load(subset="reasoning_nota", dataset_path=str(path))


def test_fct_row_without_proposed_answer_is_refused(assets_dir, tmp_path):
    path = write_csv(tmp_path / "fct.csv", [dict(nota_row(1), student_answer="Liver", student_index=0)])
    with pytest.raises(DatasetError, match="row 1: field 'options' has no 'correct answer' entry"):
        load(subset="reasoning_FCT", dataset_path=str(path))


def test_ir_subset_without_needed_column_is_refused(assets_dir, tmp_path):
    path = tmp_path / "IR_pmid2title.jsonl"
    path.write_text(json.dumps({"id": "x", "Title": "A title"}) + "\n")
    with pytest.raises(DatasetError, match="row 1: column 'PMID' is missing"):
        load(subset="IR_pmid2title", dataset_path=str(path))


def test_ir_fake_paper_with_overwritten_gold_is_refused(assets_dir, tmp_path):
    """A *2title subset that lost `original_title` would make a real title the gold of a
    fake paper; the flag columns catch it."""
    path = tmp_path / "IR_pmid2title.jsonl"
    path.write_text(
        json.dumps(
            {"id": "x", "PMID": "32279415", "Title": "A real source title", "pubmed_data_type": "fake_data"}
        )
        + "\n"
    )
    with pytest.raises(
        DatasetError, match="row 1: a fake paper whose gold is 'A real source title', not 'Unknown'"
    ):
        load(subset="IR_pmid2title", dataset_path=str(path))


@pytest.mark.parametrize("pmid", ["35020963", "35020963.0", 35020963, 35020963.0])
def test_pmid_cells_in_every_shape(assets_dir, tmp_path, pmid):
    path = tmp_path / "IR_pmid2title.jsonl"
    path.write_text(json.dumps({"id": "x", "PMID": pmid, "Title": "A title"}) + "\n")
    [task] = load(subset="IR_pmid2title", dataset_path=str(path))
    assert task.data.prompt.endswith("Input: {'Pmid': '35020963'}\nOutput: ")
    assert task.data.source_question == "pmid:35020963" and task.data.paper_exists


def test_bad_pmid_is_refused(assets_dir, tmp_path):
    path = tmp_path / "IR_pmid2title.jsonl"
    path.write_text(json.dumps({"id": "x", "PMID": "3502e963", "Title": "A title"}) + "\n")
    with pytest.raises(DatasetError, match="row 1: field 'PMID' is '3502e963', not a PubMed id"):
        load(subset="IR_pmid2title", dataset_path=str(path))


def test_missing_dataset_path(tmp_path):
    with pytest.raises(DatasetError, match="does not exist"):
        load(subset="reasoning_nota", dataset_path=str(tmp_path / "nowhere.csv"))
