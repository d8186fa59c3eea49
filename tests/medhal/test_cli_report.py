"""`medhal report` as users run it: gates on error rate and completeness, untrusted trace
files, and outputs that are never left half-written. The command runs in this process
(`tests.running.medhal_main`) except where a test says it runs the executable."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import BIN
from tests.medfact_bench.fixtures import score_demo
from tests.running import medhal_main

REPLIES = [
    "<think>a</think><score>2</score>",
    "<think>b</think><score>-2</score>",
    "<score>0</score>",
    "no score",
    "<score>1</score>",
    "<score>-1</score>",
]


def medhal(*args: str) -> subprocess.CompletedProcess:
    """`medhal ARGS` in this process (its `main`: parsing, handlers, exit status)."""
    return medhal_main(*args)


def medhal_process(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    """The `medhal` executable itself, for the tests that run it end to end."""
    return subprocess.run([str(BIN / "medhal"), *args], capture_output=True, text=True, timeout=timeout)


def one_line_error(proc: subprocess.CompletedProcess) -> str:
    """The error output must be exactly one line, with no traceback."""
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> Path:
    """A complete MedFact-Bench run of the six demo rows, scored offline."""
    return score_demo(REPLIES, tmp_path_factory.mktemp("scored") / "run", "--no-plots")


def copy_run(scored: Path, tmp_path: Path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(scored, run)
    return run


def test_a_complete_run_passes_the_gate(scored, tmp_path):
    run = copy_run(scored, tmp_path)
    proc = medhal_process("report", str(run), "--no-plots")
    assert proc.returncode == 0, proc.stderr
    report = json.loads((run / "report.json").read_text())
    assert (report["n"], report["n_expected"], report["complete"]) == (6, 6, True)
    assert {"report.json", "report.md", "report.html"} <= {p.name for p in run.iterdir()}


def test_duplicated_traces_fail_unless_allowed(scored, tmp_path):
    run = copy_run(scored, tmp_path)
    traces = run / "traces.jsonl"
    traces.write_text(traces.read_text() * 2)  # cat traces.jsonl traces.jsonl
    proc = medhal("report", str(run), "--no-plots")
    assert proc.returncode == 1
    assert "6 traces repeat the same trace of a task" in proc.stderr
    report = json.loads((run / "report.json").read_text())
    assert (report["n"], report["n_duplicates"]) == (12, 6)
    assert "Incomplete run" in (run / "report.md").read_text()
    assert medhal("report", str(run), "--no-plots", "--allow-incomplete").returncode == 0


def test_a_killed_run_fails_and_names_the_gap(scored, tmp_path):
    run = copy_run(scored, tmp_path)
    traces = run / "traces.jsonl"
    lines = traces.read_text().splitlines(keepends=True)
    traces.write_text("".join(lines[:4]))  # idx 4 and 5 never written
    proc = medhal("report", str(run), "--no-plots", "--max-error-rate", "1")
    assert proc.returncode == 1 and "2 of 6 tasks have no trace" in proc.stderr
    report = json.loads((run / "report.json").read_text())
    assert (report["n_missing"], report["missing_idx"]) == (2, [4, 5])


def test_a_failed_report_keeps_the_previous_good_one(scored, tmp_path):
    run = copy_run(scored, tmp_path)
    assert medhal("report", str(run), "--no-plots").returncode == 0
    good = {p.name: p.read_bytes() for p in run.iterdir() if p.name.startswith("report.")}
    traces = run / "traces.jsonl"
    traces.write_text(traces.read_text() + '{"task": {"data": {"benchmark": "medfact-bench", "idx": 2')
    proc = medhal("report", str(run), "--no-plots")
    assert proc.returncode == 2
    assert "traces.jsonl:7" in one_line_error(proc)
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.name.startswith("report.")} == good
    assert not [p for p in run.iterdir() if ".tmp-" in p.name]


@pytest.mark.parametrize("name", ["this", "antigravity", "os", "../../etc/passwd"])
def test_a_trace_naming_a_module_never_imports_it(scored, tmp_path, name):
    run = copy_run(scored, tmp_path)
    rows = [json.loads(line) for line in (run / "traces.jsonl").read_text().splitlines()]
    rows[0]["task"]["data"]["benchmark"] = name
    (run / "traces.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = medhal("report", str(run), "--no-plots")
    assert proc.returncode == 2
    line = one_line_error(proc)
    assert (
        "traces.jsonl:1: field 'task.data.benchmark'" in line
        and "not an installed medhal environment" in line
    )
    assert "Zen of Python" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "1.5", "abc"])
def test_max_error_rate_must_be_a_rate(scored, value):
    proc = medhal("report", str(scored), "--max-error-rate", value)
    assert proc.returncode == 2
    assert "--max-error-rate" in one_line_error(proc)


def test_error_rate_gate(scored, tmp_path):
    run = copy_run(scored, tmp_path)
    rows = [json.loads(line) for line in (run / "traces.jsonl").read_text().splitlines()]
    rows[1]["errors"] = [{"type": "ProviderError", "message": "HTTP 500 from the endpoint"}]
    (run / "traces.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = medhal("report", str(run), "--no-plots")
    assert (
        proc.returncode == 1
        and "1 of 6 rollouts failed" in proc.stderr
        and "HTTP # from the endpoint" in proc.stderr
    )
    assert medhal("report", str(run), "--no-plots", "--max-error-rate", "0.2").returncode == 0


def test_comparing_two_runs_of_the_same_tasks_is_paired(scored, tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    shutil.copytree(scored, first)
    shutil.copytree(scored, second)
    rows = [json.loads(line) for line in (second / "traces.jsonl").read_text().splitlines()]
    for row in rows[:3]:
        for key in list(row["metrics"]):
            if key.startswith("correct"):
                row["metrics"][key] = 0.0
    (second / "traces.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "cmp"
    proc = medhal("report", str(first), str(second), "-o", str(out), "--no-plots")
    assert proc.returncode == 0, proc.stderr
    comparison = json.loads((out / "comparison.json").read_text())[0]
    row = comparison["runs"][1]
    assert row["paired"] is True and row["differs_in"] == []
    # gold: SUPPORT, CONTRADICT, SUPPORT, NEI, SUPPORT, CONTRADICT (the demo rows);
    # run 1 reads SUPPORT, CONTRADICT, NEI, INVALID, SUPPORT, CONTRADICT: right on idx 0, 1, 4, 5 (4/6).
    # run 2 is wrong on idx 0..2: right on 4, 5 (2/6). Right only in run 1: idx 0, 1 (b = 2); c = 0.
    # McNemar exact: 2 * P(X <= 0), X ~ Bin(2, 1/2) = 2 * 1/4 = 0.5. Difference 2/6 - 4/6 = -1/3.
    assert row["mcnemar"] == {
        "right_only_in_first": 2,
        "right_only_in_this": 0,
        "p_value": pytest.approx(0.5),
        "test": "mcnemar",
    }
    assert row["difference"]["accuracy"] == pytest.approx(-1 / 3)
    low, high = row["difference_ci"]["accuracy"]
    assert low <= -1 / 3 <= high <= 0.0
    assert (out / "comparison.html").read_text().startswith("<!DOCTYPE html>")


def test_the_same_traces_give_byte_identical_reports(scored, tmp_path):
    """Reports are diffed and committed (reports/reference): nothing in them may depend on
    the interpreter's string-hash seed (set iteration order), the clock or the machine."""
    outputs = []
    for seed in ("1", "2"):
        out = tmp_path / f"seed-{seed}"
        proc = subprocess.run(
            [str(BIN / "medhal"), "report", str(scored), "-o", str(out)],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        assert proc.returncode == 0, proc.stderr
        outputs.append({p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()})
    assert {"report.json", "report.md", "report.html"} <= set(outputs[0])
    assert outputs[0].keys() == outputs[1].keys()
    for name, first in outputs[0].items():
        second = outputs[1][name]
        at = next((i for i, (a, b) in enumerate(zip(first, second, strict=False)) if a != b), None)
        if at is None and len(first) == len(second):
            continue
        at = min(len(first), len(second)) if at is None else at
        raise AssertionError(
            f"{name} differs at byte {at}: {first[at - 80 : at + 80]!r} vs {second[at - 80 : at + 80]!r}"
        )


def test_the_terminal_gets_a_short_summary_and_print_gives_the_whole_report(scored, tmp_path):
    run = copy_run(scored, tmp_path)
    proc = medhal("report", str(run), "--no-plots")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) <= 25, proc.stdout
    assert lines[0] == "MedFact-Bench (zero-shot claim verification), offline"
    # The benchmark's headline comes first: per component scifact 1/1, healthver 1/1, medaesqa
    # 0/1 (NEI for SUPPORT), pubmedqa-fact 0/1 (INVALID), bioasq-fact 2/2 -> (1 + 1 + 0 + 0 + 1) / 5
    assert lines[1].startswith("macro accuracy over the components (medhal reading): 0.600 [")
    assert lines[2] == "Complete: 6 of 6 tasks, each once, one provenance."
    header = next(line for line in lines if line.startswith("figure"))
    assert header.split() == ["figure", "medhal", "(run)", "authors", "strict"]
    # run 1 reads SUPPORT, CONTRADICT, NEI, INVALID, SUPPORT, CONTRADICT against SUPPORT,
    # CONTRADICT, SUPPORT, NEI, SUPPORT, CONTRADICT: 4 of 6 right under the medhal reading
    accuracy = next(line for line in lines if line.startswith("accuracy "))
    assert accuracy.split()[1] == "0.667"
    assert f"Files in {run}: report.md, report.html, report.json" in lines
    assert "Provenance" not in proc.stdout and "{" not in proc.stdout
    whole = medhal("report", str(run), "--no-plots", "--print")
    assert whole.returncode == 0
    assert whole.stdout.startswith((run / "report.md").read_text(encoding="utf-8").rstrip("\n"))
    assert "### Provenance" in whole.stdout


