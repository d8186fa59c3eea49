"""The role of a run's data (issue 32 item 5): stated with `role` (MedHallu's old `split`
still works), recorded on every trace when not stated, refused for evaluation-only sets, and
a training load holding evaluation items refused in one line naming the file and the count
(the fingerprints each environment ships, checked against the real data when
MEDHAL_SHARED_DATA is set).

The accidental-training cases of the issue, each here: `{ id = "medhallu" }` with no role
(recorded as an unstated evaluation), `config = "pqa_artificial", split = "train"` on a file
of pqa_labeled's rows (refused: 1,000 of 1,000 rows), MedFact-Bench and Med-HALT's NOTA,
fake and IR sets as training sources (refused)."""

from __future__ import annotations

import csv
import importlib
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from medhal.kit import contract
from medhal.kit.datasets import DatasetError
from medhal.kit.lines import taskset_class, taskset_config_type
from medhal.kit.roles import fingerprint_document, item_fingerprint, load_fingerprints, normalise
from scripts import eval_fingerprints
from tests.running import clean_exit_2, medhal_main
from tests.tables import read_jsonl, write_jsonl

ENVIRONMENTS = {
    env.env_id: env.package for env in contract.environments(Path(__file__).parents[1], tests=True)
}
"""Every environment (`medhal.kit.contract`), the test environments too: id -> package."""


def config(env_id: str, **options):
    return taskset_config_type(env_id).model_validate({"id": env_id, **options})


def load(env_id: str, **options) -> list:
    return list(taskset_class(env_id)(config(env_id, **options)).load())


def demo(env_id: str, **options) -> list:
    benchmark = importlib.import_module(f"{ENVIRONMENTS[env_id]}.benchmark")
    merged = {**benchmark.DEMO_OPTIONS, **options}
    if "prompts" in taskset_config_type(env_id).model_fields:
        merged["prompts"] = "demo"
    return load(env_id, **merged)


@pytest.fixture(autouse=True)
def _no_pinned_assets(tmp_path, monkeypatch):
    """Demo rows run on demo prompts; a test that loads other rows takes `assets_dir` (the
    pinned prompts from shared data), which replaces this."""
    monkeypatch.setenv("MEDHAL_ASSETS_DIR", str(tmp_path / "assets"))


# -------------------------------------------------------------------------------- recorded


@pytest.mark.parametrize("env_id", ENVIRONMENTS)
def test_a_run_that_states_no_role_is_an_evaluation_and_says_so(env_id):
    """`{ id = "medhallu" }` in a trainer's source loads pqa_labeled: every trace says it
    was loaded as evaluation data with no role stated."""
    tasks = demo(env_id)
    assert {json.dumps(t.data.provenance["role"]) for t in tasks} == {'{"role": "eval", "stated": false}'}
    assert tasks[0].data.provenance["options"]["role"] is None


@pytest.mark.parametrize("env_id", ENVIRONMENTS)
def test_a_stated_evaluation_is_recorded_as_stated(env_id):
    tasks = demo(env_id, role="eval")
    assert tasks[0].data.provenance["role"] == {"role": "eval", "stated": True}


@pytest.mark.parametrize(
    "options", [{"role": "train"}, {"split": "train"}, {"split": "train", "role": "train"}]
)
def test_medhallu_training_on_its_training_pool_is_recorded(options, assets_dir, tmp_path):
    """`split` is the old name of `role`: both say the same."""
    from medhallu.benchmark import DEMO_ROWS

    path = write_jsonl(tmp_path / "pqa_artificial.jsonl", read_jsonl(DEMO_ROWS))
    tasks = load("medhallu", config="pqa_artificial", dataset_path=str(path), **options)
    assert tasks[0].data.provenance["role"] == {"role": "train", "stated": True}
    assert tasks[0].data.provenance["options"]["role"] == "train"


# ------------------------------------------------------------------ refused by set role


