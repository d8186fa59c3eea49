"""The same replies give the same scores on every verifiers line.

Each environment's demo rows run through the installed line's own eval command (`eval` on
verifiers 0.2 and 0.3, `vf-eval` on 0.4) against a scripted endpoint whose reply depends only on
the prompt (a gold reply, a wrong one or an odd shape, by item), and `medhal report` reports the
run. What comes out (each item's reply, readings, rewards and metrics as the trace reader reads
them, and report.json less file paths and the verifiers version) must equal
tests/cross_line.json byte for byte; and every demo task passes its own check (`Task.validate`).
`make test-slow` checks it on 0.2, `make test-verifiers-0.3`, `make test-verifiers-0.4` and
`make test-prime-rl` on the other lines, so every line matches one committed record. Re-record
(on 0.2) with `uv run python -m tests.test_cross_line --update`.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import importlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from medhal.kit import contract
from tests.scripted_endpoint import ScriptedEndpoint

pytestmark = pytest.mark.slow(
    reason="each verifiers line's own executables on every environment's demo rows, a new process each"
)

ROOT = Path(__file__).resolve().parents[1]
RECORD = Path(__file__).with_name("cross_line.json")
BIN = Path(sys.executable).parent
ENVIRONMENTS = {env.env_id: env.package for env in contract.environments(ROOT)}
"""The collection (`medhal.kit.contract`): what the record holds."""
ODD_REPLIES = ("", "I am not sure.", "**Answer:** maybe", "Both 0 and 1 could be right.")
"""Replies no benchmark reads as a verdict (written by us), given to every third item."""
DROPPED = frozenset({"source", "path", "dataset_path", "plots"})
"""Keys that name files, which differ between installs (a source tree, site-packages)."""


def line() -> str:
    from medhal.kit.lines import LINE

    return LINE


def demo_options(module: str) -> dict[str, Any]:
    from medhal.kit.lines import taskset_config_type

    benchmark = importlib.import_module(f"{module}.benchmark")
    options = dict(benchmark.DEMO_OPTIONS)
    if "prompts" in taskset_config_type(module).model_fields:
        options["prompts"] = "demo"
    return options


def scripted_replies(env_id: str, options: dict[str, Any]) -> dict[str, str]:
    """Reply by prompt text: the item's gold reply, its wrong reply, or an odd shape, in turn."""
    from medhal.kit.lines import select_tasks, taskset_class, taskset_config_type
    from medhal.kit.task import prompt_messages

    scoring = importlib.import_module(f"{ENVIRONMENTS[env_id]}.scoring")
    config = taskset_config_type(env_id).model_validate({"id": env_id, **options})
    replies = {}
    for task in select_tasks(taskset_class(env_id)(config)):
        prompt = str(prompt_messages(task.data)[-1].content)
        idx = task.data.idx
        kind = idx % 3
        reply = (
            scoring.gold_reply(task.data)
            if kind == 0
            else scoring.wrong_reply(task.data)
            if kind == 1
            else ODD_REPLIES[idx // 3 % len(ODD_REPLIES)]
        )
        replies[prompt] = reply if reply is not None else ""
    return replies


def last_user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def eval_command(env_id: str, base_url: str, out: Path, options: dict[str, Any]) -> list[str]:
    """The installed line's eval command for a demo run: `eval` on 0.2 and 0.3 (options under
    `--env.taskset.` from 0.3 on), `vf-eval` on 0.4. From 0.3 on the agent runs on the host
    (the default Prime sandbox needs an account and network), and 0.3's rollouts go through
    its env-server worker pool, as prime-rl's do."""
    prefix = "--taskset." if line() == "0.2" else "--env.taskset."
    args = []
    for key, value in options.items():
        args += [prefix + key, value if isinstance(value, str) else json.dumps(value)]
    common = ["--client.base-url", base_url, "--no-push", "-m", "scripted", "-o", str(out), *args]
    if line() == "0.2":
        return [str(BIN / "eval"), env_id, "--no-rich", *common]
    host = ["--env.agent.runtime.type", "subprocess"]
    if line() == "0.3":
        return [str(BIN / "eval"), env_id, "--no-rich", *common, *host]
    return [str(BIN / "vf-eval"), env_id, *common, *host]


def line_eval(env_id: str, base_url: str, out: Path, options: dict[str, Any]) -> Path:
    """Run the installed line's eval command (`eval_command`) over `options` against `base_url`;
    the trace file it wrote. On 0.2, verifiers' `main` runs in this process (no start-up to pay
    again); on 0.4, `vf-eval` in a new process."""
    command = eval_command(env_id, base_url, out, options)
    key = {"PRIME_API_KEY": "scripted"}
    if line() == "0.2":
        from tests.running import eval_main

        proc = eval_main(*command[1:], env=key)
    else:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=600, env={**os.environ, **key})
    assert proc.returncode == 0, f"eval exited {proc.returncode}:\n{proc.stderr[-4000:]}"
    (traces,) = sorted(out.glob("**/traces.jsonl"))
    return traces


