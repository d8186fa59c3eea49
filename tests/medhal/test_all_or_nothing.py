"""Outputs written all or nothing, and never over someone else's (part of the fault suite):
`medhal score` refuses an eval run's traces.jsonl; a failed score or a failed report of
several runs leaves every old file as it was; two trace files side by side cannot replace
each other's report; a writer killed with kill -9 leaves no temporary file for good."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import medhal.reports.html
from medhal.kit.files import atomic_write_text
from tests.medfact_bench.fixtures import DEMO_ROWS, score_demo, write_predictions
from tests.running import clean_exit_2, medhal_main

REPLIES = ["<score>2</score>", "<score>-2</score>", "<score>0</score>", "no", "<score>1</score>", "x"]


def snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def temporaries(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.rglob("*") if ".tmp-" in p.name)


def score(out: Path, replies: list[str], *args: str):
    predictions = write_predictions(out.parent / f"{out.name}-p.jsonl", dict(enumerate(replies)))
    return medhal_main(
        "score", "medfact-bench", "--predictions", str(predictions), "-o", str(out),
        "--dataset-path", str(DEMO_ROWS), "--no-plots", *args,
    )  # fmt: skip


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> Path:
    return score_demo(REPLIES, tmp_path_factory.mktemp("scored") / "run", "--no-plots")


def test_score_refuses_to_replace_an_eval_runs_traces(scored, tmp_path):
    run = tmp_path / "eval-run"
    shutil.copytree(scored, run)
    rows = [json.loads(line) for line in (run / "traces.jsonl").read_text().splitlines()]
    for row in rows:
        row["agent"]["harness"]["id"] = "bash"  # what `eval` records
    (run / "traces.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    before = snapshot(run)
    line = clean_exit_2(score(run, ["<score>1</score>"] * 6), "traces.jsonl", "not written by medhal score")
    assert "--overwrite" in line
    assert snapshot(run) == before
    assert score(run, ["<score>1</score>"] * 6, "--overwrite").returncode == 0
    assert (
        json.loads((run / "traces.jsonl").read_text().splitlines()[0])["agent"]["harness"]["id"] == "offline"
    )


@pytest.mark.parametrize("content", ["", "not json\n", '{"agent": 1}\n'])
def test_score_refuses_a_traces_file_it_cannot_recognise(tmp_path, content):
    run = tmp_path / "run"
    run.mkdir()
    (run / "traces.jsonl").write_text(content)
    clean_exit_2(score(run, REPLIES), "not written by medhal score")
    assert (run / "traces.jsonl").read_text() == content


def test_score_replaces_its_own_output(scored, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(scored, run)
    assert score(run, ["<score>1</score>"] * 6).returncode == 0
    assert json.loads((run / "report.json").read_text())["n"] == 6


def failing_on_call(monkeypatch, number: int) -> None:
    """report.html fails on its `number`-th rendering in this test."""
    real, calls = medhal.reports.html.report_html, []

    def report_html(*args, **kwargs):
        calls.append(1)
        if len(calls) == number:
            raise RuntimeError("rendering failed")
        return real(*args, **kwargs)

    monkeypatch.setattr(medhal.reports.html, "report_html", report_html)


def test_a_failed_score_leaves_the_previous_traces_and_report(scored, tmp_path, monkeypatch):
    run = tmp_path / "run"
    shutil.copytree(scored, run)
    before = snapshot(run)
    failing_on_call(monkeypatch, 1)
    with pytest.raises(RuntimeError, match="rendering failed"):
        score(run, ["<score>1</score>"] * 6)
    assert snapshot(run) == before
    assert temporaries(run) == []


def test_a_report_failing_on_run_2_writes_nothing(scored, tmp_path, monkeypatch):
    runs = [tmp_path / "a", tmp_path / "b"]
    for run in runs:
        shutil.copytree(scored, run)
    out = tmp_path / "out"
    failing_on_call(monkeypatch, 2)
    with pytest.raises(RuntimeError, match="rendering failed"):
        medhal_main("report", *map(str, runs), "-o", str(out), "--no-plots")
    assert not out.exists() or [p for p in out.rglob("*") if p.is_file()] == []
    # without -o, each run's old report stays as it was
    before = [snapshot(run) for run in runs]
    failing_on_call(monkeypatch, 2)
    with pytest.raises(RuntimeError, match="rendering failed"):
        medhal_main("report", *map(str, runs), "--no-plots")
    assert [snapshot(run) for run in runs] == before
    assert temporaries(tmp_path) == []


def test_two_trace_files_in_one_directory_cannot_replace_each_others_report(scored, tmp_path):
    shutil.copy(scored / "traces.jsonl", tmp_path / "a.jsonl")
    shutil.copy(scored / "traces.jsonl", tmp_path / "b.jsonl")
    proc = medhal_main("report", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--no-plots")
    clean_exit_2(proc, "b.jsonl", "a.jsonl", "-o")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "b.jsonl"]
    out = tmp_path / "out"
    proc = medhal_main("report", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert (out / "run1" / "report.json").is_file() and (out / "run2" / "report.json").is_file()


KILLED_WRITER = """
import os, signal, sys
from medhal.kit.files import atomic_open
with atomic_open(sys.argv[1], "w") as f:
    f.write("half a file")
    f.flush()
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_writer_killed_with_kill_9_leaves_no_temporary_for_good(tmp_path):
    target = tmp_path / "traces.jsonl"
    proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(target)], timeout=120)
    assert proc.returncode == -signal.SIGKILL
    left = temporaries(tmp_path)
    assert len(left) == 1 and not target.exists()  # what kill -9 leaves
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = tmp_path / f"traces.jsonl.tmp-medhal-{sleeper.pid}-abcdef"
        live.write_text("still being written")
        atomic_write_text(target, "whole\n")  # the next write of the same file cleans up
        assert temporaries(tmp_path) == [live.name]  # a running writer's file is kept
    finally:
        sleeper.kill()
        sleeper.wait()
    assert target.read_text() == "whole\n"
    os.unlink(live)


