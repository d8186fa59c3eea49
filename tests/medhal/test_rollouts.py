"""Several rollouts per task (`eval -r k`, issue 21 item 2): the rollouts of one task are
one item with k samples, not duplicates. verifiers 0.2.1 writes no rollout number: each
trace has its own `id` (a uuid4 hex, `verifiers/v1/trace.py`), and `config.toml` records
`num_rollouts`. So a rollout is known by (task idx, trace id), and the same trace twice
(the same id) is a duplicate. The report gives per-item means and spread, pass@k and
majority-vote accuracy; its intervals resample tasks; completeness expects n_tasks x k."""

from __future__ import annotations

import itertools
import json
import math
import random
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from medhal.reports.report import RolloutLog, build_report, read_run, rollout_summary
from medhal.reports.traces import TraceFileError
from tests.medhal.test_report import SPEC, TOY, trace

SELECTION = {"n_expected": 4, "contiguous": True, "num_tasks": None, "shuffle": False, "idx_sha256": "x"}


def rollout(
    idx: int, number: int, right: bool, *, reading: str | None = None, reward: float | None = None
) -> dict:
    """A trace of task idx (gold "yes") as eval writes it, with its own trace id."""
    label = reading if reading is not None else ("yes" if right else "no")
    metrics = {}
    for convention in ("medhal", "authors", "strict"):
        metrics[f"correct_{convention}"] = float(right)
        metrics[f"parsed_{convention}"] = 1.0
    return {
        "id": f"{idx:04x}{number:028x}",
        "task": {
            "type": "ToyTask",
            "data": {
                "idx": idx,
                "benchmark": "toy",
                "gold": "yes",
                "parser": "medhal",
                "selection": SELECTION,
                "provenance": {"dataset": "toy"},
            },
        },
        "nodes": [{"message": {"role": "assistant", "content": label}, "sampled": True}],
        "metrics": metrics,
        "rewards": {"points": float(right) if reward is None else reward},
        "info": {"readings": {"medhal": label, "authors": label, "strict": label}},
        "errors": [],
        "agent": {"model": "m", "sampling": {"temperature": 1.0}},
    }


