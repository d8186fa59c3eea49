"""`validate med-halt` (verifiers' model-free task check, on the subprocess runtime): every
task of the demo rows, of the real sample rows and of the real fake-question and IR files is
answerable (the reply a perfect model writes earns +1 and is read under every convention,
a wrong one earns the wrong-answer reward); a row that cannot be answered is reported
invalid with its reason, and a row that cannot be a task is refused at load.

The validations run in this process (`tests.validation`); the first test runs the `validate`
executable itself and reads each task's verdict from its `idx=<n> valid=<bool> reason=<why>`
log lines and the reason of an invalid task from medhal's `<benchmark> <id> (idx <n>) is
invalid: <why>` lines."""

from __future__ import annotations

import csv
import os
import re
import subprocess
from pathlib import Path

import pytest

from med_halt.benchmark import DEMO_OPTIONS
from tests.conftest import BIN
from tests.validation import Validation
from tests.validation import validate as validate_in_process

VERDICT = re.compile(r"idx=(\d+) valid=(True|False) reason=(\w+)")
INVALID = re.compile(r"^med-halt (\S+) \(idx (\d+)\) is invalid: (.+)$", re.MULTILINE)


def validate_command(*options: str, assets: Path | None = None, timeout: int = 900) -> Validation:
    """The `validate med-halt` executable, its verdicts read from its log lines."""
    env = dict(os.environ)
    if assets is not None:
        env["MEDHAL_ASSETS_DIR"] = str(assets)
    argv = [str(BIN / "validate"), "med-halt", "--runtime.type", "subprocess", "--no-rich", *options]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, check=False)
    output = proc.stdout + proc.stderr
    result = Validation(error=None if proc.returncode == 0 else output[-3000:])
    for idx, ok, reason in VERDICT.findall(output):
        assert int(idx) not in result.valid, f"idx {idx} reported twice"
        result.valid[int(idx)] = ok == "True"
        assert (reason == "valid") is (ok == "True"), (idx, ok, reason)
    for _source_id, idx, why in INVALID.findall(output):
        result.reasons.setdefault(int(idx), []).append(why)
    return result


def validate(*options: str, assets: Path | None = None) -> Validation:
    return validate_in_process("med-halt", *options, assets=assets)


def taskset_args(options: dict) -> list[str]:
    return [
        arg for key, value in options.items() for arg in (f"--taskset.{key.replace('_', '-')}", str(value))
    ]


def assert_all_valid(result: Validation, n: int) -> None:
    assert result.error is None, result.error
    assert sorted(result.valid) == list(range(n))
    assert not result.invalid, {idx: result.reasons.get(idx) for idx in sorted(result.invalid)}
    assert result.reasons == {}


# ------------------------------------------------------------------------------ demo rows


def test_demo_rows_are_valid_with_the_pinned_prompts(assets_dir):
    """The `validate` executable, end to end."""
    assert_all_valid(validate_command(*taskset_args(DEMO_OPTIONS), assets=assets_dir), 21)


@pytest.mark.parametrize("parser", ["medhal", "authors", "strict"])
def test_demo_rows_are_valid_under_every_convention_with_the_demo_prompts(parser, tmp_path):
    """No pinned asset is needed (an empty offline directory)."""
    result = validate(*taskset_args({**DEMO_OPTIONS, "prompts": "demo", "parser": parser}), assets=tmp_path)
    assert_all_valid(result, 21)


# ------------------------------------------------------------------------------ real rows


def test_real_sample_rows_of_every_set_are_valid(assets_dir):
    samples = assets_dir / "medhalt" / "samples"
    assert_all_valid(
        validate("--taskset.subset", "all", "--taskset.dataset-path", str(samples), assets=assets_dir), 7 * 16
    )


def test_real_sample_rows_under_the_authors_reading(assets_dir):
    """The authors' regex ends a value at its first comma: the two sample papers whose
    title holds a comma (IR_pubmedlink2title rows 6 and 15, idx 64 + 5 and 64 + 14)
    cannot be answered right under `--taskset.parser authors`; every other row can."""
    samples = assets_dir / "medhalt" / "samples"
    result = validate(
        "--taskset.subset",
        "all",
        "--taskset.dataset-path",
        str(samples),
        "--taskset.parser",
        "authors",
        assets=assets_dir,
    )
    assert result.error is None and sorted(result.valid) == list(range(112))
    assert result.invalid == {69, 78}
    for idx in (69, 78):
        [why] = result.reasons[idx]
        assert why.startswith("the gold reply \"{'is_paper_exists': 'Yes', 'paper_title': ") and why.endswith(
            "earns 0.0, not 1.0"
        )
    assert (
        "Brain Tumor After Surgery" in result.reasons[69][0]
        and "osteoblast/osteoclast cocultures, bone" in result.reasons[78][0]
    )


