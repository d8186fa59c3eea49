"""prime-rl's own path, on the verifiers prime-rl main pins (`make test-prime-rl`: compat/prime-rl,
Python 3.12, PyPI's verifiers 0.3.1.dev62, the files of verifiers a60a606 that prime-rl 559b447
vendors). Not collected on the 0.2 line (tests/conftest.py), which has no such path.

- configs/rl/: every `[[orchestrator.<train|eval>.source]]` holds only the fields prime-rl's
  source configs declare, and its `env` table resolves as prime-rl's `EnvConfig` resolves it
  (verifiers' `resolve_env_field`): our taskset config, our harness, the host runtime, the role
  stated, 0/1 rewards on every eval source; the env server's `load_environment` builds it.
  prime-rl's own `RLConfig` (its `prime-rl-configs` package, not on PyPI) loads the files in
  `make check-prime-rl-configs PRIME_RL=<checkout>` (scripts/check_prime_rl_configs.py).
- The load path, for every environment on its demo rows: what prime-rl's orchestrator does
  (`vf.load_taskset(env.taskset)`, then `list(taskset)` off the event loop, no selection; each
  episode ships `task.data.model_dump(mode="json")` to an env server started as prime-rl's
  launcher starts it, `serve_env`, which validates the data into the taskset's `TaskData` and
  runs the rollout), against a scripted endpoint. The episode must carry the dispatched task's
  key and hash (prime-rl's `_validate_episode_task` drops it otherwise), the same reply, rewards,
  metrics and readings as the task scored where it was loaded, and, written as prime-rl's file
  monitor writes it (`rollouts/step_0/eval/all/traces.jsonl` of `Episode.to_record()`, stamped as
  its dispatcher stamps eval episodes), `medhal report` must give the report of an `eval` run of
  the same replies (tests/cross_line.json).

Not checked here: a training run (trainer, inference server, weight updates, GPUs), prime-rl's
orchestrator itself, its training client (token in, token out through its renderers and vLLM; the
episodes here use verifiers' chat-completions client against a scripted endpoint), and its
elastic worker pool (the server here is one in-process `EnvServer`, `serve_env(max_workers=1)`,
the same request handling).
"""

from __future__ import annotations

import asyncio
import copy
import json
import multiprocessing
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.scripted_endpoint import ScriptedEndpoint
from tests.test_cross_line import (
    ENVIRONMENTS,
    RECORD,
    canonical,
    demo_options,
    last_user_text,
    scripted_replies,
)

pytestmark = pytest.mark.slow(reason="an env server process per environment, rollouts through it")

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CONFIGS = sorted((ROOT / "configs" / "rl").glob("*.toml"))

PRIME_RL_SOURCE_FIELDS = {
    # prime-rl @ 559b447, packages/prime-rl-configs/src/prime_rl/configs/orchestrator.py: the fields
    # of EnvConfig (env, serve, name, ratio) and of TrainSourceConfig / EvalSourceConfig.
    "train": {"env", "serve", "name", "ratio", "sampling", "group_size", "algo", "curriculum"},
    "eval": {"env", "serve", "name", "ratio", "sampling", "num_examples", "group_size", "interval"},
}
ENV_FIELDS = {"taskset", "agent"}
"""What our sources set of verifiers' SingleAgentEnvConfig."""
AGENT_FIELDS = {"harness", "runtime", "timeout"}


def sources() -> list[tuple[str, str, dict[str, Any]]]:
    found = []
    for path in CONFIGS:
        orchestrator = tomllib.loads(path.read_text())["orchestrator"]
        for role in ("train", "eval"):
            for table in orchestrator.get(role, {}).get("source", []):
                found.append((path.name, role, table))
    return found


def resolved(env: dict[str, Any]) -> Any:
    """An `env` table as prime-rl's EnvConfig narrows it (its `_resolve_env` validator)."""
    import verifiers.v1 as vf

    return vf.resolve_env_field({"env": copy.deepcopy(env)})["env"]