def write_run(path: Path, rows: list[dict], num_rollouts: int | None = None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "traces.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    if num_rollouts is not None:
        (path / "config.toml").write_text(f'model = "m"\nnum_rollouts = {num_rollouts}\n')
    return path / "traces.jsonl"


# Four tasks, three rollouts each (right = 1):
#   task 0: 1 1 1   task 1: 1 0 0   task 2: 0 0 0   task 3: 1 1 0
RIGHT = {0: [1, 1, 1], 1: [1, 0, 0], 2: [0, 0, 0], 3: [1, 1, 0]}


def three_each() -> list[dict]:
    # Interleaved as eval writes them (rollouts finish in any order).
    return [rollout(i, r, bool(RIGHT[i][r])) for r in range(3) for i in range(4)]


def test_rollouts_of_one_task_are_one_item_with_k_samples(tmp_path):
    report = build_report(read_run(write_run(tmp_path / "run", three_each(), 3), SPEC))
    assert (report["n"], report["n_distinct"], report["n_duplicates"]) == (12, 4, 0)
    assert report["complete"], report
    rollouts = report["rollouts"]
    assert (rollouts["per_task"], rollouts["source"]) == (3, "config.toml")
    # Per-item mean correct: 1, 1/3, 0, 2/3; their mean 1/2 (= the accuracy over rollouts).
    assert report["micro_accuracy"] == pytest.approx(0.5)
    assert rollouts["mean_reward"] == pytest.approx(0.5)
    # Spread over rollouts (sample sd, n - 1): tasks 0 and 2: 0; tasks 1 and 3: sqrt(1/3).
    assert rollouts["mean_reward_sd"] == pytest.approx((0 + math.sqrt(1 / 3) + 0 + math.sqrt(1 / 3)) / 4)
    # pass@k, Chen et al. 2021: 1 - C(n-c, k) / C(n, k) per task, averaged.
    # pass@1 = mean of c/n = 1/2. pass@2: task 0: 1; task 1 (c=1): 1 - C(2,2)/C(3,2) = 2/3;
    # task 2: 0; task 3 (c=2): 1 - 0 = 1 -> (1 + 2/3 + 0 + 1) / 4 = 2/3. pass@3: 3/4.
    assert rollouts["pass_at_k"] == pytest.approx({"1": 0.5, "2": 2 / 3, "3": 0.75})
    # pass^k (all k right): C(c, k) / C(n, k) per task, averaged. pass^1 = pass@1 = 1/2.
    # pass^2: task 0 (c=3): C(3,2)/C(3,2) = 1; task 1 (c=1): 0; task 2: 0; task 3 (c=2): 1/3
    # -> (1 + 1/3) / 4 = 1/3. pass^3: only task 0 -> 1/4.
    assert rollouts["pass_hat_k"] == pytest.approx({"1": 0.5, "2": 1 / 3, "3": 0.25})
    # Majority vote: tasks 0 and 3 right, 1 and 2 wrong.
    assert rollouts["majority_accuracy"] == pytest.approx(0.5)
    items = report["per_item"]
    assert items["idx"] == [0, 1, 2, 3] and items["rollouts"] == [3, 3, 3, 3]
    assert items["mean_correct"] == pytest.approx([1, 1 / 3, 0, 2 / 3])
    assert items["mean_reward"] == pytest.approx([1, 1 / 3, 0, 2 / 3])
    assert items["sd_reward"] == pytest.approx([0, math.sqrt(1 / 3), 0, math.sqrt(1 / 3)])


def test_the_report_says_pass_at_k_and_the_spread_in_words(tmp_path):
    from medhal.reports.markdown import to_markdown

    report = build_report(read_run(write_run(tmp_path / "run", three_each(), 3), SPEC))
    text = to_markdown(report, ("accuracy",))
    assert "Complete: 4 of 4 tasks x 3 rollouts" in text
    assert "pass@3" in text and "majority vote" in text
    assert "| pass^2 (all 2 right; unbiased estimator) | 0.333 |" in text


@pytest.mark.parametrize("n", range(1, 7))
def test_pass_hat_k_is_the_share_of_k_subsets_all_right(n):
    """pass^k of one task, counted the long way: every way of drawing k of its n samples
    (without replacement), the share in which all k are right; and pass@k the share in
    which at least one is."""
    from medhal.reports.metrics import pass_hat_k
    from medhal.reports.report import pass_at_k

    for c in range(n + 1):
        samples = [True] * c + [False] * (n - c)
        for k in range(1, n + 1):
            draws = list(itertools.combinations(samples, k))
            assert pass_hat_k(n, c, k) == pytest.approx(sum(all(d) for d in draws) / len(draws))
            assert pass_at_k(n, c, k) == pytest.approx(sum(any(d) for d in draws) / len(draws))


def test_pass_hat_k_averages_over_the_tasks_that_have_k_rollouts(tmp_path):
    # task 0: 1 0 1 (c=2 of 3); task 1: 1 1, one rollout short of three (c=2 of 2).
    # pass^1: (2/3 + 1) / 2; pass^2: (C(2,2)/C(3,2) + 1) / 2 = (1/3 + 1) / 2; pass^3: task 0's
    # alone, C(2,3) = 0.
    rows = [rollout(0, r, r != 1) for r in range(3)] + [rollout(1, r, True) for r in range(2)]
    report = build_report(read_run(write_run(tmp_path / "run", rows, 3), SPEC))
    assert report["rollouts"]["n_short_tasks"] == 1
    hat = report["rollouts"]["pass_hat_k"]
    assert hat == pytest.approx({"1": (2 / 3 + 1) / 2, "2": (1 / 3 + 1) / 2, "3": 0.0})


def test_intervals_resample_tasks_not_rollouts(tmp_path):
    # Each task's three rollouts agree: the run holds as much evidence as one rollout per
    # task, and a cluster bootstrap over tasks gives it the same interval. Resampling the
    # 12 rollouts as if independent would give a narrower one.
    rows = [rollout(i, r, bool(RIGHT[i][0])) for r in range(3) for i in range(4)]
    triple = build_report(read_run(write_run(tmp_path / "k3", rows, 3), SPEC))
    single = build_report(read_run(write_run(tmp_path / "k1", rows[:4], 1), SPEC))
    assert triple["micro_accuracy"] == single["micro_accuracy"] == 0.75
    assert triple["micro_accuracy_ci"] == single["micro_accuracy_ci"]


def test_intervals_resample_source_clusters_with_their_rollouts(tmp_path):
    # With a cluster field the rollouts stay in their task's source cluster.
    rows = []
    for r in range(3):
        for i, (src, right) in enumerate((("q1", 1), ("q1", 1), ("q2", 0), ("q3", 1), ("q4", 0))):
            row = trace(
                i,
                "a",
                "yes",
                dict.fromkeys(("medhal", "authors", "strict"), "yes" if right else "no"),
                dict.fromkeys(("medhal", "authors", "strict"), right),
                src=src,
            )
            row["id"] = f"{i}-{r}"
            rows.append(row)
    triple = build_report(read_run(write_run(tmp_path / "k3", rows, 3), TOY))
    single = build_report(read_run(write_run(tmp_path / "k1", rows[:5], 1), TOY))
    assert triple["micro_accuracy_ci"] == single["micro_accuracy_ci"]


def test_the_same_trace_twice_is_still_a_duplicate(tmp_path):
    rows = three_each()
    report = build_report(read_run(write_run(tmp_path / "run", [*rows, rows[5]], 3), SPEC))
    assert (report["n_duplicates"], report["complete"]) == (1, False)
    from medhal.reports.markdown import completeness_problems

    assert any("same trace" in p for p in completeness_problems(report))


def test_traces_without_an_id_are_told_apart_by_nothing(tmp_path):
    # A results row or a hand-made trace without an id: two of one task cannot be told from
    # a duplicated line, so they count as one (as before).
    rows = [rollout(i, 0, True) for i in range(4)]
    for row in rows:
        del row["id"]
    report = build_report(read_run(write_run(tmp_path / "run", rows + rows[:1], None), SPEC))
    assert (report["n_duplicates"], report["complete"]) == (1, False)


def test_a_task_short_of_its_rollouts_makes_the_run_incomplete(tmp_path):
    rows = [r for r in three_each() if not (r["task"]["data"]["idx"] == 2 and r["id"].endswith("2"))]
    report = build_report(read_run(write_run(tmp_path / "run", rows, 3), SPEC))
    assert not report["complete"]
    assert (report["rollouts"]["n_short_tasks"], report["rollouts"]["n_missing_rollouts"]) == (1, 1)


def test_without_config_toml_k_is_read_from_the_traces(tmp_path):
    report = build_report(read_run(write_run(tmp_path / "run", three_each()), SPEC))
    assert (report["rollouts"]["per_task"], report["rollouts"]["source"], report["complete"]) == (
        3,
        "traces",
        True,
    )
    short = [r for r in three_each() if r["id"] != rollout(1, 2, False)["id"]]
    assert not build_report(read_run(write_run(tmp_path / "short", short), SPEC))["complete"]


def test_more_rollouts_than_configured_make_the_run_incomplete(tmp_path):
    report = build_report(read_run(write_run(tmp_path / "run", three_each(), 2), SPEC))
    assert not report["complete"] and report["rollouts"]["n_extra_rollouts"] == 4


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("num_rollouts = [", "not valid TOML"),
        ("num_rollouts = 0", "'num_rollouts' is not a positive integer"),
        ('num_rollouts = "3"', "'num_rollouts' is not a positive integer"),
    ],
)
def test_a_bad_config_toml_is_one_line_naming_it(tmp_path, text, problem):
    path = write_run(tmp_path / "run", three_each())
    (tmp_path / "run" / "config.toml").write_text(text)
    with pytest.raises(TraceFileError, match=f"config.toml: .*{problem}"):
        read_run(path, SPEC)