@pytest.mark.parametrize(
    ("env_id", "options", "fragment"),
    [
        ("medhallu", {"role": "train"}, "pqa_labeled is MedHallu's eval set"),
        ("medhallu", {"split": "train"}, "use config='pqa_artificial' for role='train'"),
        ("medhallu", {"split": "eval", "role": "train"}, "split is the old name of role; give one"),
        ("medfact-bench", {"role": "train"}, "MedFact-Bench is evaluation-only"),
        (
            "med-halt",
            {"role": "train", "subset": "reasoning_nota", "split_type": "train"},
            "reasoning_nota is an",
        ),
        (
            "med-halt",
            {"role": "train", "subset": "reasoning_fake", "split_type": "train"},
            "reasoning_fake is an",
        ),
        (
            "med-halt",
            {"role": "train", "subset": "reasoning", "split_type": "train"},
            "reasoning_nota, reasoning_fake",
        ),
        ("med-halt", {"role": "train", "subset": "memory"}, "IR_pmid2title, IR_pubmedlink2title"),
        ("med-halt", {"role": "train", "subset": "IR_pmid2title"}, "IR_pmid2title is an evaluation-only set"),
        ("med-halt", {"role": "train", "subset": "reasoning_FCT"}, "split_type 'all': the test rows"),
        ("med-halt", {"role": "train", "subset": "reasoning_FCT", "split_type": "test"}, "split_type 'test'"),
    ],
)
def test_evaluation_only_data_refuses_a_training_role(env_id, options, fragment):
    with pytest.raises(ValidationError) as info:
        config(env_id, **options)
    assert fragment in str(info.value)


def test_the_cli_refuses_a_training_role_on_an_evaluation_only_set_in_one_line(tmp_path):
    predictions = write_jsonl(tmp_path / "p.jsonl", [{"idx": 0, "reply": "<score>2</score>"}])
    proc = medhal_main(
        "score", "medfact-bench", "--predictions", str(predictions), "-o", str(tmp_path / "out"),
        "--taskset.role", "train",
    )  # fmt: skip
    clean_exit_2(proc, "role 'train': MedFact-Bench is evaluation-only")


def test_med_halt_trains_on_fct_rows_of_a_training_split(assets_dir, tmp_path):
    from med_halt.benchmark import DEMO_DIR

    path = fct_rows(tmp_path / "fct.csv", DEMO_DIR / "reasoning_FCT.csv")
    tasks = load("med-halt", subset="reasoning_FCT", split_type="train", role="train", dataset_path=str(path))
    assert len(tasks) == 3 and tasks[0].data.provenance["role"] == {"role": "train", "stated": True}


