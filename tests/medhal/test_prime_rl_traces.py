"""`medhal report` on prime-rl's own trace files (issue 32 item 3), both layouts, on records
made by `Episode.to_record()` of the verifiers prime-rl pins (verifiers 0.3.1.dev62, the
fixtures of `tests/medhal/prime_rl/`, written by `scripts/prime_rl_fixtures.py`): each eval
epoch is a run, complete by what prime-rl records, with the same figures as an `eval` run of
the same replies; and every way such files go wrong is one line, exit 2, or an incomplete
run, never a silent loss."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from scripts import prime_rl_fixtures as fixtures
from tests.conftest import run_eval
from tests.running import clean_exit_2, medhal_main
from tests.scripted_endpoint import last_user_text

FIXTURES = Path(__file__).with_name("prime_rl")
ROLLOUTS = "rollouts-559b447"
STREAM = "stream-3444"
EVAL_FILE = Path("rollouts/step_0/eval/all/traces.jsonl")
STREAM_FILE = Path("monitors/file/traces/stream.jsonl")
ENVS = list(fixtures.ENVIRONMENTS)

FIGURES = (
    "n",
    "n_expected",
    "n_distinct",
    "n_duplicates",
    "n_missing",
    "n_outside",
    "complete",
    "n_errors",
    "error_rate",
    "micro_accuracy",
    "micro_accuracy_ci",
    "macro_accuracy",
    "macro_accuracy_ci",
    "parse_rate",
    "paper_comparable",
    "overall",
    "conventions",
    "groups",
    "unreadable",
    "n_unreadable",
    "errors",
    "published",
)
"""What a report computes from the replies (not where they came from: provenance, source)."""


def copy(layout: str, tmp_path: Path) -> Path:
    target = tmp_path / layout
    shutil.copytree(FIXTURES / layout, target)
    return target


def report(*args: str) -> tuple[int, str]:
    proc = medhal_main("report", *args, "--no-plots")
    return proc.returncode, proc.stderr


def epoch_report(root: Path, env: str, step: int = 0) -> dict:
    return json.loads((root / "medhal-reports" / f"{env}--step_{step}" / "report.json").read_text())


def figures(rep: dict) -> dict:
    out = {k: rep[k] for k in FIGURES}
    out["rollouts"] = {k: v for k, v in rep["rollouts"].items() if k != "source"}
    return out


def read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


# ------------------------------------------------------------------ the same figures as eval


@pytest.fixture(scope="module")
def eval_reports(tmp_path_factory) -> dict[str, dict]:
    """Each environment's demo tasks through `eval -r 2` against an endpoint that answers a
    prompt's first request with the first scripted reply and its second with the second
    (the fixtures' replies), then `medhal report`."""
    from medhal.kit.lines import select_tasks, taskset_class, taskset_config_type
    from medhal.kit.task import prompt_messages
    from tests.scripted_endpoint import ScriptedEndpoint

    reports = {}
    for env_id in ENVS:
        options = fixtures.demo_options(env_id)
        config = taskset_config_type(env_id).model_validate({"id": env_id, **options})
        by_idx = fixtures.scripted_replies(env_id)
        by_prompt = {
            str(prompt_messages(t.data)[-1].content): by_idx[t.data.idx]
            for t in select_tasks(taskset_class(env_id)(config))
        }
        assert len(by_prompt) == len(by_idx)  # every prompt names one task
        asked: Counter[str] = Counter()

        def script(body, _n, by_prompt=by_prompt, asked=asked):
            prompt = last_user_text(body)
            asked[prompt] += 1
            return by_prompt[prompt][asked[prompt] - 1]

        out = tmp_path_factory.mktemp(env_id)
        endpoint = ScriptedEndpoint(script).start()
        try:
            args = [a for key, value in options.items() for a in (f"--taskset.{key}", str(value))]
            run_eval(env_id, endpoint.base_url, out, "-r", str(fixtures.ROLLOUTS), "-c", "1", *args)
        finally:
            endpoint.stop()
        code, err = report(str(out))
        assert code == 0, err
        reports[env_id] = json.loads((out / "report.json").read_text())
    return reports


@pytest.mark.parametrize("layout", [ROLLOUTS, STREAM])
def test_each_eval_epoch_reports_what_eval_reports_for_the_same_replies(layout, eval_reports, tmp_path):
    root = copy(layout, tmp_path)
    code, err = report(str(root))
    assert code == 0, err
    for env_id in ENVS:
        got, want = epoch_report(root, env_id), eval_reports[env_id]
        assert figures(got) == figures(want), env_id
        assert got["complete"] and got["n"] == 2 * got["n_expected"] > 0
        assert got["rollouts"]["pass_hat_k"]["2"] < got["rollouts"]["pass_at_k"]["2"]
        expected_from = got["expected_from"]
        if layout == STREAM:
            assert expected_from == f"plan.json: {got['n']} episodes planned"
            assert got["episodes_planned"] == got["n"] and got["episodes_match_plan"] is True
        else:
            assert expected_from.startswith("the records (prime-rl writes no expected count here)")
            assert got["episodes_planned"] is None
        assert got["source"].endswith(f"(prime-rl eval episodes of env {env_id!r} at step 0)")


def test_training_rollouts_are_left_out(tmp_path):
    """The stream holds four training rollouts of medhallu (step 1) among the evaluations."""
    root = copy(STREAM, tmp_path)
    kinds = Counter(json.loads(line)["run"]["work"]["type"] for line in read_lines(root / STREAM_FILE))
    assert kinds["train"] == 4
    assert report(str(root))[0] == 0
    assert epoch_report(root, "medhallu")["n"] == 12
    assert sorted(p.name for p in (root / "medhal-reports").iterdir()) == [
        "med-halt--step_0",
        "medfact-bench--step_0",
        "medhallu--step_0",
    ]


@pytest.mark.parametrize(
    "path",
    [EVAL_FILE, EVAL_FILE.parent, Path("rollouts/step_0"), Path("rollouts/step_0/eval"), Path("rollouts")],
)
def test_a_step_folder_or_its_file_is_the_same_run(path, tmp_path):
    root = copy(ROLLOUTS, tmp_path)
    code, err = report(str(root / path))
    assert code == 0, err
    assert epoch_report(root, "medfact-bench")["complete"]


@pytest.mark.parametrize("path", [STREAM_FILE, STREAM_FILE.parent, Path("monitors/file")])
def test_the_stream_is_found_from_its_folders(path, tmp_path):
    root = copy(STREAM, tmp_path)
    code, err = report(str(root / path))
    assert code == 0, err
    assert epoch_report(root, "medhallu")["episodes_planned"] == 12


def test_one_epoch_with_o_reports_there(tmp_path):
    root = copy(ROLLOUTS, tmp_path)
    lines = [line for line in read_lines(root / EVAL_FILE) if '"name":"medhallu"' in line]
    (root / EVAL_FILE).write_text("".join(lines))
    code, err = report(str(root / EVAL_FILE), "-o", str(tmp_path / "out"))
    assert code == 0, err
    assert json.loads((tmp_path / "out" / "report.json").read_text())["n"] == 12


# ------------------------------------------------------------------------------ completeness


def drop(path: Path, keep) -> None:
    """Keep the lines of `path` that `keep` accepts; in a stream, its index rows too."""
    lines = read_lines(path)
    kept = [line for line in lines if keep(json.loads(line))]
    path.write_text("".join(kept))
    index = path.with_name("stream.index.jsonl")
    if path.name == "stream.jsonl" and index.is_file():
        ids = {json.loads(line)["id"] for line in kept}
        index.write_text("".join(row for row in read_lines(index) if json.loads(row)["id"] in ids))


def is_task(record: dict, env: str, idx: int) -> bool:
    return record["env"]["name"] == env and record["task"]["data"]["idx"] == idx


@pytest.mark.parametrize("layout", [ROLLOUTS, STREAM])
def test_a_task_missing_inside_the_run_is_missing(layout, tmp_path):
    root = copy(layout, tmp_path)
    file = root / (EVAL_FILE if layout == ROLLOUTS else STREAM_FILE)
    drop(file, lambda r: not is_task(r, "medhallu", 2))
    code, err = report(str(root))
    assert code == 1 and "medhallu" in err and "1 of 6 tasks have no trace" in err
    got = epoch_report(root, "medhallu")
    assert (got["n_missing"], got["missing_idx"], got["complete"]) == (1, [2], False)


def test_a_cut_tail_shows_only_against_prime_rls_plan(tmp_path):
    """Without plan.json (prime-rl 559b447) the last task's absence cannot show: the tasks
    expected are judged from the records, and the report says so. The stream's plan.json
    catches it."""
    old, new = copy(ROLLOUTS, tmp_path), copy(STREAM, tmp_path)
    drop(old / EVAL_FILE, lambda r: not is_task(r, "medhallu", 5))
    drop(new / STREAM_FILE, lambda r: not is_task(r, "medhallu", 5))
    assert report(str(old))[0] == 0
    judged = epoch_report(old, "medhallu")
    assert (judged["n_expected"], judged["complete"]) == (5, True)
    assert "tasks 0 to the highest idx seen" in judged["expected_from"]
    code, err = report(str(new))
    assert code == 1 and "1 of 6 tasks have no trace" in err
    planned = epoch_report(new, "medhallu")
    assert (planned["n_expected"], planned["missing_idx"], planned["episodes_planned"]) == (6, [5], 12)


def test_a_selection_the_tasks_record_is_not_what_prime_rl_ran(tmp_path):
    """From verifiers 0.3 on, iterating a taskset (prime-rl's `list(taskset)`) stamps every task
    with a selection of all of them; an eval source with `num_examples = 4` runs the first 4.
    The epoch is judged by prime-rl's plan (or its records), never by that selection."""
    root = copy(STREAM, tmp_path)
    stream = root / STREAM_FILE
    selection = {
        "n_expected": 6,
        "num_tasks": None,
        "shuffle": False,
        "contiguous": True,
        "idx_sha256": "0" * 64,
    }
    records = [json.loads(line) for line in read_lines(stream)]
    for record in records:
        for task in [record["task"], *(t["task"] for t in record["traces"])]:
            task["data"]["selection"] = selection
    stream.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    drop(stream, lambda r: r["env"]["name"] != "medhallu" or r["task"]["data"]["idx"] < 4)
    plan = root / "monitors/file/plan.json"
    plan.write_text(json.dumps({**json.loads(plan.read_text()), "medhallu": {"0": 8}}))
    code, err = report(str(root))
    assert code == 0, err
    got = epoch_report(root, "medhallu")
    assert (got["n_expected"], got["n_missing"], got["episodes_planned"], got["complete"]) == (4, 0, 8, True)


def test_a_short_group_makes_the_run_incomplete(tmp_path):
    root = copy(ROLLOUTS, tmp_path)
    lines = read_lines(root / EVAL_FILE)
    first = next(i for i, line in enumerate(lines) if '"name":"med-halt"' in line)
    (root / EVAL_FILE).write_text("".join(lines[:first] + lines[first + 1 :]))
    code, err = report(str(root))
    assert code == 1 and "1 tasks lack 1 of their 2 rollouts each" in err
    assert not epoch_report(root, "med-halt")["complete"]


def test_a_plan_that_is_not_whole_groups_is_incomplete(tmp_path):
    root = copy(STREAM, tmp_path)
    plan = root / "monitors/file/plan.json"
    plan.write_text(json.dumps({**json.loads(plan.read_text()), "medfact-bench": {"0": 13}}))
    assert report(str(root))[0] == 1
    got = epoch_report(root, "medfact-bench")
    assert (got["episodes_planned"], got["episodes_match_plan"], got["complete"]) == (13, False, False)


def test_a_repeated_line_is_a_duplicate(tmp_path):
    root = copy(STREAM, tmp_path)
    lines = read_lines(root / STREAM_FILE)
    (root / STREAM_FILE).write_text("".join([*lines, lines[0]]))
    (root / "monitors/file/traces/stream.index.jsonl").unlink()
    code, err = report(str(root))
    assert code == 1 and "1 trace repeats the same trace of a task" in err


def test_an_episode_that_failed_before_its_trace_is_an_errored_rollout(tmp_path):
    """prime-rl keeps episode-level failures: no trace, `ok` false, the error on the episode.
    Two such failures of one task are two rollouts (told apart by the episode id), not a
    duplicate, and both count as errors in every denominator."""
    root = copy(ROLLOUTS, tmp_path)
    lines = read_lines(root / EVAL_FILE)
    failed = []
    for i, line in enumerate(lines):
        record = json.loads(line)
        if is_task(record, "medfact-bench", 1):
            record.update(ok=False, traces=[], errors=[{"type": "EnvError", "message": "boot failed"}])
            lines[i] = json.dumps(record) + "\n"
            failed.append(i)
    assert len(failed) == 2
    (root / EVAL_FILE).write_text("".join(lines))
    code, err = report(str(root))
    assert code == 1 and "2 of 12 rollouts failed" in err and "EnvError: boot failed" in err
    got = epoch_report(root, "medfact-bench")
    assert (got["n"], got["n_errors"], got["n_duplicates"], got["n_missing"]) == (12, 2, 0, 0)


def test_another_projects_environment_is_left_out(tmp_path):
    root = copy(STREAM, tmp_path)
    lines = read_lines(root / STREAM_FILE)
    other = json.loads(lines[0])
    other["env"] = {"id": "gsm8k", "name": "gsm8k"}
    other["task"]["data"] = {"idx": 0, "prompt": "1 + 1?"}
    other["traces"] = []
    (root / STREAM_FILE).write_text("".join([*lines, json.dumps(other) + "\n"]))
    (root / "monitors/file/traces/stream.index.jsonl").unlink()
    assert report(str(root))[0] == 0
    assert not (root / "medhal-reports" / "gsm8k--step_0").exists()


def test_an_env_name_is_a_safe_folder_name(tmp_path):
    root = copy(ROLLOUTS, tmp_path)
    path = root / EVAL_FILE
    path.write_text(path.read_text().replace('"name":"medhallu"', '"name":"../../x/medhallu"'))
    assert report(str(root))[0] == 0
    assert (root / "medhal-reports" / "_.._x_medhallu--step_0" / "report.json").is_file()
    assert not (tmp_path / "x").exists()


# ------------------------------------------------------------------------ refused, one line


def test_the_effective_subset_is_refused(tmp_path):
    root = copy(ROLLOUTS, tmp_path)
    effective = root / "rollouts/step_0/eval/effective"
    effective.mkdir()
    shutil.copy(root / EVAL_FILE, effective / "traces.jsonl")
    proc = medhal_main("report", str(effective))
    clean_exit_2(proc, "effective subset keeps only the episodes without error", "eval/all")


def test_training_rollouts_are_refused_as_a_run(tmp_path):
    root = copy(ROLLOUTS, tmp_path)
    proc = medhal_main("report", str(root / "rollouts/step_1/train/all"))
    clean_exit_2(proc, "training rollouts are not an evaluation")


def test_an_index_with_more_rows_than_the_stream_has_episodes_is_a_lost_stream(tmp_path):
    root = copy(STREAM, tmp_path)
    lines = read_lines(root / STREAM_FILE)
    (root / STREAM_FILE).write_text("".join(lines[:-3]))
    proc = medhal_main("report", str(root))
    clean_exit_2(proc, "stream.index.jsonl: indexes 34 episodes", "holds 31: the stream lost episodes")


@pytest.mark.parametrize(
    ("plan", "fragment"),
    [
        (lambda _: "[1, 2]", "not an object of env -> step -> expected episodes"),
        (lambda _: '{"medhallu": {"zero": 12}}', "field 'medhallu.zero' is not a step number"),
        (lambda _: '{"medhallu": {"0": -1}}', "field 'medhallu.0' is not a step number with a count"),
        (lambda _: '{"medhallu": ', "not readable JSON"),
        (
            lambda plan: json.dumps({**plan, "medhallu": {"0": 12, "9": 12}}),
            "env 'medhallu' step 9 plans 12 episodes; the stream holds none",
        ),
    ],
)
def test_a_bad_plan_is_one_line(plan, fragment, tmp_path):
    root = copy(STREAM, tmp_path)
    path = root / "monitors/file/plan.json"
    path.write_text(plan(json.loads(path.read_text())))
    clean_exit_2(medhal_main("report", str(root)), "plan.json", fragment)


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (lambda r: r.pop("run"), "field 'run' names no kind of work"),
        (lambda r: r["run"]["work"].update(step="0"), "field 'run.work.step' is not a step number"),
        (lambda r: r.update(env=["medhallu"]), "field 'env' is not an object"),
        (lambda r: r.update(env={}), "field 'env.name' is missing"),
        (lambda r: r["task"]["data"].pop("idx"), "field 'task.data.idx' is missing"),
    ],
)
def test_a_bad_episode_is_one_line_naming_the_line_and_field(change, fragment, tmp_path):
    root = copy(ROLLOUTS, tmp_path)
    lines = read_lines(root / EVAL_FILE)
    record = json.loads(lines[3])
    change(record)
    if "traces" in record and record["traces"] and "idx" not in record["task"]["data"]:
        record["traces"][0]["task"]["data"].pop("idx")
    lines[3] = json.dumps(record) + "\n"
    (root / EVAL_FILE).write_text("".join(lines))
    clean_exit_2(medhal_main("report", str(root)), f"{EVAL_FILE}:4", fragment)