@pytest.mark.parametrize("args", [(), ("--print",)])
def test_a_reader_that_stops_early_causes_no_error(scored, tmp_path, args):
    """`medhal report RUN | head -1`: the pipe is closed before anything is printed."""
    run = copy_run(scored, tmp_path)
    proc = subprocess.Popen(
        [str(BIN / "medhal"), "report", str(run), "--no-plots", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 0, stderr
    assert stderr == ""
    assert (run / "report.html").is_file()


def test_reports_carry_no_path_of_the_machine(scored, tmp_path):
    """`source` is relative: the run directory and file for a report beside its traces, else
    the way from the report to them; the dataset path in the provenance is cut to its last
    parts."""
    run = copy_run(scored, tmp_path)
    elsewhere = tmp_path / "reports" / "mine"
    for args, out, source, base in [
        ((), run, "run/traces.jsonl", run.parent),
        (("-o", str(elsewhere)), elsewhere, "../../run/traces.jsonl", elsewhere),
    ]:
        proc = medhal("report", str(run), "--no-plots", *args)
        assert proc.returncode == 0, proc.stderr
        report = json.loads((out / "report.json").read_text())
        assert report["source"] == source
        assert (base / source).resolve() == (run / "traces.jsonl").resolve()
        for name in ("report.json", "report.md", "report.html"):
            text = (out / name).read_text(encoding="utf-8")
            assert (
                str(tmp_path) not in text and "/work/" not in text and str(Path.home()) + "/" not in text
            ), name
        assert report["provenance"]["data"]["options"]["dataset_path"].startswith("…/")