def fct_rows(target: Path, source: Path, split_type: str = "train") -> Path:
    with open(source, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    with open(target, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({**row, "split_type": split_type} for row in rows)
    return target


# ------------------------------------------------------------ refused by the fingerprints


def ship(monkeypatch, module: str, tmp_path: Path, sets: dict[str, list[tuple[str, str]]]) -> None:
    """The environment's fingerprints replaced by ones of `sets` (question, answer items)."""
    document = fingerprint_document(
        {
            name: ([item_fingerprint(q, a) for q, a in items], {"file": "test"})
            for name, items in sets.items()
        },
        {},
    )
    path = tmp_path / "eval_fingerprints.json"
    path.write_text(json.dumps(document))
    monkeypatch.setattr(importlib.import_module(f"{module}.taskset"), "EVAL_FINGERPRINTS", path)


def test_a_training_file_holding_evaluation_items_is_refused_naming_file_and_count(
    monkeypatch, assets_dir, tmp_path
):
    """Two of the six rows are evaluation items (one spelled in other case and spacing)."""
    from medhallu.benchmark import DEMO_ROWS

    rows = read_jsonl(DEMO_ROWS)
    held = [rows[0], {**rows[2], "Question": "  " + rows[2]["Question"].upper() + "!"}]
    ship(
        monkeypatch, "medhallu", tmp_path, {"pqa_labeled": [(r["Question"], r["Ground Truth"]) for r in held]}
    )
    path = write_jsonl(
        tmp_path / "pool.jsonl", [*rows, *(dict(r, Question=r["Question"] + " (b)") for r in rows)]
    )
    with pytest.raises(DatasetError) as info:
        load("medhallu", config="pqa_artificial", role="train", dataset_path=str(path))
    assert str(info.value) == (
        f"{path}: 2 of 6 rows hold MedHallu evaluation items (pqa_labeled: 2); "
        "a run with role 'train' may not load them"
    )
    assert len(load("medhallu", config="pqa_artificial", dataset_path=str(path))) == 12  # not a training load


def test_the_cli_refuses_a_training_load_of_evaluation_items_in_one_line(monkeypatch, tmp_path):
    from medhallu.benchmark import DEMO_ROWS

    rows = read_jsonl(DEMO_ROWS)
    ship(
        monkeypatch,
        "medhallu",
        tmp_path,
        {"pqa_labeled": [(rows[1]["Question"], rows[1]["Hallucinated Answer"])]},
    )
    path = write_jsonl(tmp_path / "pool.jsonl", rows)
    predictions = write_jsonl(tmp_path / "p.jsonl", [{"idx": 0, "reply": "1"}])
    proc = medhal_main(
        "score", "medhallu", "--predictions", str(predictions), "-o", str(tmp_path / "out"),
        "--dataset-path", str(path), "--taskset.config", "pqa_artificial", "--taskset.split", "train",
    )  # fmt: skip
    clean_exit_2(proc, str(path), "1 of 3 rows hold MedHallu evaluation items (pqa_labeled: 1)")


def test_med_halt_refuses_a_training_load_of_evaluation_items(monkeypatch, assets_dir, tmp_path):
    from med_halt.benchmark import DEMO_DIR

    path = fct_rows(tmp_path / "fct.csv", DEMO_DIR / "reasoning_FCT.csv")
    with open(path, newline="", encoding="utf-8") as f:
        first = next(csv.DictReader(f))
    ship(monkeypatch, "med_halt", tmp_path, {"reasoning_FCT": [(first["question"], first["correct_answer"])]})
    with pytest.raises(
        DatasetError, match=r"fct.csv: 1 of 3 rows hold Med-HALT evaluation items \(reasoning_FCT: 1\)"
    ):
        load("med-halt", subset="reasoning_FCT", split_type="train", role="train", dataset_path=str(path))


def test_pqa_labeled_relabelled_as_the_training_pool_is_refused(shared_data, tmp_path):
    """The issue's case: `config = "pqa_artificial", split = "train"` with a dataset_path
    holding pqa_labeled's rows loaded the 2,000 evaluation items labelled train."""
    source = shared_data / "medhallu" / "pqa_labeled.jsonl"
    path = write_jsonl(tmp_path / "pqa_artificial.jsonl", read_jsonl(source))
    with pytest.raises(DatasetError) as info:
        load("medhallu", config="pqa_artificial", split="train", dataset_path=str(path))
    assert str(info.value).startswith(
        f"{path}: 1000 of 1000 rows hold MedHallu evaluation items (pqa_labeled: 1000)"
    )


def test_eval_refuses_the_relabelled_evaluation_set_in_one_line(shared_data, tmp_path):
    """The same case under verifiers' own `eval` executable: exit 2, one line."""
    import subprocess

    from tests.conftest import BIN

    path = write_jsonl(
        tmp_path / "pqa_artificial.jsonl", read_jsonl(shared_data / "medhallu" / "pqa_labeled.jsonl")
    )
    proc = subprocess.run(
        [
            str(BIN / "eval"), "medhallu", "--client.base-url", "http://127.0.0.1:9/v1", "--no-push",
            "--no-rich", "-m", "scripted", "-o", str(tmp_path / "run"), "--taskset.config", "pqa_artificial",
            "--taskset.role", "train", "--taskset.dataset-path", str(path),
        ],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-2000:]
    last = [line for line in proc.stderr.splitlines() if line.strip()][-1]
    assert last == (
        f"error: {path}: 1000 of 1000 rows hold MedHallu evaluation items (pqa_labeled: 1000); "
        "a run with role 'train' may not load them"
    )


# ------------------------------------------------------------------------ the fingerprints


def test_fingerprints_ignore_case_punctuation_and_spacing_not_words():
    assert normalise("  Is it  SAFE?\n(yes)") == "is it safe yes"
    base = item_fingerprint("Does aspirin lower risk?", "Yes, it does.")
    assert item_fingerprint("does  ASPIRIN lower risk", "yes it does") == base
    assert item_fingerprint("Does aspirin raise risk?", "Yes, it does.") != base
    assert item_fingerprint("Does aspirin lower risk?", "No.") != base
    assert len(base) == 12 and int(base, 16) >= 0


@pytest.mark.parametrize("module", ENVIRONMENTS.values())
def test_the_shipped_fingerprints_load_and_say_what_they_lack(module):
    benchmark = importlib.import_module(f"{module}.benchmark")
    shipped = load_fingerprints(benchmark.EVAL_FINGERPRINTS)
    assert set(shipped.sets) | set(shipped.not_computed) == set(benchmark.EVALUATION_SETS)
    assert not set(shipped.sets) & set(shipped.not_computed)


def test_which_fingerprints_ship():
    """What the shared data allows: MedHallu's evaluation set whole; Med-HALT's fake set and
    three IR sets (column subsets hold every field an item's fingerprint needs); not
    Med-HALT's FCT, NOTA and abstract2pubmedlink sets (16-row samples only) nor MedFact-Bench
    (no labelled rows offline), whose training is refused by set role instead."""
    shipped = {
        module: load_fingerprints(importlib.import_module(f"{module}.benchmark").EVAL_FINGERPRINTS)
        for module in ENVIRONMENTS.values()
    }
    assert {name: len(h) for name, h in shipped["medhallu"].sets.items()} == {"pqa_labeled": 2000}
    assert {name: len(h) for name, h in shipped["med_halt"].sets.items()} == {
        "reasoning_fake": 1858,
        "IR_pmid2title": 4916,
        "IR_pubmedlink2title": 4916,
        "IR_title2pubmedlink": 4819,  # 97 fake papers' titles repeat (all with url "Unknown")
    }
    assert set(shipped["med_halt"].not_computed) == {
        "reasoning_FCT",
        "reasoning_nota",
        "IR_abstract2pubmedlink",
    }
    assert (shipped["medfact_bench"].sets, set(shipped["medfact_bench"].not_computed)) == ({}, {"all"})


@pytest.mark.parametrize("module", ENVIRONMENTS.values())
def test_the_shipped_fingerprints_are_the_shared_datas(module, shared_data):
    benchmark = importlib.import_module(f"{module}.benchmark")
    made = eval_fingerprints.render(eval_fingerprints.fingerprints(module, shared_data))
    assert made == benchmark.EVAL_FINGERPRINTS.read_text(encoding="utf-8"), (
        f"{benchmark.EVAL_FINGERPRINTS} is stale: "
        "uv run python scripts/eval_fingerprints.py $MEDHAL_SHARED_DATA"
    )


def test_a_malformed_fingerprint_file_is_named(tmp_path):
    path = tmp_path / "f.json"
    path.write_text(json.dumps(fingerprint_document({"s": (["abcdefabcdef"], {})}, {}) | {"format": "x"}))
    with pytest.raises(ValueError, match="field 'format'"):
        load_fingerprints(path)
    document = fingerprint_document({"s": (["abcdefabcdef"], {})}, {})
    document["sets"]["s"]["hashes"] += "abc"
    path.write_text(json.dumps(document))
    with pytest.raises(ValueError, match=r"field 'sets.s.hashes' does not hold 1 fingerprints"):
        load_fingerprints(path)