@pytest.mark.parametrize(
    ("config", "role", "table"), sources(), ids=lambda v: v if isinstance(v, str) else v.get("name")
)
def test_every_rl_config_source_is_a_prime_rl_source(config: str, role: str, table: dict[str, Any]) -> None:
    import verifiers.v1 as vf

    from medhal.kit.lines import taskset_class, taskset_config_type

    assert set(table) <= PRIME_RL_SOURCE_FIELDS[role], (
        f"{config}: {sorted(set(table) - PRIME_RL_SOURCE_FIELDS[role])}"
    )
    assert set(table["env"]) <= ENV_FIELDS and set(table["env"]["agent"]) <= AGENT_FIELDS
    env = resolved(table["env"])
    env_id = table["env"]["taskset"]["id"]
    assert type(env.taskset) is taskset_config_type(env_id)
    assert env.agent.harness.id == env_id
    assert env.agent.runtime.type == "subprocess"  # our harness runs no program: the host
    assert env.taskset.role == role, f"{config}: a {role} source must state role = {role!r}"
    if role == "eval":
        assert env.taskset.binary_reward, f"{config}: an eval source pays 1 or 0 (binary_reward = true)"
    vf.ServeConfig.model_validate(table.get("serve", {}))
    # What the env server does first (its EnvServer.__init__): build the environment. No data
    # is loaded there, so the Hub's training pool is not needed.
    built = vf.load_environment(env)
    assert type(built.taskset) is taskset_class(env_id)


def test_the_configs_train_and_evaluate_every_environment_apart() -> None:
    by_role: dict[str, set[str]] = {"train": set(), "eval": set()}
    for _config, role, table in sources():
        by_role[role].add(table["env"]["taskset"]["id"])
    assert by_role["train"] == {"medhallu", "med-halt"}  # MedFact-Bench has no training data
    assert by_role["eval"] == set(ENVIRONMENTS)


# ------------------------------------------------------------------------- the load path


def source_env(env_id: str) -> Any:
    """A demo-row source as configs/rl/ writes one."""
    taskset = {"id": env_id, **demo_options(ENVIRONMENTS[env_id]), "role": "eval", "binary_reward": True}
    agent = {"harness": {"id": env_id}, "runtime": {"type": "subprocess"}}
    return resolved({"taskset": taskset, "agent": agent})


@contextmanager
def env_server(env: Any) -> Iterator[str]:
    """An env server for `env`, started as prime-rl's launcher starts one (`serve_env` in a
    process of its own, the env config shipped as `env_config_data`), on a free local port."""
    from verifiers.v1.serve import env_config_data, serve_env

    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    kwargs = {"max_workers": 1, "address": "tcp://127.0.0.1:0", "address_queue": queue}
    process = context.Process(target=serve_env, kwargs={**kwargs, "config_data": env_config_data(env)})
    process.start()
    try:
        yield queue.get(timeout=300)
    finally:
        process.terminate()
        process.join(30)


async def dispatched(tasks: list[Any], address: str, base_url: str) -> list[Any]:
    """Each task's episode, dispatched as prime-rl's `Env.run` dispatches it."""
    import verifiers.v1 as vf
    from verifiers.v1.serve import EnvClient

    client = EnvClient(address=address)
    await client.wait_for_server_startup(timeout=300)
    return list(
        await asyncio.gather(
            *(
                client.run(
                    task_data=task.data.model_dump(mode="json"),
                    client=vf.EvalClientConfig(base_url=base_url),
                    model="scripted",
                    sampling=vf.SamplingConfig(),
                )
                for task in tasks
            )
        )
    )


def stamped(episode: Any, env_id: str, idx: int) -> dict[str, Any]:
    """An eval episode as prime-rl's dispatcher stamps it (`emit_episode`) and its file monitor
    writes it (`Episode.to_record()`)."""
    import verifiers.v1 as vf

    episode.env.name = env_id
    episode.group = vf.GroupInfo(id=f"{env_id}-{idx}")
    episode.record_run(vf.TrainRunInfo(id="medhal-test", work=vf.EvalWorkInfo(step=0)))
    return episode.to_record()