def test_one_rollout_per_task_reports_no_rollout_block(tmp_path):
    report = build_report(
        read_run(write_run(tmp_path / "run", [rollout(i, 0, True) for i in range(4)], 1), SPEC)
    )
    assert report["complete"] and report["rollouts"]["per_task"] == 1
    assert "per_item" not in report


def test_runs_with_several_rollouts_are_compared_on_per_item_means(tmp_path):
    from medhal.reports.compare import compare_runs

    # Run A: three rollouts per task (per-item means 1, 1/3, 0, 2/3). Run B: one rollout,
    # right on tasks 0 and 1 only (1, 1, 0, 0). Paired on the tasks: difference of means
    # (1 + 1 + 0 + 0) / 4 - 1/2 = 0; a sign test on the per-item means: B better on task 1,
    # A better on task 3, p = 1.
    a = read_run(write_run(tmp_path / "a", three_each(), 3), SPEC, keep_items=True)
    b_rows = [rollout(i, 0, i < 2) for i in range(4)]
    b = read_run(write_run(tmp_path / "b", b_rows, 1), SPEC, keep_items=True)
    second = compare_runs([a, b], [build_report(a), build_report(b)])["runs"][1]
    assert second["paired"] is True
    assert second["difference"]["accuracy"] == pytest.approx(0.0)
    assert second["mcnemar"] == {
        "right_only_in_first": 1,
        "right_only_in_this": 1,
        "p_value": 1.0,
        "test": "sign",
    }


