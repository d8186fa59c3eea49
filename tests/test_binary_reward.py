"""`binary_reward`, the option every environment has: 1 for a right answer, 0 for anything
else (a wrong answer, an abstention, a reply with no answer read), whatever the reward
knobs' defaults say; a knob set to another value beside it is refused in one line; the
option is recorded on every trace; Med-HALT's paper points stay a metric and its reports'
figures do not move.

The expected rewards are written per reply kind from what the reply says, before the
code runs: the gold answer earns 1, everything else 0."""

from __future__ import annotations

import asyncio
import importlib
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from medhal.kit import contract
from medhal.kit.lines import taskset_class, taskset_config_type
from medhal.kit.outcomes import CONVENTIONS
from medhal.kit.task import BenchmarkConfig, score_reply
from tests.running import clean_exit_2, medhal_main

ROOT = Path(__file__).resolve().parents[1]
ENVIRONMENTS = {env.env_id: env.package for env in contract.environments(ROOT, tests=True)}
"""Every environment (`medhal.kit.contract`), the test environments too: id -> package."""

# Replies with no answer in any format the benchmarks know: nothing under binary_reward
# on every benchmark, under the `medhal` and `strict` readings.
UNREADABLE = ("", "I cannot tell from what I was given.")


def demo_tasks(env_id: str, **options):
    module = ENVIRONMENTS[env_id]
    benchmark = importlib.import_module(f"{module}.benchmark")
    config_type = taskset_config_type(env_id)
    merged = {**benchmark.DEMO_OPTIONS, **options}
    if "prompts" in config_type.model_fields:
        merged["prompts"] = "demo"
    return taskset_class(env_id)(config_type.model_validate({"id": env_id, **merged})).select()


def scoring(env_id: str):
    return importlib.import_module(f"{ENVIRONMENTS[env_id]}.scoring")


def reward_of(task, reply: str) -> tuple[float, dict[str, float]]:
    trace = asyncio.run(score_reply(task, reply))
    return trace.reward, trace.metrics


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("env_id", ENVIRONMENTS)
def test_binary_reward_pays_one_for_right_and_zero_for_everything_else(
    env_id, convention, monkeypatch, tmp_path
):
    monkeypatch.setenv("MEDHAL_ASSETS_DIR", str(tmp_path))  # demo prompts: no pinned asset needed
    module = scoring(env_id)
    for task in demo_tasks(env_id, binary_reward=True, parser=convention):
        assert task.data.binary_reward is True
        cases = [(module.gold_reply(task.data), 1.0), (module.wrong_reply(task.data), 0.0)]
        if convention != "authors":  # the authors' parsers read some of them as answers (quirks)
            cases += [(reply, 0.0) for reply in UNREADABLE]
        if env_id == "medhallu":
            cases.append(("2", 0.0))  # the prompt's "not sure": an abstention
        for reply, expected in cases:
            reward, metrics = reward_of(task, reply)
            assert reward == expected, (task.data.idx, convention, reply)
            assert reward == metrics["correct"]


def test_med_halt_pays_the_papers_points_only_when_asked_and_keeps_them_as_a_metric(monkeypatch, tmp_path):
    """By default a wrong or unreadable Med-HALT reply earns 0, as under `binary_reward` (an
    errored rollout earns 0 too, so failing never beats answering); `task.wrong_reward =
    -0.25` pays the paper's eq. 1. Whatever the reward, the `paper_points` metric is eq. 1."""
    monkeypatch.setenv("MEDHAL_ASSETS_DIR", str(tmp_path))
    module = scoring("med-halt")
    plain, binary = demo_tasks("med-halt"), demo_tasks("med-halt", binary_reward=True)
    paper = demo_tasks("med-halt", task={"wrong_reward": -0.25})
    for default, with_, papers in zip(plain, binary, paper, strict=True):
        cases = [(module.gold_reply(default.data), (1.0, 1.0, 1.0))]
        cases += [(reply, (0.0, 0.0, -0.25)) for reply in (module.wrong_reply(default.data), *UNREADABLE)]
        for reply, expected in cases:
            scored = [reward_of(task, reply) for task in (default, with_, papers)]
            rewards, metrics = zip(*scored, strict=True)
            assert rewards == expected, reply
            assert {m["paper_points"] for m in metrics} == {expected[2]}
            assert metrics[0] == metrics[1] == metrics[2]


@pytest.mark.parametrize("env_id", ENVIRONMENTS)
def test_tasks_validate_under_binary_reward(env_id, monkeypatch, tmp_path):
    """`Task.validate` expects the gold reply to earn 1 and a wrong one 0 under the option
    (Med-HALT's wrong reply earns 0, not -0.25)."""
    monkeypatch.setenv("MEDHAL_ASSETS_DIR", str(tmp_path))
    tasks = demo_tasks(env_id, binary_reward=True)
    assert all(asyncio.run(task.validate()) for task in tasks)


# ------------------------------------------------------------- knobs beside the option


def nested(name: str, value: object) -> dict:
    """A dotted option (`task.wrong_reward`) as the nested options that set it."""
    *path, leaf = name.split(".")
    options: dict = {leaf: value}
    for part in reversed(path):
        options = {part: options}
    return options