def test_a_torn_last_line_is_one_line(tmp_path):
    root = copy(STREAM, tmp_path)
    text = (root / STREAM_FILE).read_text()
    (root / STREAM_FILE).write_text(text[:-200])
    (root / "monitors/file/traces/stream.index.jsonl").unlink()
    clean_exit_2(medhal_main("report", str(root)), "stream.jsonl:34", "not valid JSON")


def test_chunks_read_as_the_stream_and_a_sealed_chunk_is_refused(tmp_path):
    """PR #3465's layout: `stream/<NNNNN>.jsonl` chunks; sealed ones are zstd."""
    root = copy(STREAM, tmp_path)
    lines = read_lines(root / STREAM_FILE)
    chunks = root / "monitors/file/traces/stream"
    chunks.mkdir()
    (chunks / "00000.jsonl").write_text("".join(lines[:20]))
    (chunks / "00001.jsonl").write_text("".join(lines[20:]))
    (root / STREAM_FILE).unlink()
    assert report(str(root))[0] == 0
    assert epoch_report(root, "medhallu")["complete"]
    (chunks / "00000.jsonl").rename(chunks / "00000.jsonl.zst")
    clean_exit_2(medhal_main("report", str(root)), "00000.jsonl.zst: a sealed (zstd) chunk", "zstd -d")