def test_eval_with_three_rollouts_then_report_exits_0_with_pass_at_k(tmp_path):
    from tests.medfact_bench.fixtures import scripted_rollouts
    from tests.running import medhal_main

    rows = scripted_rollouts(tmp_path / "run", ["<score>2</score>", "<score>-2</score>", "no score"], 3)
    assert len(rows) == 18 and len({r["id"] for r in rows}) == 18
    proc = medhal_main("report", str(tmp_path / "run"), "--no-plots", "--max-error-rate", "0")
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert (report["n"], report["n_distinct"], report["complete"]) == (18, 6, True)
    assert report["rollouts"]["per_task"] == 3 and report["rollouts"]["source"] == "config.toml"
    assert set(report["rollouts"]["pass_at_k"]) == {"1", "2", "3"}
    assert report["per_item"]["rollouts"] == [3] * 6
    # A duplicated line of the same run is still refused.
    traces = tmp_path / "run" / "traces.jsonl"
    traces.write_text(traces.read_text() + traces.read_text().splitlines()[0] + "\n")
    proc = medhal_main("report", str(tmp_path / "run"), "--no-plots")
    assert proc.returncode == 1 and "1 trace repeats the same trace of a task" in proc.stderr
    # A config.toml that is not TOML: one line naming it, exit 2.
    (tmp_path / "run" / "config.toml").write_text("num_rollouts = [")
    proc = medhal_main("report", str(tmp_path / "run"), "--no-plots")
    assert proc.returncode == 2 and "config.toml: not valid TOML" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


# ------------------------------------------------------- v0 results: rows without a rollout id


