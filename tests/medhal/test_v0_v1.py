"""The classic v0 environment (`load_environment`) and the v1 taskset score the same
replies identically, for every installed environment, on its bundled demo sample: every
reward and every metric the one scoring pass records (under all three readings)."""

import importlib

import pytest

from medhal.kit.lines import reward_values, taskset_class, taskset_config_type
from medhal.kit.task import score_reply
from medhal.reports.registry import benchmark_module, installed, package

REPLIES = [
    "",
    "I am not sure.",
    "<think>weighing it</think><score>1</score>",
    "<score>-2</score>",
    "<score>7</score>",
    "0",
    "1",
    "2",
    "Answer: 1 (hallucinated)",
    "<think>unclosed",
    '{"is_answer_correct": "yes", "answer": "A"}',
    "{'cop': 'I do not know', 'cop_index': 4}",
    '```json\n{"Title": "Unknown", "is_paper_exists": "no"}\n```',
    '{"PMID": "12345", "url": "https://pubmed.ncbi.nlm.nih.gov/12345"}',
]


@pytest.fixture(params=sorted(installed()))
def environment(request, assets_dir):
    """The environment package, with its pinned prompt assets read from the shared copies."""
    return request.param, importlib.import_module(package(request.param))


async def test_v0_and_v1_agree(environment):
    env_id, module = environment
    options = benchmark_module(env_id).DEMO_OPTIONS
    env = module.load_environment(**options, max_turns=1)
    rows = env.eval_dataset
    v1 = taskset_class(env_id)(taskset_config_type(env_id).model_validate({"id": env_id, **options})).select()
    assert len(rows) == len(v1)
    compared = 0
    for row, task in zip(rows, v1, strict=True):
        assert row["info"]["task_data"]["idx"] == task.data.idx
        for reply in REPLIES:
            state = {
                "prompt": row["prompt"],
                "completion": [{"role": "assistant", "content": reply}],
                "info": dict(row["info"]),
                "answer": "",
                "input": {},
            }
            await env.rubric.score_rollout(state)
            trace = await score_reply(task, reply)
            assert state["reward"] == pytest.approx(trace.reward), (env_id, task.data.idx, reply)
            for name, value in {**reward_values(trace), **trace.metrics}.items():
                assert state["metrics"][name] == pytest.approx(value), (env_id, name, reply)
            compared += 1
    assert compared == len(v1) * len(REPLIES)
