"""`medhal rescore RUN -o OUT`: a run's replies read and scored again under the installed
environment, written as a new run (traces, report) with a comparison of the two readings.

An "older version" is made by editing the outcomes a run's traces record (what that version
read, judged and paid): rescoring must find exactly the edited rollouts, name each change by
its kind and count them as worked out by hand below. Runs come from `medhal score` and from
real `eval` runs (several rollouts per task), and a verifiers 0.4 episode file
(`verifiers04_medfact_episodes.jsonl`: the MedFact-Bench demo rows, two rollouts each, made by
verifiers 0.4.0's `vf-eval` against a scripted endpoint; replies ours, the dataset path of the
machine that ran it replaced by /run-machine/...).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import run_eval
from tests.medfact_bench.fixtures import DEMO_ROWS, score_demo, write_predictions
from tests.running import clean_exit_2, medhal_main
from tests.tables import read_jsonl, write_jsonl

REPLIES = [
    "<think>a</think><score>2</score>",  # gold SUPPORT (scifact): SUPPORT under all three readings
    "<think>b</think><score>-2</score>",  # gold CONTRADICT (healthver): CONTRADICT under all three
    "<score>0</score>",  # gold SUPPORT (medaesqa): NEI (wrong); strict: unread
    "no score",  # gold NEI (pubmedqa-fact): unread under all three
    "<score>1</score>",  # gold SUPPORT (bioasq-fact): SUPPORT; strict: unread
    "<score>-1</score>",  # gold CONTRADICT (bioasq-fact): CONTRADICT; strict: unread
]
EPISODES = Path(__file__).with_name("verifiers04_medfact_episodes.jsonl")


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> Path:
    """The MedFact-Bench demo rows answered with REPLIES, scored by `medhal score`."""
    return score_demo(REPLIES, tmp_path_factory.mktemp("rescore") / "run", "--no-plots")


def rescore(run: Path, out: Path, *args: str):
    return medhal_main("rescore", str(run), "-o", str(out), "--no-plots", *args)


def as_recorded(trace: dict, convention: str, reading: str | None, right: bool) -> None:
    """Make `trace` record what an older version read under `convention` (None: nothing)."""
    trace["info"]["readings"][convention] = reading
    trace["metrics"][f"parsed_{convention}"] = float(reading is not None)
    trace["metrics"][f"correct_{convention}"] = float(right)
    if convention == "medhal":  # the run's own convention: its outcome and its reward
        trace["metrics"]["parsed"] = float(reading is not None)
        trace["metrics"]["correct"] = float(right)
        trace["rewards"]["accuracy"] = float(right)


def older_version(scored: Path, tmp_path: Path) -> Path:
    """The scored run as "medfact-bench 0.2.0" would have recorded it, edited rollout by rollout."""
    traces = read_jsonl(scored / "traces.jsonl")
    as_recorded(traces[2], "medhal", "SUPPORT", True)  # read 0 as SUPPORT (now NEI, wrong)
    as_recorded(traces[2], "authors", "SUPPORT", True)
    as_recorded(traces[0], "strict", None, False)  # did not read it strictly (now SUPPORT, right)
    as_recorded(traces[3], "medhal", "NEI", True)  # read "no score" as NEI (now unread)
    as_recorded(traces[5], "medhal", "CONTRADICT", False)  # the same reading judged wrong
    traces[4]["rewards"]["accuracy"] = 0.5  # the same readings, paid another reward
    for trace in traces:
        trace["task"]["data"]["provenance"]["code"]["environment_version"] = "0.2.0"
    run = tmp_path / "old"
    run.mkdir()
    write_jsonl(run / "traces.jsonl", traces)
    return run


def test_rescore_finds_every_changed_reading_and_names_it(scored, tmp_path):
    old = older_version(scored, tmp_path)
    proc = rescore(old, tmp_path / "new")
    assert proc.returncode == 0, proc.stderr
    assert "Rescored 6 rollouts: 5 changed" in proc.stdout
    comparison = json.loads((tmp_path / "new" / "comparison.json").read_text())
    assert (comparison["n"], comparison["n_changed"]) == (6, 5)
    kinds = {c: comparison["conventions"][c]["kinds"] for c in ("medhal", "authors", "strict")}
    assert kinds["medhal"] == {
        "now read": 0,
        "no longer read": 1,
        "read differently": 1,
        "judged differently": 1,
    }
    assert kinds["authors"] == {
        "now read": 0,
        "no longer read": 0,
        "read differently": 1,
        "judged differently": 0,
    }
    assert kinds["strict"] == {
        "now read": 1,
        "no longer read": 0,
        "read differently": 0,
        "judged differently": 0,
    }
    # right before -> after: medhal 0, 1, 2, 3, 4 right before (5 was judged wrong), now 0, 1, 4, 5;
    # authors 0, 1, 2, 4, 5 before, now 0, 1, 4, 5; strict only 1 before, now 0 and 1.
    assert {c: v["right"] for c, v in comparison["conventions"].items()} == {
        "medhal": {"before": 5, "after": 4},
        "authors": {"before": 5, "after": 4},
        "strict": {"before": 1, "after": 2},
    }
    # rewards 1, 1, 1, 1, 0.5, 0 before, 1, 1, 0, 0, 1, 1 now; only rollout 4's readings stayed.
    assert comparison["reward"] == {"mean_before": 0.75, "mean_after": 4 / 6, "changed": 4, "reward only": 1}
    items = {item["idx"]: item for item in comparison["items"]}
    assert sorted(items) == [0, 2, 3, 4, 5]
    assert items[2]["changes"] == {
        "medhal": {"kind": "read differently", "reading": ["SUPPORT", "NEI"], "right": [True, False]},
        "authors": {"kind": "read differently", "reading": ["SUPPORT", "NEI"], "right": [True, False]},
    }
    assert items[0]["changes"] == {
        "strict": {"kind": "now read", "reading": ["INVALID", "SUPPORT"], "right": [False, True]}
    }
    assert items[3]["changes"]["medhal"]["reading"] == ["NEI", "INVALID"]
    assert items[5]["changes"]["medhal"] == {
        "kind": "judged differently",
        "reading": ["CONTRADICT", "CONTRADICT"],
        "right": [False, True],
    }
    assert (items[4]["changes"], items[4]["reward"]) == ({}, [0.5, 1.0])
    assert items[2]["reply"] == "<score>0</score>" and items[2]["line"] == 3
    # The headline: per component 1, 1, 1, 1, 1/2 before -> 0.9; 1, 1, 0, 0, 2/2 now -> 0.6.
    [row] = comparison["headline"]["rows"]
    assert (row["label"], row["before"], row["after"]) == ("macro accuracy over the components", 0.9, 0.6)
    assert comparison["before"]["code"]["environment_version"] == "0.2.0"
    assert comparison["after"]["code"]["environment_version"] != "0.2.0"
    text = (tmp_path / "new" / "comparison.md").read_text()
    assert "5 of 6 rollouts changed" in text
    assert (
        "| 2 | 3 | `<score>0</score>` | medhal: `SUPPORT` → `NEI` (right → wrong, read differently)" in text
    )


def test_the_new_run_is_the_installed_scoring_of_the_same_rollouts(scored, tmp_path):
    """Rescoring the edited run gives back the traces `medhal score` made: the same trace
    ids, tasks, replies and outcomes, and a provenance that names both code versions."""
    old = older_version(scored, tmp_path)
    assert rescore(old, tmp_path / "new").returncode == 0
    fresh, new = read_jsonl(scored / "traces.jsonl"), read_jsonl(tmp_path / "new" / "traces.jsonl")
    assert [t["id"] for t in new] == [t["id"] for t in fresh]

    def outcome(trace: dict) -> tuple:
        reply = [n["message"]["content"] for n in trace["nodes"] if n.get("sampled")]
        return trace["task"]["data"]["idx"], reply, trace["info"], trace["metrics"], trace["rewards"]

    assert [outcome(t) for t in new] == [outcome(t) for t in fresh]
    provenance = new[0]["task"]["data"]["provenance"]
    assert provenance["rescored_from"]["code"]["environment_version"] == "0.2.0"
    assert provenance["rescored_from"]["traces"] == "old/traces.jsonl"
    assert provenance["code"] == fresh[0]["task"]["data"]["provenance"]["code"]
    report = (tmp_path / "new" / "report.md").read_text()
    assert "Rescored from `old/traces.jsonl`" in report and "which medfact-bench 0.2.0 had scored" in report


ENVIRONMENTS = Path(__file__).resolve().parents[2] / "environments"
DEMO_RUNS = {
    "medhallu": [
        "--taskset.prompts",
        "demo",
        "--taskset.dataset-path",
        "medhallu/medhallu/demo/pqa_labeled.jsonl",
    ],
    "med-halt": ["--taskset.prompts", "demo", "--taskset.dataset-path", "med_halt/med_halt/demo"],
    "medfact-bench": ["--taskset.dataset-path", "medfact_bench/medfact_bench/demo/medfact_demo.jsonl"],
}


@pytest.mark.parametrize("env_id", list(DEMO_RUNS))
def test_rescoring_under_the_same_version_changes_nothing(env_id, tmp_path):
    """Every environment: the run's own version reads every reply as the run did."""
    from tests.medhal.test_headline import task_ids

    options = [str(ENVIRONMENTS / o) if "/" in o else o for o in DEMO_RUNS[env_id]]
    ids = task_ids(env_id, options)
    shapes = ["1", "0", "A", '{"cop": "B"}', "<score>1</score>", "I cannot tell.", ""]
    predictions = write_predictions(tmp_path / "p.jsonl", {i: shapes[i % len(shapes)] for i in ids[1:]})
    run = tmp_path / "run"
    proc = medhal_main(
        "score", env_id, "--predictions", str(predictions), "-o", str(run), "--no-plots", *options
    )
    assert proc.returncode == 0, proc.stderr
    proc = rescore(run, tmp_path / "new")
    assert proc.returncode == 0, proc.stderr
    comparison = json.loads((tmp_path / "new" / "comparison.json").read_text())
    assert (comparison["n"], comparison["n_changed"]) == (len(ids), 0)
    # The task without a prediction failed in the run, and stays failed with its error.
    [failed] = [t for t in read_jsonl(tmp_path / "new" / "traces.jsonl") if t["errors"]]
    assert failed["task"]["data"]["idx"] == ids[0]
    assert (failed["errors"][0]["type"], failed["errors"][0]["message"]) == (
        "MissingPrediction",
        f"no prediction for idx {ids[0]}",
    )
    before = json.loads((run / "report.json").read_text())
    after = json.loads((tmp_path / "new" / "report.json").read_text())
    assert after["conventions"] == before["conventions"] and after["n_errors"] == before["n_errors"] == 1