def v0_row(idx: int, number: int, right: bool) -> dict:
    """A `results.jsonl` row as vf-eval writes it for medhal's v0 face (verifiers 0.2.1,
    `save_utils.state_to_output`): the TaskData under `info.task_data`, the example id, no
    id of the rollout itself."""
    label = "yes" if right else "no"
    metrics = {
        f"{kind}_{c}": float(right if kind == "correct" else 1)
        for kind in ("correct", "parsed")
        for c in ("medhal", "authors", "strict")
    }
    return {
        "example_id": idx,
        "prompt": [{"role": "user", "content": "q"}],
        "completion": [{"role": "assistant", "content": label}],
        "info": {
            "task_data": rollout(idx, number, right)["task"]["data"],
            "task_type": "ToyTask",
            "readings": {"medhal": label, "authors": label, "strict": label},
        },
        "reward": float(right),
        "error": None,
        "timing": {"start_time": 1796409743.0 + idx + number / 10},
        "is_completed": True,
        "metrics": metrics,
        **metrics,
    }


def write_v0_run(path: Path, rows: list[dict], rollouts_per_example: int | None = None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    if rollouts_per_example is not None:
        metadata = {
            "env_id": "toy",
            "model": "m",
            "num_examples": 4,
            "rollouts_per_example": rollouts_per_example,
        }
        (path / "metadata.json").write_text(json.dumps(metadata))
    return path / "results.jsonl"


def v0_three_each() -> list[dict]:
    # As vf-eval -r 3 writes them: each example's rollouts together.
    return [v0_row(i, r, bool(RIGHT[i][r])) for i in range(4) for r in range(3)]


def test_v0_rows_of_one_example_are_its_rollouts(tmp_path):
    # vf-eval -r 3 (prime's hosted default is 3 rollouts): the rows carry no rollout id; each
    # row is a rollout, and metadata.json says how many each example should have.
    report = build_report(read_run(write_v0_run(tmp_path / "run", v0_three_each(), 3), SPEC))
    assert (report["n"], report["n_distinct"], report["n_duplicates"], report["complete"]) == (12, 4, 0, True)
    rollouts = report["rollouts"]
    assert (rollouts["per_task"], rollouts["source"]) == (3, "metadata.json")
    assert rollouts["pass_at_k"] == pytest.approx({"1": 0.5, "2": 2 / 3, "3": 0.75})
    assert rollouts["majority_accuracy"] == pytest.approx(0.5)
    assert report["per_item"]["mean_correct"] == pytest.approx([1, 1 / 3, 0, 2 / 3])


def test_v0_rows_over_their_rollouts_make_the_run_incomplete(tmp_path):
    # A row written twice cannot be told from a fourth rollout: it is one over the 3 asked for.
    rows = v0_three_each()
    report = build_report(read_run(write_v0_run(tmp_path / "run", [*rows, rows[4]], 3), SPEC))
    assert not report["complete"] and report["rollouts"]["n_extra_rollouts"] == 1
    # Without metadata.json k is read from the rows: the others are then short of 4.
    report = build_report(read_run(write_v0_run(tmp_path / "bare", [*rows, rows[4]]), SPEC))
    assert (report["rollouts"]["per_task"], report["rollouts"]["source"], report["complete"]) == (
        4,
        "traces",
        False,
    )
    report = build_report(read_run(write_v0_run(tmp_path / "whole", rows), SPEC))
    assert (report["rollouts"]["per_task"], report["complete"]) == (3, True)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{", "not valid JSON"),
        ('{"rollouts_per_example": 0}', "'rollouts_per_example' is not a positive integer"),
        ('{"rollouts_per_example": "3"}', "'rollouts_per_example' is not a positive integer"),
        ("[3]", "not a JSON object"),
    ],
)
def test_a_bad_metadata_json_is_one_line_naming_it(tmp_path, text, problem):
    path = write_v0_run(tmp_path / "run", v0_three_each())
    (tmp_path / "run" / "metadata.json").write_text(text)
    with pytest.raises(TraceFileError, match=f"metadata.json: .*{problem}"):
        read_run(path, SPEC)