def knob_cases(env_id: str) -> dict[str, tuple[dict, list[dict]]]:
    """Each reward knob (the config's REWARD_OPTIONS) at a value binary_reward does not pay
    (refused: the first of a few that the knob accepts alone, neither its default nor 0), and
    at the values it agrees with (accepted): the knob's default and 0."""
    config_type = taskset_config_type(env_id)

    def valid(options: dict) -> bool:
        try:
            config_type.model_validate({"id": env_id, **options})
        except ValidationError:
            return False
        return True

    cases = {}
    for name in config_type.REWARD_OPTIONS:
        *path, leaf = name.split(".")
        owner = config_type
        for part in path:
            owner = owner.model_fields[part].annotation
        default = owner.model_fields[leaf].default
        refused = next(
            v for v in (-0.5, 0.5, -0.25, 0.25) if v not in (default, 0) and valid(nested(name, v))
        )
        cases[name] = (nested(name, refused), [nested(name, default), nested(name, 0.0)])
    return cases


KNOBS = {env_id: knob_cases(env_id) for env_id in ENVIRONMENTS}


@pytest.mark.parametrize(("env_id", "knob"), [(env, knob) for env, knobs in KNOBS.items() for knob in knobs])
def test_a_knob_that_contradicts_binary_reward_is_refused(env_id, knob):
    config_type = taskset_config_type(env_id)
    refused, accepted = KNOBS[env_id][knob]
    config_type.model_validate({"id": env_id, **refused})  # fine without the option
    with pytest.raises(ValidationError) as info:
        config_type.model_validate({"id": env_id, "binary_reward": True, **refused})
    message = str(info.value)
    assert f"binary_reward pays 0 for every reply that is not right, but {knob} is" in message
    for options in accepted:
        config_type.model_validate({"id": env_id, "binary_reward": True, **options})


@pytest.mark.parametrize("env_id", ENVIRONMENTS)
def test_every_reward_knob_is_declared(env_id):
    """A reward option the environment adds later must be declared in REWARD_OPTIONS, or
    binary_reward would silently ignore it (or be silently ignored)."""
    config_type = taskset_config_type(env_id)
    assert issubclass(config_type, BenchmarkConfig)
    names = {f for f in config_type.model_fields if f.endswith("_reward") and f != "binary_reward"}
    task_type = config_type.model_fields["task"].annotation
    names |= {f"task.{f}" for f in task_type.model_fields if f.endswith("_reward")}
    assert set(config_type.REWARD_OPTIONS) == names


@pytest.mark.parametrize("env_id", ENVIRONMENTS)
def test_the_option_is_recorded_on_every_trace(env_id, monkeypatch, tmp_path):
    monkeypatch.setenv("MEDHAL_ASSETS_DIR", str(tmp_path))
    for value in (False, True):
        tasks = demo_tasks(env_id, binary_reward=value)
        assert {t.data.provenance["options"]["binary_reward"] for t in tasks} == {value}


def test_cli_refuses_the_contradiction_in_one_line(tmp_path):
    predictions = tmp_path / "p.jsonl"
    predictions.write_text('{"idx": 0, "reply": "1"}\n')
    proc = medhal_main(
        "score", "medhallu", "--predictions", str(predictions), "-o", str(tmp_path / "out"),
        "--taskset.binary_reward", "true", "--taskset.invalid_reward", "-0.5",
    )  # fmt: skip
    clean_exit_2(proc, "option (config)", "binary_reward pays 0", "invalid_reward is -0.5")


# ------------------------------------------------------------------ reports do not move


def test_med_halt_report_figures_do_not_depend_on_binary_reward(tmp_path):
    """The same replies scored with and without the option: every figure under every
    convention (the paper's score included) is the same; only the rewards differ."""
    from tests.med_halt.test_report import score_demo

    for name in ("plain", "binary"):
        (tmp_path / name).mkdir()
    plain = score_demo(tmp_path / "plain", "--taskset.task.wrong_reward", "-0.25")
    binary = score_demo(tmp_path / "binary", "--taskset.binary_reward", "true")
    # "plain" pays the paper's points here, so that the option changes the rewards
    assert plain["conventions"] == binary["conventions"]
    assert plain["groups"] == binary["groups"]
    assert plain["conventions"]["medhal"]["paper_score"] is not None
    for per_set in binary["provenance"]["data"].values():
        assert per_set["options"]["binary_reward"] is True and per_set["reward"]["binary_reward"] is True
    rewards = {name: _rewards(tmp_path / name / "scored" / "traces.jsonl") for name in ("plain", "binary")}
    assert set(rewards["plain"]) == {1.0, -0.25} and set(rewards["binary"]) == {1.0, 0.0}
    assert [r == 1.0 for r in rewards["plain"]] == [r == 1.0 for r in rewards["binary"]]


def _rewards(path: Path) -> list[float]:
    """The rewards of the traces that have a reply (not the error of a missing one)."""
    traces = [json.loads(line) for line in path.read_text().splitlines()]
    return [sum(t["rewards"].values()) for t in traces if not t["errors"]]
