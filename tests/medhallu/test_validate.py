"""`validate medhallu` (verifiers' model-free task check) on the demo rows and on the 1,000
shared rows, and what makes a MedHallu task invalid.

`MedHalluTask.validate` scores the reply a perfect model gives ("0"/"1", the prompt's own
format) and a wrong one through the task's own scoring: the first must earn 1 and be read
under every convention, the second 0. No row that loads can fail it: the gold reply
depends only on the item's label, and every label loading makes has one. So the invalid
path is tested on tasks whose gold is changed after loading (`check_replies` /
`validate_task`), and a row whose two answers are the same text (a pair no model can get
both right) is refused at load, naming the row and the field.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
from pathlib import Path

import pytest

from medhal.kit.task import check_replies, validate_task
from tests.conftest import BIN
from tests.medhallu.fixtures import demo_options, demo_rows_path, labeled_rows, load
from tests.tables import read_jsonl, write_jsonl
from tests.validation import Validation
from tests.validation import validate as validate_in_process

LOG_LINE = re.compile(r"idx=(\d+) valid=(True|False) reason=(\w+)")


@pytest.fixture
def labeled(shared_data) -> Path:
    return labeled_rows(shared_data)


def validate_command(
    dataset: str, *args: str, timeout: int = 600
) -> tuple[subprocess.CompletedProcess, dict[int, tuple[bool, str]]]:
    """The `validate medhallu` executable on the subprocess runtime, logging one line per
    task; returns the process and {idx: (valid, reason)} parsed from its `idx=... valid=...
    reason=...` lines."""
    argv = [
        str(BIN / "validate"),
        "medhallu",
        "--runtime.type",
        "subprocess",
        "--no-rich",
        "--taskset.dataset-path",
        dataset,
        *args,
    ]
    proc = subprocess.run(
        argv, capture_output=True, text=True, timeout=timeout, env=dict(os.environ), check=False
    )
    results: dict[int, tuple[bool, str]] = {}
    for match in LOG_LINE.finditer(proc.stdout + proc.stderr):
        idx = int(match.group(1))
        assert idx not in results, f"idx {idx} reported twice"
        results[idx] = (match.group(2) == "True", match.group(3))
    return proc, results


def validate(dataset: str, *args: str) -> Validation:
    """The same validation in this process (tests.validation)."""
    return validate_in_process("medhallu", "--taskset.dataset-path", dataset, *args)


def test_validate_demo_rows(assets_dir):
    """The `validate` executable, end to end."""
    proc, results = validate_command(str(demo_rows_path()))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert results == dict.fromkeys(range(6), (True, "valid"))  # 3 rows x 2 answers
    assert "validating 6 task(s) from medhallu" in proc.stdout + proc.stderr


def test_validate_demo_rows_binary_strict_with_knowledge(assets_dir):
    result = validate(
        str(demo_rows_path()),
        "--taskset.parser",
        "strict",
        "--taskset.not-sure",
        "false",
        "--taskset.knowledge",
        "true",
    )
    assert result.error is None, result.error
    assert result.valid == dict.fromkeys(range(6), True) and result.reasons == {}


def test_validate_shared_rows(assets_dir, labeled):
    result = validate(str(labeled))
    assert result.error is None, result.error
    assert result.valid == dict.fromkeys(range(2000), True)  # 1,000 rows x 2 answers
    assert result.reasons == {}


# --------------------------------------------------------------- what makes a task invalid


def _relabel(task, label: str):
    task.data = task.data.model_copy(update={"label": label})
    return task


async def test_a_task_whose_reward_never_pays_is_invalid(assets_dir, caplog):
    task = _relabel(load(**demo_options())[1], "not_sure")  # no reply can be right about this gold
    # gold_reply of a non-factual label is "1" (read as hallucinated: earns 0), wrong_reply "0"
    assert await check_replies(task, "1", "0", 1.0, 0.0) == ["the gold reply '1' earns 0.0, not 1.0"]
    with caplog.at_level(logging.WARNING, logger="medhal.kit.task"):
        assert await task.validate() is False
    assert "medhallu pqa_labeled:0 (idx 1) is invalid: the gold reply '1' earns 0.0, not 1.0" in caplog.text


async def test_a_reward_that_always_pays_is_caught(assets_dir):
    task = load(**demo_options())[1]  # hallucinated
    assert await check_replies(task, "1", "1", 1.0, 0.0) == ["the wrong reply '1' earns 1.0, not 0.0"]
    assert await check_replies(task, "1", "0", 1.0, 0.0) == []
    assert await task.validate() is True


async def test_a_gold_reply_not_read_under_every_convention_is_caught(assets_dir):
    task = load(**demo_options())[0]  # factual
    # "Answer: 0" earns 1 under medhal (the run's reading) but strict cannot read it
    assert await check_replies(task, "Answer: 0", "1", 1.0, 0.0) == [
        "the gold reply is not read under parsed_strict"
    ]
    # "The answer is factual." is also unreadable to strict, and the authors read it as 0 (no 1/not/non)
    assert await check_replies(task, "The answer is factual.", "1", 1.0, 0.0) == [
        "the gold reply is not read under parsed_strict"
    ]


async def test_a_task_without_a_gold_reply_is_invalid(assets_dir, caplog):
    task = load(**demo_options())[2]
    with caplog.at_level(logging.WARNING, logger="medhal.kit.task"):
        assert await validate_task(task, None, "1", 1.0, 0.0) is False
    assert "medhallu pqa_labeled:1 (idx 2) is invalid: no gold reply can be written for it" in caplog.text


async def test_swapped_labels_still_validate(assets_dir):
    """The gold reply follows the label, so relabelling a task does not make it invalid:
    validation checks the scoring, not whether the label is true of the answer text."""
    task = _relabel(load(**demo_options())[0], "hallucinated")
    assert await task.validate() is True


def test_row_with_identical_answers_is_refused_or_invalid(assets_dir, tmp_path):
    rows = read_jsonl(demo_rows_path())
    rows[1]["Hallucinated Answer"] = rows[1]["Ground Truth"]
    path = write_jsonl(tmp_path / "pqa_labeled.jsonl", rows)
    result = validate(str(path))
    if result.error is not None:  # refused when loading: the message names the row
        assert "row 2" in result.error, result.error
        return
    assert set(result.valid) == set(range(6))
    assert (result.valid[2], result.valid[3]) == (False, False)  # the row's two items
    assert all(result.valid[i] for i in (0, 1, 4, 5))