@pytest.mark.slow(reason="vf-eval, verifiers' v0 executable, in a new process")
def test_vf_eval_with_three_rollouts_then_report_exits_0_with_pass_at_k(tmp_path):
    import itertools
    import os
    import subprocess

    from tests.conftest import BIN
    from tests.medfact_bench.fixtures import DEMO_ROWS
    from tests.running import medhal_main
    from tests.scripted_endpoint import ScriptedEndpoint

    replies = itertools.cycle(["<score>2</score>", "<score>-2</score>", "no score"])
    with ScriptedEndpoint(lambda body, number: next(replies)) as endpoint:
        argv = [
            str(BIN / "vf-eval"), "medfact-bench", "-m", "scripted", "-b", endpoint.base_url, "-k", "KEY",
            "-n", "-1", "-r", "3", "-a", json.dumps({"dataset_path": str(DEMO_ROWS)}), "-s", "-d",
            "--disable-env-server", "-o", str(tmp_path / "vf"),
        ]  # fmt: skip
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=600, env={**os.environ, "KEY": "k"}
        )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    (results,) = (tmp_path / "vf" / "evals").glob("*/*/results.jsonl")
    assert len(results.read_text().splitlines()) == 18
    proc = medhal_main("report", str(results.parent), "--no-plots")
    assert proc.returncode == 0, proc.stderr
    report = json.loads((results.parent / "report.json").read_text())
    assert (report["n"], report["n_distinct"], report["n_duplicates"], report["complete"]) == (18, 6, 0, True)
    assert (report["rollouts"]["per_task"], report["rollouts"]["source"]) == (3, "metadata.json")
    assert set(report["rollouts"]["pass_at_k"]) == {"1", "2", "3"}
    assert "x 3 rollouts" in proc.stdout


# ------------------------------------------------------------------ the terminal's summary line


def test_the_terminal_summary_counts_tasks_and_rollouts(tmp_path):
    from medhal.commands.report import summary_lines

    report = build_report(read_run(write_run(tmp_path / "run", three_each(), 3), SPEC))
    [line] = [x for x in summary_lines(report, tmp_path / "run") if x.startswith(("Complete", "INCOMPLETE"))]
    assert line == "Complete: 4 of 4 tasks x 3 rollouts (12 traces), one provenance."


def test_the_terminal_summary_of_merged_shards_counts_their_rollouts(tmp_path):
    # Two shards of the 4 tasks (0/2: ids 0 and 2; 1/2: ids 1 and 3), each scored twice,
    # read as `medhal report --merge` reads them.
    from medhal.commands.report import summary_lines
    from medhal.reports.report import Run
    from medhal.reports.traces import configured_rollouts, iter_traces

    run = Run(SPEC, "merged", merged=True)
    for i in range(2):
        rows = []
        for idx in range(i, 4, 2):
            for number in range(2):
                row = rollout(idx, number, True)
                row["task"]["data"]["selection"] = {**SELECTION, "shard": f"{i}/2", "n_shard": 2}
                rows.append(row)
        path = write_run(tmp_path / f"shard{i}", rows, 2)
        run.expect_rollouts(configured_rollouts(path))
        for record in iter_traces(path):
            run.add(record)
    report = build_report(run)
    assert report["complete"], report
    lines = summary_lines(report, tmp_path / "merged")
    [line] = [x for x in lines if x.startswith(("Complete", "INCOMPLETE"))]
    assert line == "Complete: 4 of 4 tasks x 2 rollouts (8 traces), one provenance."


# ------------------------------------------------------------- majority votes by the compared key


def test_a_majority_votes_on_the_key_the_spec_declares(tmp_path):
    # One task, three rollouts: "yes", "YES" (both right: the toy rule ignores case) and
    # "no". On the label read there are three answers, a tie: no majority. On the key the
    # rule compares there are two, "yes" twice: a majority, right.
    from dataclasses import replace

    rows = [
        rollout(0, r, right, reading=label)
        for r, (label, right) in enumerate([("yes", True), ("YES", True), ("no", False)])
    ]
    for row in rows:
        row["task"]["data"]["selection"] = {**SELECTION, "n_expected": 1}
    path = write_run(tmp_path / "run", rows, 3)
    free_text = replace(SPEC, classes=())  # answers are texts, not classes
    assert build_report(read_run(path, free_text))["rollouts"]["majority_accuracy"] == 0.0
    by_key = replace(free_text, vote_key=lambda view: view.pred.casefold())
    assert build_report(read_run(path, by_key))["rollouts"]["majority_accuracy"] == 1.0


