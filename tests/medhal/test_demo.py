"""`medhal demo` without the embedded model (issue 33 item 15): eval's own log is a file
only verifiers writes, so it neither repeats nor cuts a line; what the eval process prints
goes to files of its own; and `-n` takes what `reproduce -n` takes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from medhal.commands.demo import run_with_progress
from tests.running import clean_exit_2, medhal_main

FAKE_EVAL = """
import sys
from pathlib import Path
log = Path(sys.argv[1]) / "eval.log"
for i in range(200):
    message = f"rollout done: id={i:04d} task={i} reward=1.000 turns=1 stop=done"
    with open(log, "a") as f:  # what verifiers' file sink does, a line at a time
        f.write(f"2026-01-01 00:00:00.000 | INFO | {message}\\n")
    sys.stderr.write(f"00:00:00    INFO {message}\\n")  # and its console sink, shorter
    sys.stderr.flush()
print("summary on stdout")
"""
LOGGED = [
    f"2026-01-01 00:00:00.000 | INFO | rollout done: id={i:04d} task={i} reward=1.000 turns=1 stop=done"
    for i in range(200)
]


def test_evals_log_is_written_by_eval_alone(tmp_path):
    # verifiers writes its log to eval.log in the output directory and to stderr: the demo
    # sent stderr into eval.log too, two writers at two offsets of one file (the demo's
    # med-halt eval.log listed 30 "rollout done" for 21 rollouts, some lines cut).
    out = tmp_path / "medfact-bench"
    code = run_with_progress("medfact-bench", [sys.executable, "-c", FAKE_EVAL, str(out)], out, 200)
    assert code == 0
    assert (out / "eval.log").read_text().splitlines() == LOGGED
    console = (out / "eval.stderr").read_text().splitlines()
    assert console == [
        line.replace("2026-01-01 00:00:00.000 | INFO |", "00:00:00    INFO") for line in LOGGED
    ]
    assert (out / "eval.stdout").read_text() == "summary on stdout\n"


@pytest.mark.parametrize("n", ["0", "-1", "two"])
def test_a_task_count_below_1_is_refused_as_reproduce_refuses_it(tmp_path, n):
    # `-n 0` ran every row and `-n -1` was passed on to eval; reproduce refuses both.
    args = (
        "--env",
        "medfact-bench",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "-o",
        str(tmp_path),
    )
    demo = clean_exit_2(medhal_main("demo", "-n", n, *args), "-n", "at least 1")
    reproduce = clean_exit_2(
        medhal_main("reproduce", "medfact-bench", "-n", n, *args[2:]), "-n", "at least 1"
    )
    assert demo.split("error:", 1)[1].split(" (see")[0] == reproduce.split("error:", 1)[1].split(" (see")[0]
    assert not list(tmp_path.iterdir())


@pytest.mark.slow(reason="the demo end to end: eval in a new process against a scripted endpoint")
def test_the_demos_eval_log_counts_each_rollout_once(tmp_path):
    from tests.scripted_endpoint import ScriptedEndpoint

    out = tmp_path / "demo"
    with ScriptedEndpoint(lambda body, number: "<score>2</score>") as endpoint:
        proc = medhal_main(
            "demo", "--env", "medfact-bench", "--base-url", endpoint.base_url, "--model", "scripted",
            "-o", str(out), "--max-error-rate", "1",
        )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    run = out / "medfact-bench"
    traces = [json.loads(line) for line in (run / "traces.jsonl").read_text().splitlines()]
    log = (run / "eval.log").read_text().splitlines()
    done = [line for line in log if "rollout done" in line]
    assert len(done) == len(traces) == 6
    assert sorted(line.split("id=", 1)[1].split()[0] for line in done) == sorted(t["id"] for t in traces)
    assert any("rollout done" in line for line in (run / "eval.stderr").read_text().splitlines())
    assert Path(run / "eval.stdout").is_file()
