"""The classic v0 environment (`load_environment`) and the v1 taskset score the same
replies identically, for every installed environment, on its bundled demo sample."""

import importlib

import pytest

from verifiers.v1.loaders import taskset_class, taskset_config_type

from medhal.registry import installed_environments
from medhal.task import score_reply

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


@pytest.fixture(params=sorted(installed_environments()))
def environment(request, monkeypatch, shared_data, tmp_path):
    """The environment module, with its prompt assets supplied offline: the shared copies,
    or (MedHallu, whose upstream script is not in shared data) a script of the authors'
    shape holding their prompt strings."""
    monkeypatch.setenv("MEDHAL_ASSETS_DIR", str(shared_data))
    if request.param == "medhallu":
        from tests.medhallu_fixtures import install_prompt_asset, official_strings, prompt_script

        install_prompt_asset(tmp_path / "assets", prompt_script(official_strings(shared_data)), monkeypatch)
    return request.param, importlib.import_module(installed_environments()[request.param])


async def test_v0_and_v1_agree(environment):
    env_id, module = environment
    options = module.DEMO_OPTIONS
    env = module.load_environment(**options, max_turns=1)
    rows = env.eval_dataset
    v1 = taskset_class(env_id)(taskset_config_type(env_id).model_validate({"id": env_id, **options})).select()
    assert len(rows) == len(v1)
    compared = 0
    for row, task in zip(rows, v1):
        assert row["info"]["task_data"]["idx"] == task.data.idx
        for reply in REPLIES:
            state = {"prompt": row["prompt"], "completion": [{"role": "assistant", "content": reply}],
                     "info": dict(row["info"]), "answer": "", "input": {}}
            await env.rubric.score_rollout(state)
            trace = await score_reply(task, reply)
            assert state["reward"] == pytest.approx(trace.reward), (env_id, task.data.idx, reply)
            for name, value in {**trace.rewards, **trace.metrics}.items():
                assert state["metrics"][name] == pytest.approx(value), (env_id, name, reply)
            compared += 1
    assert compared == len(v1) * len(REPLIES)
