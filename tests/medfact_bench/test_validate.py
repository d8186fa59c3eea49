"""`validate medfact-bench` (verifiers' model-free task check) over real and demo rows, and
the reasons an invalid task is reported with.

`MedFactTask.validate` scores the gold reply (the gold label's strongest score in the exact
format the prompt asks for) and a wrong one through the task's own scoring: the gold reply
must earn 1 and be read under every convention, the wrong one must earn 0.
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
from pathlib import Path

import pytest

from medfact_bench.benchmark import DEMO_OPTIONS
from medfact_bench.taskset import MedFactConfig, MedFactTaskset
from medhal.kit.task import validate_task
from tests.conftest import BIN
from tests.medfact_bench.fixtures import rows
from tests.tables import read_jsonl, write_jsonl
from tests.validation import validate as validate_in_process

RESULT = re.compile(r"idx=(\d+) valid=(True|False) reason=(\w+)")


def validate_command(dataset: Path, *options: str) -> dict[int, tuple[str, str]]:
    """Run the `validate` executable; {idx: (valid, reason)} from its per-task log lines."""
    proc = subprocess.run(
        [
            str(BIN / "validate"),
            "medfact-bench",
            "--runtime.type",
            "subprocess",
            "--no-rich",
            "--taskset.dataset-path",
            str(dataset),
            *options,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = [m.groups() for m in RESULT.finditer(proc.stdout + proc.stderr)]
    results = {int(idx): (valid, reason) for idx, valid, reason in found}
    assert len(results) == len(found), "a task was reported twice"
    return results


def validate(dataset: Path, *options: str) -> dict[int, bool]:
    """The same validation in this process (tests.validation): {idx: valid}."""
    result = validate_in_process("medfact-bench", "--taskset.dataset-path", str(dataset), *options)
    assert result.error is None, result.error
    return result.valid


def test_demo_rows_are_all_valid():
    path = Path(DEMO_OPTIONS["dataset_path"])
    n = len(read_jsonl(path))
    assert n == 6
    assert validate_command(path) == dict.fromkeys(range(n), ("True", "valid"))


def test_real_inputs_are_all_valid(shared_data, tmp_path):
    """The 340 Med-V1 example inputs (system prompt, user prompt, claim and source, in the
    same order in both files), labelled by us (SUPPORT, NEI, CONTRADICT in turn; component
    scifact), validated under the strict convention."""
    prompts = read_jsonl(shared_data / "medfact/prompts_example_input_file.jsonl")
    pairs = json.loads(
        (shared_data / "medfact/claim_source_example_input_file.json").read_text(encoding="utf-8")
    )
    assert len(prompts) == len(pairs) == 340
    labels = ("SUPPORT", "NEI", "CONTRADICT")
    data = [
        {
            "dataset": "scifact",
            "claim": pair["claim"],
            "source": pair["source"],
            "label": labels[i % 3],
            "system_prompt": prompt["system_prompt"],
            "user_prompt": prompt["user_prompt"],
        }
        for i, (prompt, pair) in enumerate(zip(prompts, pairs, strict=True))
    ]
    path = write_jsonl(tmp_path / "medv1_inputs.jsonl", data)
    assert validate(path, "--taskset.parser", "strict") == dict.fromkeys(range(340), True)


@pytest.fixture
def task(tmp_path):
    """A loaded task, gold SUPPORT."""
    tasks = MedFactTaskset(
        MedFactConfig(dataset_path=str(write_jsonl(tmp_path / "d.jsonl", rows(3))))
    ).select()
    assert tasks[0].data.label == "SUPPORT"
    return tasks[0]


GOLD = "<think>The article was weighed against the claim.</think>\n<score>2</score>"
WRONG = "<think>The article was weighed against the claim.</think>\n<score>-2</score>"


async def test_a_task_whose_scoring_cannot_pay_is_invalid_with_its_reason(task, caplog):
    """Loading refuses a row with an unknown label (`rows.validate_rows`), so such a task
    cannot reach the `validate` command; here one is made by hand: gold label 'TRUE', which
    no score maps to, so the gold reply earns 0."""
    broken = type(task)(task.data.model_copy(update={"label": "TRUE"}), task.config)
    with caplog.at_level(logging.WARNING, logger="medhal.kit.task"):
        assert await validate_task(broken, GOLD, WRONG, 1.0, 0.0) is False
    assert [r.getMessage() for r in caplog.records] == [
        f"medfact-bench scifact:0 (idx 0) is invalid: the gold reply {GOLD!r} earns 0.0, not 1.0"
    ]


async def test_other_reasons_are_named(task, caplog):
    with caplog.at_level(logging.WARNING, logger="medhal.kit.task"):
        assert await validate_task(task, GOLD, WRONG, 1.0, 0.0) is True
        assert caplog.records == []
        # A gold reply that pays under the run's convention (medhal) but not in the exact format.
        assert await validate_task(task, "<score>2</score>", WRONG, 1.0, 0.0) is False
        # A "wrong" reply that pays: a reward that always pays is caught.
        assert await validate_task(task, GOLD, GOLD, 1.0, 0.0) is False
        # No gold reply at all.
        assert await validate_task(task, None, WRONG, 1.0, 0.0) is False
    assert [r.getMessage() for r in caplog.records] == [
        "medfact-bench scifact:0 (idx 0) is invalid: the gold reply is not read under parsed_strict",
        f"medfact-bench scifact:0 (idx 0) is invalid: the wrong reply {GOLD!r} earns 1.0, not 0.0",
        "medfact-bench scifact:0 (idx 0) is invalid: no gold reply can be written for it",
    ]