def canonical(value: Any) -> Any:
    """`value` less file paths and the verifiers version (what differs by install, not score)."""
    if isinstance(value, dict):
        kept = {k: canonical(v) for k, v in value.items() if k not in DROPPED}
        if isinstance(kept.get("code"), dict):
            kept["code"] = {k: v for k, v in kept["code"].items() if k != "verifiers"}
        return kept
    if isinstance(value, list):
        return [canonical(v) for v in value]
    return value


def demo_run(env_id: str, work: Path) -> dict[str, Any]:
    """Run the demo rows through eval and report them; what both lines must agree on."""
    from medhal.reports.traces import iter_traces

    options = demo_options(ENVIRONMENTS[env_id])
    replies = scripted_replies(env_id, options)
    env = {**os.environ, "PRIME_API_KEY": "scripted"}
    shared = os.environ.get("MEDHAL_SHARED_DATA")
    if shared:
        env["MEDHAL_ASSETS_DIR"] = shared
    endpoint = ScriptedEndpoint(lambda body, _n: replies[last_user_text(body)]).start()
    try:
        out = work / env_id
        proc = subprocess.run(
            eval_command(env_id, endpoint.base_url, out, options),
            capture_output=True,
            text=True,
            timeout=600,
            env=env,
            cwd=work,
        )
    finally:
        endpoint.stop()
    assert proc.returncode == 0, f"eval exited {proc.returncode}:\n{proc.stderr[-4000:]}"
    (traces,) = sorted(out.glob("**/traces.jsonl"))
    report = subprocess.run(
        [str(BIN / "medhal"), "report", str(traces.parent), "--no-plots"],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert report.returncode == 0, report.stderr[-4000:]
    items = sorted(
        (
            {
                "idx": r.data["idx"],
                "reply": r.reply,
                "errors": r.errors,
                "info": r.info,
                "rewards": r.rewards,
                "metrics": r.metrics,
            }
            for r in iter_traces(traces)
        ),
        key=lambda item: item["idx"],
    )
    return canonical({"items": items, "report": json.loads((traces.parent / "report.json").read_text())})


def needs_assets(env_id: str) -> bool:
    """Med-HALT has no demo prompt: its official prompt files come from MEDHAL_SHARED_DATA."""
    return env_id == "med-halt" and not os.environ.get("MEDHAL_SHARED_DATA")


@pytest.mark.parametrize("env_id", list(ENVIRONMENTS))
def test_demo_run_is_the_recorded_one(env_id: str, tmp_path: Path) -> None:
    if needs_assets(env_id):
        pytest.skip("Med-HALT's prompt files come from MEDHAL_SHARED_DATA")
    recorded = json.loads(RECORD.read_text())[env_id]
    got = demo_run(env_id, tmp_path)
    text = json.dumps(got, indent=1, sort_keys=True)
    want = json.dumps(recorded, indent=1, sort_keys=True)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    assert text == want, (
        f"{env_id} on verifiers {line()} (sha256 {digest}) differs from tests/cross_line.json"
    )
    assert got["report"]["n"] == len(got["items"]) > 0
    assert any(item["rewards"] and max(item["rewards"].values()) > 0 for item in got["items"])


@pytest.mark.parametrize("env_id", list(ENVIRONMENTS))
def test_every_demo_task_validates(env_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each task's own check (`Task.validate`, what verifiers' `validate` runs): the reply a
    perfect model gives earns the full reward, a wrong one none, on this line too."""
    from medhal.kit.lines import select_tasks, taskset_class, taskset_config_type

    if needs_assets(env_id):
        pytest.skip("Med-HALT's prompt files come from MEDHAL_SHARED_DATA")
    if os.environ.get("MEDHAL_SHARED_DATA"):
        monkeypatch.setenv("MEDHAL_ASSETS_DIR", os.environ["MEDHAL_SHARED_DATA"])
    options = demo_options(ENVIRONMENTS[env_id])
    config = taskset_config_type(env_id).model_validate({"id": env_id, **options})
    tasks = select_tasks(taskset_class(env_id)(config))

    async def verdicts() -> list[bool]:
        return [await task.validate() for task in tasks]

    assert tasks and all(asyncio.run(verdicts()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true", help="re-record tests/cross_line.json")
    ns = parser.parse_args()
    if not ns.update:
        parser.error("nothing to do without --update")
    if line() != "0.2":
        parser.error("record on verifiers 0.2 (the main project), then check it on 0.4")
    with tempfile.TemporaryDirectory() as work:
        record = {env_id: demo_run(env_id, Path(work)) for env_id in ENVIRONMENTS}
    RECORD.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    print(f"wrote {RECORD.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