def _plain_summary(rows: list[tuple[int, int, int, float, int]]) -> dict:
    """The rollout summary worked out one task at a time in plain Python, from log rows
    (idx, trace id digest, right, reward, vote label): a row whose (idx, trace id) came
    before is a duplicate and left out; sums in file order; a vote tie counts as wrong."""
    seen: set[tuple[int, int]] = set()
    tasks: dict[int, list[tuple[int, float, int]]] = {}
    duplicates = 0
    for idx, rid, right, reward, label in rows:
        if (idx, rid) in seen:
            duplicates += 1
            continue
        seen.add((idx, rid))
        tasks.setdefault(idx, []).append((right, reward, label))
    means, sds, voted = [], [], []
    for idx in sorted(tasks):
        rollouts = tasks[idx]
        total = 0.0
        for _, reward, _ in rollouts:
            total += reward
        mean = total / len(rollouts)
        spread = 0.0
        for _, reward, _ in rollouts:
            spread += (reward - mean) ** 2
        means.append(mean)
        sds.append(math.sqrt(spread / max(len(rollouts) - 1, 1)))
        votes: dict[int, int] = {}
        for _, _, label in rollouts:
            votes[label] = votes.get(label, 0) + 1
        best = max(votes.values())
        winners = [label for label, n in votes.items() if n == best]
        first = next(r for r, _, label in rollouts if label == winners[0])
        voted.append(float(first) if len(winners) == 1 else 0.0)
    return {
        "n_duplicates": duplicates,
        "mean_reward": float(np.mean(means)),
        "mean_reward_sd": float(np.mean(sds)),
        "majority_accuracy": float(np.mean(voted)),
        "rollouts": [len(tasks[i]) for i in sorted(tasks)],
        "mean_correct": [sum(r for r, _, _ in tasks[i]) / len(tasks[i]) for i in sorted(tasks)],
    }


@pytest.mark.parametrize("seed", range(6))
def test_the_rollout_summary_is_the_plain_per_task_one(seed):
    # Tasks of one to six rollouts, some traces twice or without an id (digest 0: every such
    # rollout of a task after its first is a duplicate), rewards in tenths (not exact in
    # binary: the sums must go in file order), labels that tie.
    rng = random.Random(seed)
    rows = []
    for idx in rng.sample(range(5_000), 400):
        for r in range(rng.choice([1, 1, 2, 3, 6])):
            rid = 0 if rng.random() < 0.05 else 1000 * idx + r + 1
            rows.append((idx, rid, rng.randrange(2), rng.randrange(-10, 11) / 10, rng.randrange(3)))
            if rng.random() < 0.05:
                rows.append(rows[-1])
    rng.shuffle(rows)
    log = RolloutLog()
    for idx, rid, right, reward, label in rows:
        log.idx.append(idx)
        log.rollout.append(rid)
        log.correct.append(right)
        log.reward.append(reward)
        log.label.append(label)
    run = SimpleNamespace(rollouts=log, rollouts_per_task=None, rollouts_source=None, rollouts_conflict=False)
    got = rollout_summary(run)  # type: ignore[arg-type]
    want = _plain_summary(rows)
    for key in ("n_duplicates", "mean_reward", "mean_reward_sd", "majority_accuracy"):
        assert got[key] == want[key], key
    assert got["per_item"]["rollouts"] == want["rollouts"]
    assert got["per_item"]["mean_correct"] == want["mean_correct"]