def test_both_layouts_in_one_folder_is_ambiguous(tmp_path):
    root = copy(STREAM, tmp_path)
    shutil.copytree(FIXTURES / ROLLOUTS / "rollouts", root / "rollouts")
    clean_exit_2(medhal_main("report", str(root)), "holds both prime-rl layouts")


def test_merge_refuses_prime_rl_epochs(tmp_path):
    root = copy(STREAM, tmp_path)
    clean_exit_2(medhal_main("report", "--merge", str(root), "-o", str(tmp_path / "m")), "--merge")


def test_an_eval_run_beside_a_folder_named_rollouts_is_not_prime_rl(tmp_path):
    """Only `rollouts/step_<N>` makes a prime-rl path: an eval run kept under a folder called
    rollouts is read as an eval run."""
    run = tmp_path / "rollouts" / "mine"
    shutil.copytree(FIXTURES / ROLLOUTS / "rollouts/step_0/eval/all", run)
    lines = [line for line in read_lines(run / "traces.jsonl") if '"name":"medhallu"' in line]
    (run / "traces.jsonl").write_text("".join(lines))
    code, err = report(str(run), "--allow-incomplete")
    assert code == 0, err
    got = json.loads((run / "report.json").read_text())
    assert got["n"] == 12 and "expected_from" not in got and got["n_expected"] is None


