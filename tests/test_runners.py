"""The two other ways our users run the environments, end to end for every environment,
against one scripted endpoint on 127.0.0.1 that answers each prompt with a reply of known
worth (the gold answer on even task positions, a well-formed wrong answer on odd ones):

- `eval @ configs/eval/<setting>.toml --server`: a paper setting through verifiers' env server
  (the path prime-rl trains through), which loads the environment in a process of its own
  (the in-process path is tested per environment next to its reports);
- `vf-eval` on the same settings rendered for it (configs/prime/), verifiers' v0 runner, which
  reaches the environments through their `load_environment`.

Each run covers the first three tasks of the environment's bundled demo rows (our own, not
benchmark data) under the setting's options and the pinned prompt files from the shared data.
Each test starts its runs from one Python process that calls the runner's real entry point
(what the `eval` and `vf-eval` scripts run) once per environment, to pay verifiers' import
once.
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

from medhal.registry import benchmark_module
from medhal.testing import ScriptedEndpoint, last_user_text

ROOT = Path(__file__).parents[1]
N = 3
SETTINGS = {
    "med-halt": "med_halt_reasoning_FCT",
    "medfact-bench": "medfact_bench",
    "medhallu": "medhallu_with_knowledge_notsure",
}
"""One paper setting per environment (configs/eval/<stem>.toml)."""
WRONG_REWARD = {"med-halt": -0.25, "medfact-bench": 0.0, "medhallu": 0.0}
"""What a wrong answer earns: Med-HALT's paper scores -0.25 for it, the others 0. Gold earns 1."""
KEY_VAR = "SCRIPTED_ENDPOINT_KEY"


def setting(env_id: str) -> dict[str, Any]:
    return tomllib.loads((ROOT / "configs" / "eval" / f"{SETTINGS[env_id]}.toml").read_text())


def demo_rows(env_id: str) -> str:
    return str(benchmark_module(env_id).DEMO_OPTIONS["dataset_path"])


class Expected:
    """The first N tasks of each environment's setting on its demo rows, the reply the endpoint
    gives each prompt, and the reward that reply earns."""

    def __init__(self) -> None:
        from verifiers.v1.loaders import taskset_class, taskset_config_type

        from medhal.task import prompt_messages

        self.replies: dict[str, str] = {}
        self.reward: dict[tuple[str, int], float] = {}
        self.prompts: dict[str, set[str]] = {}
        for env_id in SETTINGS:
            scoring = importlib.import_module(f"{env_id.replace('-', '_')}.scoring")
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
                self.replies[prompt] = (scoring.gold_reply if gold else scoring.wrong_reply)(task.data)
                self.reward[env_id, task.data.idx] = 1.0 if gold else WRONG_REWARD[env_id]
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


def run_python(code: str, args: list[str], env: dict[str, str], timeout: int = 900) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=timeout
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return proc.stderr


POOL = ["--pool.type", "static", "--pool.num-workers", "1"]
"""One env-server process per run: the server, client and messages of verifiers' pool without
its broker process, which only forwards them. Every process a run starts imports verifiers
anew, the bulk of a run's time here, and the default (elastic) pool starts two."""

EVAL_RUNS = """
import json, sys
from verifiers.v1.cli.eval.main import main  # the `eval` script

for argv in json.loads(sys.argv[1]):
    main(argv)
"""


def test_eval_server_runs_a_paper_setting_of_each_environment(endpoint, expected, assets_env, tmp_path):
    runs = {
        env_id: [
            "@",
            str(ROOT / "configs" / "eval" / f"{stem}.toml"),
            "--server",
            "--no-rich",
            "--no-push",
            "-m",
            "scripted",
            "--client.base-url",
            endpoint.base_url,
            "-n",
            str(N),
            "-o",
            str(tmp_path / env_id),
            "--taskset.dataset-path",
            demo_rows(env_id),
            *POOL,
        ]
        for env_id, stem in SETTINGS.items()
    }
    before = len(endpoint.requests)
    run_python(EVAL_RUNS, [json.dumps(list(runs.values()))], assets_env)
    sent = endpoint.requests[before:]
    for env_id in SETTINGS:
        out = tmp_path / env_id
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
        requests = [r for r in sent if last_user_text(r) in expected.prompts[env_id]]
        assert len(requests) == N
        for request in requests:
            assert {k: request.get(k) for k in declared["sampling"]} == declared["sampling"], env_id


def vf_eval_config(endpoint: ScriptedEndpoint, out: Path) -> dict[str, Any]:
    """One vf-eval config running each environment's setting from configs/prime/ (its
    `[[eval]]` entry unchanged but for the demo rows), pointed at the endpoint; MedHallu's a
    second time with its options as a `[eval.taskset]` table instead of `[eval.env_args]`."""
    entries = []
    for env_id, stem in SETTINGS.items():
        document = tomllib.loads((ROOT / "configs" / "prime" / f"{stem}.toml").read_text())
        (entry,) = document["eval"]
        entry["env_args"]["dataset_path"] = demo_rows(env_id)
        entries.append(entry)
        assert document["rollouts_per_example"] == 1
    medhallu = next(e for e in entries if e["env_id"] == "medhallu")
    entries.append(
        {**{k: v for k, v in medhallu.items() if k != "env_args"}, "taskset": dict(medhallu["env_args"])}
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


VF_EVAL = """
import sys
from verifiers.scripts.eval import main  # the `vf-eval` script

main([sys.argv[1]])
"""


def test_vf_eval_runs_the_settings_through_load_environment(endpoint, expected, assets_env, tmp_path):
    config = tmp_path / "vf-eval.toml"
    config.write_text(tomli_w.dumps(vf_eval_config(endpoint, tmp_path / "out")))
    before = len(endpoint.requests)
    run_python(VF_EVAL, [str(config)], assets_env)
    sent = endpoint.requests[before:]
    runs = sorted((tmp_path / "out" / "evals").glob("*--scripted/*/metadata.json"))
    seen = []
    for metadata_path in runs:
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
    assert sorted(seen) == ["med-halt", "medfact-bench", "medhallu", "medhallu"]
    # The setting's sampling reached the endpoint; vf-eval sends the token cap as
    # max_completion_tokens (the name the embedded llama.cpp server had ignored).
    for env_id, runs_of_env in (("med-halt", 1), ("medfact-bench", 1), ("medhallu", 2)):
        declared = dict(setting(env_id)["sampling"])
        declared["max_completion_tokens"] = declared.pop("max_tokens")
        requests = [r for r in sent if last_user_text(r) in expected.prompts[env_id]]
        assert len(requests) == N * runs_of_env, env_id
        for request in requests:
            assert {k: request.get(k) for k in declared} == declared, (env_id, request)