# ------------------------------------------------- the commit: all renames or none (issue 33)


def test_a_target_that_cannot_be_replaced_stops_the_commit_before_any_rename(scored, tmp_path):
    # Issue 33 item 9: report.html is a directory, so its rename fails; traces, report.json
    # and report.md were already replaced when score exited 2. Now nothing is.
    run = tmp_path / "run"
    shutil.copytree(scored, run)
    (run / "report.html").unlink()
    (run / "report.html").mkdir()
    before = snapshot(run)
    clean_exit_2(score(run, ["<score>1</score>"] * 6), "report.html")
    assert snapshot(run) == before and (run / "report.html").is_dir()
    assert temporaries(run) == []
    clean_exit_2(medhal_main("report", str(run), "--no-plots", "--allow-incomplete"), "report.html")
    assert snapshot(run) == before and temporaries(run) == []


def test_a_rename_that_fails_midway_puts_back_what_was_renamed(tmp_path, monkeypatch):
    # A failure no check before the renames can see (the disk, a race): the files renamed
    # before it get their old content back, a file that was new is removed again.
    from medhal.kit.files import StagedFiles

    for name in ("a", "b", "d"):
        (tmp_path / name).write_text(f"old {name}")
    real, calls = os.replace, []

    def replace(src, dst):
        calls.append(Path(dst).name)
        if Path(dst).name == "d" and Path(src).name.startswith("d.tmp-"):
            raise OSError(28, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with StagedFiles() as staged:
        for name in ("a", "b", "c", "d"):
            staged.write(tmp_path / name, f"new {name}")
        with pytest.raises(OSError, match="No space left"):
            staged.commit()
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == {"a": "old a", "b": "old b", "d": "old d"}


def test_score_overwrite_of_an_eval_run_removes_its_config_with_the_traces(scored, tmp_path):
    # Issue 33 item 6: `score --overwrite` over an eval run kept the eval's config.toml, so
    # the new traces were judged against its rollout count (num_rollouts = 3: incomplete from
    # then on). The config belongs to the traces it replaces: it goes, in the same commit.
    run = tmp_path / "eval-run"
    shutil.copytree(scored, run)
    rows = [json.loads(line) for line in (run / "traces.jsonl").read_text().splitlines()]
    for row in rows:
        row["agent"]["harness"]["id"] = "bash"
    (run / "traces.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run / "config.toml").write_text('model = "m"\nnum_rollouts = 3\n')
    proc = score(run, ["<score>1</score>"] * 6, "--overwrite")
    assert proc.returncode == 0, proc.stderr
    assert not (run / "config.toml").exists()
    assert json.loads((run / "report.json").read_text())["complete"] is True
    assert medhal_main("report", str(run), "--no-plots").returncode == 0
    # Refused (report.html a directory): the config stays with the traces it describes.
    shutil.copytree(scored, tmp_path / "again")
    (tmp_path / "again" / "config.toml").write_text("num_rollouts = 3\n")
    (tmp_path / "again" / "report.html").unlink()
    (tmp_path / "again" / "report.html").mkdir()
    before = snapshot(tmp_path / "again")
    clean_exit_2(score(tmp_path / "again", ["<score>1</score>"] * 6, "--overwrite"), "report.html")
    assert snapshot(tmp_path / "again") == before
