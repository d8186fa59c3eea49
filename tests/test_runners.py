"""The two other ways our users run the environments, end to end for every environment,
against one scripted endpoint on 127.0.0.1 that answers each prompt with a reply of known
worth (the gold answer on even task positions, a well-formed wrong answer on odd ones):

- `eval @ configs/eval/<setting>.toml --server`: a paper setting through verifiers' env server
  (the path prime-rl trains through), which loads the environment in a process of its own
  (the in-process path is tested per environment next to its reports);
- `vf-eval` on the same settings rendered for it (configs/prime/), verifiers' v0 runner, which
  reaches the environments through their `load_environment`.

Each run covers the first three tasks of the environment's bundled demo rows (our own, not
benchmark data) under the options of its first paper setting and the pinned prompt files from
the shared data; every environment the contract finds runs (`medhal.kit.contract`), test
environments included.
All runs start from one Python process that calls the runners' real entry points (what the
`eval` and `vf-eval` scripts run) one after the other, to pay verifiers' import once.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from medhal.kit import contract
from medhal.reports.registry import benchmark_module, package
from scripts import prime_configs
from tests.scripted_endpoint import ScriptedEndpoint, last_user_text

pytestmark = pytest.mark.slow(
    reason="eval --server (a pool of environment-server processes) and vf-eval on every environment"
)

ROOT = Path(__file__).parents[1]
N = 3
SETTINGS = {env.env_id: env.settings()[0] for env in contract.environments(ROOT, tests=True)}
"""One paper setting per environment: the first of its configs/eval files."""
TWICE = next(
    env_id for env_id, path in SETTINGS.items() if tomllib.loads(path.read_text())["taskset"].keys() - {"id"}
)
"""The environment whose vf-eval entry runs a second time with its options as `[eval.taskset]`:
the first whose setting has options."""
KEY_VAR = "SCRIPTED_ENDPOINT_KEY"


def setting(env_id: str) -> dict[str, Any]:
    return tomllib.loads(SETTINGS[env_id].read_text())


def demo_rows(env_id: str) -> str:
    return str(benchmark_module(env_id).DEMO_OPTIONS["dataset_path"])


class Expected:
    """The first N tasks of each environment's setting on its demo rows, the reply the endpoint
    gives each prompt, and the reward that reply earns (through the task's own rubric)."""

    def __init__(self) -> None:
        import asyncio

        from medhal.kit.lines import reward_values, taskset_class, taskset_config_type
        from medhal.kit.task import prompt_messages, score_reply

        self.replies: dict[str, str] = {}
        self.reward: dict[tuple[str, int], float] = {}
        self.prompts: dict[str, set[str]] = {}
        for env_id in SETTINGS:
            scoring = importlib.import_module(f"{package(env_id)}.scoring")
            options = {**setting(env_id)["taskset"], "dataset_path": demo_rows(env_id)}
            tasks = taskset_class(env_id)(taskset_config_type(env_id).model_validate(options)).select()[:N]
            assert len(tasks) == N, env_id
            self.prompts[env_id] = set()
            for position, task in enumerate(tasks):
                prompt = prompt_messages(task.data)[-1].content
                gold = position % 2 == 0
                assert prompt not in self.replies, (
                    "two tasks with one prompt: the script could not tell them apart"
                )
                reply = (scoring.gold_reply if gold else scoring.wrong_reply)(task.data)
                self.replies[prompt] = reply
                trace = asyncio.run(score_reply(task, reply))
                self.reward[env_id, task.data.idx] = sum(reward_values(trace).values())
                assert trace.metrics["correct"] == float(gold), (env_id, task.data.idx)
                self.prompts[env_id].add(prompt)

    def script(self, body: dict[str, Any], number: int) -> str:
        return self.replies.get(last_user_text(body), "UNSCRIPTED PROMPT")

    def idx(self, env_id: str) -> list[int]:
        return sorted(i for e, i in self.reward if e == env_id)


@pytest.fixture(scope="module")
def assets_env(shared_data: Path) -> dict[str, str]:
    """The environment of the runs: pinned prompt files from the shared data, offline."""
    return {
        **os.environ,
        "MEDHAL_ASSETS_DIR": str(shared_data),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        KEY_VAR: "scripted",
    }


@pytest.fixture(scope="module")
def expected(assets_env: dict[str, str]) -> Expected:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEDHAL_ASSETS_DIR", assets_env["MEDHAL_ASSETS_DIR"])
        return Expected()


@pytest.fixture(scope="module")
def endpoint(expected: Expected):
    with ScriptedEndpoint(expected.script) as ep:
        yield ep


POOL = ["--pool.type", "static", "--pool.num-workers", "1"]
"""One env-server process per run: the server, client and messages of verifiers' pool without
its broker process, which only forwards them. Every process a run starts imports verifiers
anew, the bulk of a run's time here, and the default (elastic) pool starts two."""


def eval_argv(env_id: str, endpoint: ScriptedEndpoint, out: Path) -> list[str]:
    """`eval @ configs/eval/<setting>.toml --server ...` on the first N demo rows."""
    return [
        "@", str(SETTINGS[env_id]),
        "--server", "--no-rich", "--no-push", *POOL,
        "-m", "scripted", "--client.base-url", endpoint.base_url,
        "-n", str(N), "-o", str(out), "--taskset.dataset-path", demo_rows(env_id),
    ]  # fmt: skip


def vf_eval_config(endpoint: ScriptedEndpoint, out: Path) -> dict[str, Any]:
    """One vf-eval config running each environment's setting from configs/prime/ (its
    `[[eval]]` entry unchanged but for the demo rows), pointed at the endpoint; `TWICE`'s a
    second time with its options as a `[eval.taskset]` table instead of `[eval.env_args]`."""
    entries = []
    for env_id, path in SETTINGS.items():
        document = tomllib.loads(prime_configs.target(path).read_text())
        (entry,) = document["eval"]
        entry.setdefault("env_args", {})["dataset_path"] = demo_rows(env_id)
        entries.append(entry)
        assert document["rollouts_per_example"] == 1
    twice = next(e for e in entries if e["env_id"] == TWICE)
    entries.append(
        {**{k: v for k, v in twice.items() if k != "env_args"}, "taskset": dict(twice["env_args"])}
    )
    return {
        "model": "scripted",
        "api_base_url": endpoint.base_url,
        "api_key_var": KEY_VAR,
        "num_examples": N,
        "rollouts_per_example": 1,
        "disable_env_server": True,
        "disable_tui": True,
        "save_results": True,
        "output_dir": str(out),
        "eval": entries,
    }


RUNS = """
import json, sys
from verifiers.v1.cli.eval.main import main as eval_main  # the `eval` script
from verifiers.scripts.eval import main as vf_eval_main  # the `vf-eval` script

eval_runs, vf_eval_config = json.loads(sys.argv[1]), sys.argv[2]
for argv in eval_runs:
    eval_main(argv)
vf_eval_main([vf_eval_config])
"""


@pytest.fixture(scope="module")
def runs(endpoint: ScriptedEndpoint, assets_env: dict[str, str], tmp_path_factory) -> Path:
    """Every run of both tests, from one process: `eval --server` into OUT/<env id>, then vf-eval
    into OUT/vf-eval. The requests each runner sent are told apart by its token-cap field:
    `eval` sends `max_tokens`, vf-eval's v0 client `max_completion_tokens`."""
    out = tmp_path_factory.mktemp("runs")
    config = out / "vf-eval.toml"
    config.write_text(tomli_w.dumps(vf_eval_config(endpoint, out / "vf-eval")))
    argvs = [eval_argv(env_id, endpoint, out / env_id) for env_id in SETTINGS]
    proc = subprocess.run(
        [sys.executable, "-c", RUNS, json.dumps(argvs), str(config)],
        capture_output=True,
        text=True,
        env=assets_env,
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return out


def sent(endpoint: ScriptedEndpoint, expected: Expected, env_id: str, cap_field: str) -> list[dict[str, Any]]:
    """The requests for this environment's prompts that carried `cap_field`."""
    return [r for r in endpoint.requests if last_user_text(r) in expected.prompts[env_id] and cap_field in r]


def test_eval_server_runs_a_paper_setting_of_each_environment(runs, endpoint, expected):
    for env_id in SETTINGS:
        out = runs / env_id
        traces = [
            json.loads(line) for line in (out / "traces.jsonl").read_text().splitlines() if line.strip()
        ]
        assert sorted(t["task"]["data"]["idx"] for t in traces) == expected.idx(env_id)
        for trace in traces:
            idx = trace["task"]["data"]["idx"]
            assert not trace["errors"] and trace["stop_condition"] != "error", (env_id, trace["errors"])
            assert sum(trace["rewards"].values()) == expected.reward[env_id, idx], (env_id, idx)
            assert trace["task"]["data"]["benchmark"] == env_id
        config = tomllib.loads((out / "config.toml").read_text())
        declared = setting(env_id)
        assert config["server"] is True and config["num_tasks"] == N
        assert config["pool"] == {"type": "static", "num_workers": 1}
        assert {k: config["taskset"][k] for k in declared["taskset"]} == declared["taskset"]
        # The setting's sampling reached the endpoint on every request of this environment.
        requests = sent(endpoint, expected, env_id, "max_tokens")
        assert len(requests) == N
        for request in requests:
            assert {k: request.get(k) for k in declared["sampling"]} == declared["sampling"], env_id


def test_vf_eval_runs_the_settings_through_load_environment(runs, endpoint, expected):
    seen = []
    for metadata_path in sorted((runs / "vf-eval" / "evals").glob("*--scripted/*/metadata.json")):
        metadata = json.loads(metadata_path.read_text())
        env_id = metadata["env_id"]
        seen.append(env_id)
        rows = [
            json.loads(line) for line in (metadata_path.parent / "results.jsonl").read_text().splitlines()
        ]
        idx = sorted(r["info"]["task_data"]["idx"] for r in rows)
        assert idx == expected.idx(env_id), env_id
        for row in rows:
            assert row["error"] is None, (env_id, row["error"])
            assert row["reward"] == expected.reward[env_id, row["info"]["task_data"]["idx"]], env_id
    assert sorted(seen) == sorted([*SETTINGS, TWICE])
    # The setting's sampling reached the endpoint, the token cap as max_completion_tokens (the
    # name the embedded llama.cpp server had ignored).
    for env_id in SETTINGS:
        runs_of_env = 2 if env_id == TWICE else 1
        declared = dict(setting(env_id)["sampling"])
        declared["max_completion_tokens"] = declared.pop("max_tokens")
        requests = sent(endpoint, expected, env_id, "max_completion_tokens")
        assert len(requests) == N * runs_of_env, env_id
        for request in requests:
            assert {k: request.get(k) for k in declared} == declared, (env_id, request)
            assert "max_tokens" not in request
