"""A run split across eval processes (`--taskset.shard i/k`) is reported as one run with
`medhal report --merge`, checked for overlap and gaps."""

from __future__ import annotations

import json
import subprocess

import pytest
from pydantic import ValidationError

from tests.conftest import BIN, run_eval
from tests.medfact_bench.fixtures import DEMO_ROWS as DEMO


def report(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "medhal"), "report", "--no-plots", *args], capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    from tests.scripted_endpoint import ScriptedEndpoint, constant

    root = tmp_path_factory.mktemp("shards")
    with ScriptedEndpoint(constant("<think>x</think><score>2</score>")) as endpoint:
        for i in range(2):
            rows = run_eval(
                "medfact-bench",
                endpoint.base_url,
                root / f"shard{i}",
                "--taskset.dataset-path",
                str(DEMO),
                "--taskset.shard",
                f"{i}/2",
            )
            assert sorted(r["task"]["data"]["idx"] for r in rows) == [i, i + 2, i + 4]
    return root


def test_each_shard_is_whole_on_its_own(shards):
    proc = report(str(shards / "shard1"))
    assert proc.returncode == 0, proc.stderr
    data = json.loads((shards / "shard1" / "report.json").read_text())
    assert (data["n"], data["n_expected"], data["shards"], data["complete"]) == (3, 3, ["1/2"], True)


def test_merged_shards_are_one_complete_run(shards, tmp_path):
    proc = report("--merge", str(shards / "shard0"), str(shards / "shard1"), "-o", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    data = json.loads((tmp_path / "report.json").read_text())
    assert (data["n"], data["n_expected"], data["n_duplicates"], data["shards"]) == (6, 6, 0, ["0/2", "1/2"])
    # gold = SUPPORT, CONTRADICT, SUPPORT, NEI, SUPPORT, CONTRADICT; every reply reads SUPPORT,
    # so idx 0, 2, 4 are right: 3/6.
    assert data["micro_accuracy"] == pytest.approx(0.5)


def test_a_missing_shard_is_a_gap_and_a_repeated_one_is_overlap(shards, tmp_path):
    twice = report("--merge", str(shards / "shard0"), str(shards / "shard0"), "-o", str(tmp_path / "twice"))
    assert (
        twice.returncode == 1
        and "3 traces repeat the same trace of a task" in twice.stderr
        and "3 of 6 tasks have no trace" in twice.stderr
    )
    data = json.loads((tmp_path / "twice" / "report.json").read_text())
    assert data["missing_idx"] == [1, 3, 5]


def test_shard_option_is_checked():
    from medfact_bench.taskset import MedFactConfig

    for bad in ("2/2", "a/b", "1/0", "-1/3"):
        with pytest.raises(ValidationError):
            MedFactConfig(shard=bad)
    assert MedFactConfig(shard="1/3").shard == "1/3"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0/1", (0, 1)),
        ("3/4", (3, 4)),
        ("999999998/999999999", (999999998, 999999999)),
        ("4/4", None),  # the index is below the count
        ("5/4", None),
        ("1/0", None),
        ("0/0", None),
        ("01/3", None),  # one spelling per shard: no leading zeros
        ("1/03", None),
        ("-1/3", None),
        ("+1/3", None),
        ("1 /3", None),
        ("1/3\n", None),
        ("1/3/5", None),
        ("\u0661/\u0662", None),  # Arabic-Indic digits: int() reads them, a shard is ASCII
        ("1/1000000000", None),  # ten digits: not read from an untrusted trace
        ("", None),
        (None, None),
        (3, None),
        (["1/3"], None),
    ],
)
def test_one_shard_syntax(text, expected):
    """The option, the trace reader and the report read shards through `parse_shard`."""
    from medfact_bench.taskset import MedFactConfig
    from medhal.kit.shards import parse_shard

    assert parse_shard(text) == expected
    if isinstance(text, str):
        if expected is None:
            with pytest.raises(ValidationError):
                MedFactConfig(shard=text)
        else:
            assert MedFactConfig(shard=text).shard == text