@pytest.mark.slow(
    reason="every task of the full fake-question and IR files (16,606 rows), scored under every convention"
)
@pytest.mark.parametrize(
    ("name", "file", "n"),
    [
        ("reasoning_fake", "reasoning_fake.csv", 1_858),
        ("IR_pmid2title", "IR_pmid2title.json", 4_916),
        ("IR_pubmedlink2title", "IR_pubmedlink2title.json", 4_916),
        ("IR_title2pubmedlink", "IR_title2pubmedlink.json", 4_916),
    ],
)
def test_real_files_are_valid(assets_dir, name, file, n):
    path = assets_dir / "medhalt" / file
    assert_all_valid(
        validate("--taskset.subset", name, "--taskset.dataset-path", str(path), assets=assets_dir), n
    )


# ------------------------------------------------------------------------------ broken rows

NOTA_FIELDS = [
    "id",
    "dataset",
    "question",
    "options",
    "correct_answer",
    "correct_index",
    "split_type",
    "subject_name",
    "topic_name",
    "year",
    "exam_name",
]


def nota(n: int, option: str) -> dict:
    return {
        "id": f"ours-{n}",
        "dataset": "medmcqa",
        "question": f"Question {n}?",
        "options": repr({"0": option, "1": "Other"}),
        "correct_answer": option,
        "correct_index": 0,
        "split_type": "test",
        "subject_name": "",
        "topic_name": "",
        "year": "",
        "exam_name": "",
    }


def write_rows(path: Path, rows: list[dict]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_rows_that_load_but_cannot_be_answered_are_reported_invalid(assets_dir, tmp_path):
    """Row 1: a gold holding a closing think tag (an option text can hold anything): the
    medhal reading takes the tag for the end of a reasoning block, so even the perfect
    reply is read wrong. Row 2: a gold holding a line break: the perfect reply (a Python
    dict, as the prompt shows) writes it as \\n, which the authors' regex reads literally,
    so it is invalid under the authors' reading only. Row 3 is an ordinary row."""
    path = write_rows(
        tmp_path / "reasoning_nota.csv",
        [nota(1, "a</think>b"), nota(2, "line one\nline two"), nota(3, "Pancreas")],
    )
    args = ("--taskset.subset", "reasoning_nota", "--taskset.dataset-path", str(path))
    medhal = validate(*args, assets=assets_dir)
    assert medhal.valid == {0: False, 1: True, 2: True}
    cut_reply = "{'cop': 'a</think>b', 'cop_index': 0, 'why_correct': 'Checked against the question.'}"
    assert medhal.reasons == {
        0: [
            f'the gold reply "{cut_reply}" earns 0.0, not 1.0',
            "the gold reply is not read under parsed_medhal",
        ]
    }
    authors = validate(*args, "--taskset.parser", "authors", assets=assets_dir)
    assert authors.valid == {0: False, 1: False, 2: True}
    assert authors.reasons[0] == ["the gold reply is not read under parsed_medhal"]
    escaped_reply = (
        "{'cop': 'line one\\\\nline two', 'cop_index': 0, 'why_correct': 'Checked against the question.'}"
    )
    assert authors.reasons[1] == [f'the gold reply "{escaped_reply}" earns 0.0, not 1.0']
    strict = validate(*args, "--taskset.parser", "strict", assets=assets_dir)
    assert strict.valid == {0: False, 1: True, 2: True}  # valid reward, but medhal cannot read row 1
    assert strict.reasons == {0: ["the gold reply is not read under parsed_medhal"]}


def test_fct_row_whose_options_lack_the_proposed_answer_is_refused_at_load(assets_dir, tmp_path):
    row = {**nota(1, "Pancreas"), "student_answer": "Pancreas", "student_index": 0}
    path = write_rows(tmp_path / "reasoning_FCT.csv", [row])
    result = validate(
        "--taskset.subset", "reasoning_FCT", "--taskset.dataset-path", str(path), assets=assets_dir
    )
    assert result.error is not None and result.valid == {}
    assert (
        f"{path}: row 1: field 'options' has no 'correct answer' entry (the proposed answer)" in result.error
    )


def test_a_refused_dataset_is_one_line_from_the_validate_executable(assets_dir, tmp_path):
    """The executable, not the in-process check: verifiers lets the load error end the program,
    which printed a 29-line traceback."""
    path = write_rows(
        tmp_path / "reasoning_nota.csv",
        [nota(1, "Pancreas"), {**nota(2, "Liver"), "correct_answer": "Kidney"}],
    )
    env = {**os.environ, "MEDHAL_ASSETS_DIR": str(assets_dir)}
    argv = [str(BIN / "validate"), "med-halt", "--runtime.type", "subprocess", "--no-rich"]
    argv += ["--taskset.subset", "reasoning_nota", "--taskset.dataset-path", str(path)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=900, env=env, check=False)
    assert proc.returncode == 2, proc.stderr[-3000:]
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines == [
        f"error: {path}: row 2: field 'correct_answer' 'Kidney' is not the text of any option "
        "(the item could never be answered right)"
    ]