def test_an_eval_run_with_several_rollouts_keeps_each_rollout(tmp_path, endpoint):
    ep = endpoint(lambda body, n: REPLIES[n % len(REPLIES)])
    traces = run_eval(
        "medfact-bench", ep.base_url, tmp_path / "run", "--taskset.dataset-path", str(DEMO_ROWS), "-r", "2"
    )
    assert len(traces) == 12
    proc = rescore(tmp_path / "run", tmp_path / "new")
    assert proc.returncode == 0, proc.stderr
    new = read_jsonl(tmp_path / "new" / "traces.jsonl")
    assert [(t["id"], t["task"]["data"]["idx"]) for t in new] == [
        (t["id"], t["task"]["data"]["idx"]) for t in traces
    ]
    assert [t["agent"]["model"] for t in new] == ["scripted"] * 12
    assert "num_rollouts = 2" in (tmp_path / "new" / "config.toml").read_text()
    report = json.loads((tmp_path / "new" / "report.json").read_text())
    assert report["complete"] and report["rollouts"]["per_task"] == 2
    assert report["rollouts"]["source"] == "config.toml"
    # The printed summary counts tasks and rollouts apart (it said "12 of 6 tasks, each once").
    assert "Complete: 6 of 6 tasks x 2 rollouts (12 traces), one provenance." in proc.stdout.splitlines()
    assert json.loads((tmp_path / "new" / "comparison.json").read_text())["n_changed"] == 0