@pytest.mark.parametrize("env_id", list(ENVIRONMENTS))
def test_prime_rl_load_path(env_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import verifiers.v1 as vf

    from medhal.kit.lines import reward_values
    from medhal.kit.task import score_reply

    shared = os.environ.get("MEDHAL_SHARED_DATA")
    if env_id == "med-halt" and not shared:
        pytest.skip("Med-HALT's prompt files come from MEDHAL_SHARED_DATA")
    if shared:
        monkeypatch.setenv("MEDHAL_ASSETS_DIR", shared)
    monkeypatch.setenv("PRIME_API_KEY", "scripted")
    env = source_env(env_id)
    taskset = vf.load_taskset(env.taskset)
    assert not type(taskset).INFINITE
    tasks = asyncio.run(asyncio.to_thread(lambda: list(taskset)))
    assert [t.data.idx for t in tasks] == list(range(len(tasks))) and tasks

    replies = scripted_replies(env_id, demo_options(ENVIRONMENTS[env_id]))
    endpoint = ScriptedEndpoint(lambda body, _n: replies[last_user_text(body)]).start()
    try:
        with env_server(env) as address:
            episodes = asyncio.run(dispatched(tasks, address, endpoint.base_url))
    finally:
        endpoint.stop()

    records = []
    for task, episode in zip(tasks, episodes, strict=True):
        assert episode.ok, (task.data.idx, episode.errors)
        # prime-rl's _validate_episode_task: the task came back as it was sent.
        assert (episode.task.key, episode.task.hash) == (task.key, task.hash), task.data.idx
        (trace,) = episode.traces
        assert trace.task.data.model_dump(mode="json") == task.data.model_dump(mode="json")
        local = asyncio.run(score_reply(task, trace.last_reply or ""))
        assert reward_values(trace) == reward_values(local), task.data.idx
        assert set(reward_values(trace).values()) <= {0.0, 1.0}  # binary_reward: pass@k and pass^k
        assert trace.metrics == local.metrics and trace.info == local.info, task.data.idx
        records.append(stamped(episode, env_id, task.data.idx))

    run = tmp_path / "run"
    traces = run / "rollouts" / "step_0" / "eval" / "all" / "traces.jsonl"
    traces.parent.mkdir(parents=True)
    traces.write_text("".join(json.dumps(r, separators=(",", ":"), default=str) + "\n" for r in records))
    report = subprocess.run(
        [str(BIN / "medhal"), "report", str(run), "--no-plots"], capture_output=True, text=True, timeout=600
    )
    assert report.returncode == 0, report.stderr[-3000:]
    (written,) = (run / "medhal-reports").glob(f"{env_id}--step_0/report.json")
    assert_same_figures(json.loads(written.read_text()), json.loads(RECORD.read_text())[env_id]["report"])


def stated(data: dict[str, Any]) -> None:
    """A data provenance block (Med-HALT: one per test set) as a source stating `role = "eval"`
    and `binary_reward = true` records it."""
    if "options" not in data:
        for block in data.values():
            stated(block)
        return
    data["options"].update(role="eval", binary_reward=True)
    data["role"] = {"role": "eval", "stated": True}
    if "reward" in data:
        data["reward"]["binary_reward"] = True


def assert_same_figures(got: dict[str, Any], eval_run: dict[str, Any]) -> None:
    """The report of a prime-rl epoch is that of an `eval` run of the same replies, but for what
    the source states and the eval run did not (`role = "eval"`, `binary_reward = true`): the
    provenance records both, and the mean reward is the accuracy (1 or 0 per rollout); and the
    report says where the tasks expected come from (prime-rl 559b447 writes no plan: the records)."""
    got, expected = canonical(got), copy.deepcopy(eval_run)
    assert got.pop("episodes_planned") is None
    assert got.pop("expected_from").startswith("the records")
    stated(expected["provenance"]["data"])
    rollouts, expected_rollouts = got["rollouts"], expected["rollouts"]
    assert rollouts.pop("mean_reward") == rollouts["majority_accuracy"]  # one rollout per task
    expected_rollouts.pop("mean_reward")
    assert got == expected, sorted(k for k in set(got) | set(expected) if got.get(k) != expected.get(k))
