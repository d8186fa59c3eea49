"""The v0 `load_environment` as verifiers' v0 tooling (vf-eval, prime's and vf-eval's TOML
loaders) calls it: completions arrive as verifiers' message models, not dicts, and a
`[taskset]` table arrives as `config={"taskset": {...}}`."""

from __future__ import annotations

import pytest
from verifiers.types import AssistantMessage

import medfact_bench
import medhallu
from medfact_bench.benchmark import DEMO_OPTIONS as MEDFACT_DEMO
from medfact_bench.scoring import gold_reply, wrong_reply
from medhallu.benchmark import DEMO_OPTIONS as MEDHALLU_DEMO


@pytest.fixture(scope="module")
def medfact():
    return medfact_bench.load_environment(**MEDFACT_DEMO)


def data_of(env, row: int):
    from medfact_bench.taskset import MedFactData

    return MedFactData.model_validate(env.eval_dataset[row]["info"]["task_data"])


async def reward(env, row: int, completion) -> float:
    record = env.eval_dataset[row]
    state = {"prompt": record["prompt"], "completion": completion, "info": dict(record["info"]), "answer": ""}
    await env.rubric.score_rollout(state)
    return state["reward"]


@pytest.mark.parametrize(
    "shape",
    [
        lambda text: [AssistantMessage(content=text)],  # what vf-eval passes
        lambda text: [{"role": "assistant", "content": text}],
        lambda text: [AssistantMessage(content=[{"type": "text", "text": text}])],  # content parts
        lambda text: text,
    ],
    ids=["message-model", "dict", "content-parts", "string"],
)
async def test_the_reply_is_read_whatever_shape_the_completion_has(medfact, shape):
    assert await reward(medfact, 0, shape(gold_reply(data_of(medfact, 0)))) == 1.0
    assert await reward(medfact, 1, shape(wrong_reply(data_of(medfact, 1)))) == 0.0


async def test_the_last_assistant_message_is_the_reply(medfact):
    gold, wrong = gold_reply(data_of(medfact, 0)), wrong_reply(data_of(medfact, 0))
    completion = [
        AssistantMessage(content=wrong),
        {"role": "user", "content": gold},
        AssistantMessage(content=gold),
    ]
    assert await reward(medfact, 0, completion) == 1.0
    assert await reward(medfact, 1, [{"role": "user", "content": gold}]) == 0.0  # no reply at all


def task_ids(env) -> list[int]:
    return [row["info"]["task_data"]["idx"] for row in env.eval_dataset]


def test_a_taskset_table_is_unpacked(medfact):
    subset = {"subset": "healthver"}
    flat = medfact_bench.load_environment(**MEDFACT_DEMO, **subset)
    table = medfact_bench.load_environment(
        config={"taskset": {"id": "medfact-bench", **MEDFACT_DEMO, **subset}}
    )
    mixed = medfact_bench.load_environment(**MEDFACT_DEMO, config={"taskset": subset, "harness": {"id": "x"}})
    assert task_ids(flat) == task_ids(table) == task_ids(mixed) != task_ids(medfact)
    assert [r["prompt"] for r in table.eval_dataset] == [r["prompt"] for r in flat.eval_dataset]


@pytest.mark.parametrize(
    "config, message",
    [
        ({"taskset": {"id": "med-halt"}}, "config.taskset.id is 'med-halt', another environment"),
        ({"taskset": {"dataset_path": "x"}}, "options ['dataset_path'] are given both in config.taskset"),
        ({"tasks": {}}, "config sections ['tasks'] are not one of taskset, harness"),
    ],
)
def test_a_taskset_table_that_cannot_be_meant_is_an_error(config, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        medfact_bench.load_environment(**MEDFACT_DEMO, config=config)


def test_medhallus_own_config_option_is_not_a_table():
    """MedHallu has an option named `config` (the dataset configuration): a string there is
    that option, a table the `[taskset]` sections."""
    options = {**MEDHALLU_DEMO, "prompts": "demo"}
    as_option = medhallu.load_environment(**options)
    as_table = medhallu.load_environment(config={"taskset": options})
    assert task_ids(as_option) == task_ids(as_table) and len(task_ids(as_option)) == 6
    with pytest.raises(ValueError, match="pqa_artificial"):
        medhallu.load_environment(**{**options, "config": "no-such-config"})