def test_verifiers_04_episodes_are_rescored_rollout_by_rollout(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(EPISODES, run / "traces.jsonl")
    # The episodes name the dataset file where it was on the machine that ran them.
    proc = rescore(run, tmp_path / "new")
    clean_exit_2(proc, "/run-machine/site-packages/medfact_bench/demo/medfact_demo.jsonl", "--dataset-path")
    proc = rescore(run, tmp_path / "new", "--dataset-path", str(DEMO_ROWS))
    assert proc.returncode == 0, proc.stderr
    episodes, new = read_jsonl(EPISODES), read_jsonl(tmp_path / "new" / "traces.jsonl")
    # Each episode's agent trace keeps its id; two rollouts of each of the six tasks.
    assert [t["id"] for t in new] == [e["traces"][0]["id"] for e in episodes]
    assert sorted(t["task"]["data"]["idx"] for t in new) == sorted([0, 1, 2, 3, 4, 5] * 2)
    # The reply as recorded, its leading space included.
    replies = {
        t["task"]["data"]["idx"]: [n["message"]["content"] for n in t["nodes"] if n.get("sampled")]
        for t in new
    }
    assert replies[0] == [" <think>a</think><score>2</score>"] and replies[2] == ["<score>0</score>\n"]
    comparison = json.loads((tmp_path / "new" / "comparison.json").read_text())
    assert comparison["n"] == 12 and comparison["n_changed"] == 0  # both lines read alike
    assert comparison["before"]["code"]["verifiers"] == "0.4.0"
    assert json.loads((tmp_path / "new" / "report.json").read_text())["rollouts"]["per_task"] == 2


# ------------------------------------------------------------------------------ refusals


def edited(scored: Path, tmp_path: Path, edit) -> Path:
    traces = read_jsonl(scored / "traces.jsonl")
    for i, trace in enumerate(traces):
        edit(i, trace)
    run = tmp_path / "edited"
    run.mkdir()
    write_jsonl(run / "traces.jsonl", traces)
    return run


def test_rescore_never_writes_over_a_run(scored, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(scored, run)
    before = {p.name: p.read_bytes() for p in run.iterdir()}
    clean_exit_2(rescore(run, run), f"{run}: this is the run's own directory")
    other = tmp_path / "other"
    shutil.copytree(scored, other)
    clean_exit_2(rescore(run, other), f"{other / 'traces.jsonl'}: already holds a run's traces")
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before


def _option(i: int, trace: dict) -> None:
    trace["task"]["data"]["provenance"]["options"]["gone_option"] = True


def _one_option(i: int, trace: dict) -> None:
    if i == 3:
        trace["task"]["data"]["provenance"]["options"]["subset"] = "scifact"


def _selection(i: int, trace: dict) -> None:
    trace["task"]["data"]["selection"]["n_expected"] = 7


def _claim(i: int, trace: dict) -> None:
    if i == 4:
        trace["task"]["data"]["claim"] = "Another claim."


def _no_options(i: int, trace: dict) -> None:
    del trace["task"]["data"]["provenance"]["options"]


@pytest.mark.parametrize(
    ("edit", "fragments"),
    [
        (_option, ("traces.jsonl:1", "cannot be reproduced by the installed medfact-bench", "gone_option")),
        (_one_option, ("traces.jsonl:4", "'task.data.provenance.options' differs from line 1's")),
        (_selection, ("traces.jsonl:1", "selects other tasks", "selection n_expected: 7 in the run, 6 now")),
        (
            _claim,
            ("traces.jsonl:5", "'task.data.claim' of idx 4 differs from the task", "cannot be rescored"),
        ),
        (_no_options, ("traces.jsonl:1", "'task.data.provenance.options' is missing")),
    ],
    ids=["unknown-option", "options-differ", "selection", "task-content", "no-options"],
)
def test_what_cannot_be_reproduced_is_refused_in_one_line(scored, tmp_path, edit, fragments):
    run = edited(scored, tmp_path, edit)
    clean_exit_2(rescore(run, tmp_path / "new"), *fragments)
    assert not (tmp_path / "new").exists() or not any((tmp_path / "new").iterdir())


def test_all_or_nothing(scored, tmp_path, monkeypatch):
    """A failure after the new traces and report are staged (here: writing the comparison)
    leaves no file of the new run."""
    import medhal.reports.rescore as rescore_module

    def broken(comparison):
        raise ValueError("cannot render the comparison")

    monkeypatch.setattr(rescore_module, "comparison_markdown", broken)
    proc = rescore(scored, tmp_path / "new")
    clean_exit_2(proc, "cannot render the comparison")
    assert not (tmp_path / "new").exists() or not any((tmp_path / "new").iterdir())