def test_the_fixtures_are_what_the_script_writes():
    """The committed files are the generator's: every line an episode of the pinned
    verifiers, ids unique, the plan the episodes there."""
    for layout, file in ((ROLLOUTS, EVAL_FILE), (STREAM, STREAM_FILE)):
        records = [json.loads(line) for line in read_lines(FIXTURES / layout / file)]
        assert len({r["id"] for r in records}) == len(records)
        versions = {t["verifiers"]["version"] for r in records for t in r["traces"]}
        assert versions == {"0.3.1.dev62"}
    plan = json.loads((FIXTURES / STREAM / "monitors/file/plan.json").read_text())
    records = [json.loads(line) for line in read_lines(FIXTURES / STREAM / STREAM_FILE)]
    evals = Counter(r["env"]["name"] for r in records if r["run"]["work"]["type"] == "eval")
    assert {env: steps["0"] for env, steps in plan.items()} == dict(evals)


def test_the_stream_is_read_twice_however_many_epochs_it_holds(tmp_path, monkeypatch):
    """Once to find the epochs, once for all their episodes: a stream holds every epoch of a
    training run, so a pass per epoch would read a long run's stream once per eval."""
    from medhal.reports import prime_rl

    root = copy(STREAM, tmp_path)
    scans: Counter[str] = Counter()
    original = prime_rl._stamped_lines

    def counted(file):
        scans[Path(file).name] += 1
        return original(file)

    monkeypatch.setattr(prime_rl, "_stamped_lines", counted)
    assert report(str(root))[0] == 0
    assert len(list((root / "medhal-reports").iterdir())) == 3
    assert scans == {"stream.jsonl": 2}
