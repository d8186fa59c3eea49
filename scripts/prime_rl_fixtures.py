"""Writes the prime-rl trace fixtures of `tests/medhal/prime_rl/`: every environment's demo
rows, two scripted rollouts each, as verifiers `Episode.to_record()` lines in both of prime-rl's
layouts, so `medhal report` is tested on records the trainer's own verifiers writes.

    uv venv /tmp/vf031 --python 3.12 && VIRTUAL_ENV=/tmp/vf031 uv pip install verifiers==0.3.1.dev62
    uv run python scripts/prime_rl_fixtures.py --verifiers-python /tmp/vf031/bin/python

Two stages, because our environments and the pinned verifiers do not share an install:

1. (this project's environment, verifiers 0.2.1) each environment's demo tasks, loaded as
   prime-rl loads them (`load()`, no `select`: no selection record), each scored by its own
   `Task.score` for the replies of `REPLIES` (`medhal.kit.task.score_reply`): task data, prompt,
   reply, rewards, metrics and info, what prime-rl's env server computes with these
   environments;
2. (`--verifiers-python`: verifiers 0.3.1.dev62 from PyPI, byte-identical to the commit
   `a60a606` that prime-rl 559b447 pins) the same rollouts built as `vf.Episode`s, stamped
   as prime-rl's orchestrator stamps them (env name, rollout group, a training run whose
   eval work is at step 0), and written by `Episode.to_record()`:
   - `rollouts-559b447/rollouts/step_0/eval/all/traces.jsonl` (prime-rl 559b447,
     `src/prime_rl/monitors/file.py`; the three environments interleaved example by example,
     as its `EvalSource` queues them) and `rollouts/step_1/train/all/traces.jsonl` (training
     rollouts, which a report leaves out);
   - `stream-3444/monitors/file/traces/stream.jsonl` (prime-rl PR #3444: every episode once,
     the training ones among them), `stream.index.jsonl` (one row per episode; only the
     fields medhal reads, in the shape of prime-rl's `index_row`) and `monitors/file/plan.json`
     (`{env: {step: expected episodes}}`, as prime-rl's file monitor writes it).

Ids and times are derived from the content, so a second run writes the same bytes. The
replies are ours; the demo rows and demo prompts are ours (no benchmark data).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "medhal" / "prime_rl"
ENVIRONMENTS = {"medhallu": "medhallu", "med-halt": "med_halt", "medfact-bench": "medfact_bench"}
"""The environments the committed fixtures were recorded for: recorded data, which a new
environment need not join (the prime-rl layouts are read the same way for every benchmark), so
this stays a list of what was recorded rather than the collection (`medhal.kit.contract`)."""
ROLLOUTS = 2
"""Rollouts per task (prime-rl's `group_size`)."""
ODD_REPLIES = ("", "I am not sure.", "**Answer:** maybe", "Both 0 and 1 could be right.")
"""Replies no benchmark reads as an answer (written by us)."""
STEP, TRAIN_STEP = 0, 1
OPTIONS = {"med-halt": {"subset": "reasoning_nota"}}
"""Options beside the demo ones: Med-HALT's NOTA set alone keeps the files small (its other
sets' prompts are as long)."""
NAMESPACE = uuid.UUID("6d656468-616c-2d70-7269-6d652d726c00")
MODEL = "scripted"


def replies(gold: str, wrong: str, idx: int) -> tuple[str, str]:
    """The two rollouts' replies of task `idx`: both right, right then wrong, or wrong then
    unreadable, in turn (so pass@2 and pass^2 differ)."""
    odd = ODD_REPLIES[idx // 3 % len(ODD_REPLIES)]
    return ((gold, gold), (gold, wrong), (wrong, odd))[idx % 3]


def demo_options(env_id: str) -> dict[str, Any]:
    from medhal.kit.lines import taskset_config_type

    benchmark = importlib.import_module(f"{ENVIRONMENTS[env_id]}.benchmark")
    options = {**benchmark.DEMO_OPTIONS, **OPTIONS.get(env_id, {})}
    if "prompts" in taskset_config_type(env_id).model_fields:
        options["prompts"] = "demo"
    return options


def loaded_tasks(env_id: str) -> list[Any]:
    """The demo tasks as prime-rl loads them: the taskset's tasks in order, never selected."""
    from medhal.kit.lines import taskset_class, taskset_config_type

    config = taskset_config_type(env_id).model_validate({"id": env_id, **demo_options(env_id)})
    return list(taskset_class(env_id)(config).load())


def scripted_replies(env_id: str) -> dict[int, tuple[str, str]]:
    """Task idx -> its rollouts' replies (what the tests' eval run answers too)."""
    scoring = importlib.import_module(f"{ENVIRONMENTS[env_id]}.scoring")
    return {
        t.data.idx: replies(scoring.gold_reply(t.data), scoring.wrong_reply(t.data), t.data.idx)
        for t in loaded_tasks(env_id)
    }


def payloads() -> list[dict[str, Any]]:
    """Stage 1: every rollout, scored by its environment."""
    from medhal.kit.task import prompt_messages, score_reply

    out = []
    for env_id in ENVIRONMENTS:
        by_idx = scripted_replies(env_id)
        for task in loaded_tasks(env_id):
            messages = [m.model_dump(mode="json", exclude_none=True) for m in prompt_messages(task.data)]
            for rollout, reply in enumerate(by_idx[task.data.idx]):
                trace = asyncio.run(score_reply(task, reply))
                out.append(
                    {
                        "env": env_id,
                        "task_type": type(task).__name__,
                        "data": task.data.model_dump(mode="json"),
                        "rollout": rollout,
                        "messages": messages,
                        "reply": reply,
                        "rewards": dict(trace.rewards),
                        "metrics": dict(trace.metrics),
                        "info": trace.info,
                    }
                )
    return out


# ------------------------------------------------------------ stage 2 (verifiers 0.3.1.dev62)


def stable_id(*parts: object) -> str:
    return uuid.uuid5(NAMESPACE, "/".join(map(str, parts))).hex


def episode(payload: dict[str, Any], kind: str, step: int) -> Any:
    """One rollout as prime-rl's orchestrator receives and stamps it."""
    import verifiers.v1 as vf
    from verifiers.v1.episode import EnvInfo, EvalWorkInfo, GroupInfo, PolicySpan, TrainRunInfo, TrainWorkInfo
    from verifiers.v1.graph import MessageNode
    from verifiers.v1.task import WireTaskData
    from verifiers.v1.trace import AgentInfo, Reward, Timing, TraceTask

    data = WireTaskData(**payload["data"])
    task = vf.Task(data)
    trace_task = TraceTask(type=payload["task_type"], data=data, key=task.key, hash=task.hash)
    idx, rollout = payload["data"]["idx"], payload["rollout"]
    key = (payload["env"], kind, step, idx, rollout)
    kinds = {"system": vf.SystemMessage, "user": vf.UserMessage, "assistant": vf.AssistantMessage}
    messages = [kinds[m["role"]](content=m["content"]) for m in payload["messages"]]
    messages.append(vf.AssistantMessage(content=payload["reply"]))
    clock = 1_800_000_000.0 + idx + rollout / 10
    nodes = [
        MessageNode(parent=i - 1 if i else None, message=m, sampled=i == len(messages) - 1, timestamp=clock)
        for i, m in enumerate(messages)
    ]
    agent = vf.AgentConfig(model=MODEL, sampling=vf.SamplingConfig(temperature=1.0, max_tokens=512))
    trace = vf.Trace(
        id=stable_id("trace", *key),
        task=trace_task,
        agent=AgentInfo(config=agent),
        nodes=nodes,
        rewards={name: Reward(score=value) for name, value in payload["rewards"].items()},
        metrics=payload["metrics"],
        info=payload["info"],
        is_completed=True,
        stop_condition="agent_completed",
        timing=Timing(start=clock),
    )
    work = EvalWorkInfo(step=step) if kind == "eval" else TrainWorkInfo(step=step)
    work.policy = PolicySpan(start=step, end=step)
    return vf.Episode(
        id=stable_id("episode", *key),
        env=EnvInfo(id=payload["env"], name=payload["env"]),
        task=trace_task,
        group=GroupInfo(id=stable_id("group", payload["env"], kind, step, idx)),
        run=TrainRunInfo(id="medhal-fixture-run", work=work),
        ok=True,
        traces=[trace],
    )


def eval_order(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """prime-rl's eval queue: environments round-robin, example by example, each example's
    rollouts back to back."""
    by_env: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_env.setdefault(row["env"], []).append(row)
    ordered = []
    for turn in range(max(len(v) for v in by_env.values()) // ROLLOUTS):
        for env_rows in by_env.values():
            ordered += env_rows[turn * ROLLOUTS : (turn + 1) * ROLLOUTS]
    return ordered


def dumps(record: dict[str, Any]) -> bytes:
    """A record as prime-rl writes it (orjson: compact, keys in model order, UTF-8 as is)."""
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode()


def lines(episodes: list[Any]) -> bytes:
    return b"".join(dumps(e.to_record()) + b"\n" for e in episodes)


def index_rows(records: list[dict[str, Any]]) -> bytes:
    """One row per episode with the fields medhal reads of prime-rl's `index_row`."""
    rows, offset = [], 0
    for line_no, record in enumerate(records, start=1):
        kind = record["run"]["work"]["type"]
        row = {"line": line_no, "offset": offset, "id": record["id"], "kind": kind}
        row |= {"env": record["env"]["name"], "group": record["group"]["id"], "ok": record["ok"]}
        rows.append(dumps(row) + b"\n")
        offset += len(dumps(record)) + 1
    return b"".join(rows)


def write_layouts(rows: list[dict[str, Any]], out: Path) -> list[Path]:
    """Stage 2: both layouts under `out`."""
    evals = [episode(row, "eval", STEP) for row in eval_order(rows)]
    trains = [episode(row, "train", TRAIN_STEP) for row in rows if row["env"] == "medhallu"][:4]
    written = []

    def put(path: Path, content: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        written.append(path)

    steps = out / "rollouts-559b447" / "rollouts"
    put(steps / f"step_{STEP}" / "eval" / "all" / "traces.jsonl", lines(evals))
    put(steps / f"step_{TRAIN_STEP}" / "train" / "all" / "traces.jsonl", lines(trains))
    monitor = out / "stream-3444" / "monitors" / "file"
    stream = evals[:6] + trains + evals[6:]  # arrival order: training rollouts among the evals
    put(monitor / "traces" / "stream.jsonl", lines(stream))
    put(monitor / "traces" / "stream.index.jsonl", index_rows([e.to_record() for e in stream]))
    plan = {env: {str(STEP): sum(1 for r in rows if r["env"] == env)} for env in ENVIRONMENTS}
    put(monitor / "plan.json", dumps(plan))
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verifiers-python", help="a Python with verifiers==0.3.1.dev62 (stage 2)")
    parser.add_argument("--stage", choices=["all", "episodes"], default="all", help=argparse.SUPPRESS)
    parser.add_argument("--payloads", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("-o", "--output", type=Path, default=OUT)
    ns = parser.parse_args()
    if ns.stage == "episodes":
        import verifiers

        if verifiers.__version__ != "0.3.1.dev62":
            parser.error(f"stage 2 needs verifiers 0.3.1.dev62, this Python has {verifiers.__version__}")
        for path in write_layouts(json.loads(ns.payloads.read_text()), ns.output):
            print(f"wrote {path}")
        return 0
    if not ns.verifiers_python:
        parser.error("--verifiers-python is required (see the module docstring for how to make one)")
    with tempfile.TemporaryDirectory() as work:
        payload_file = Path(work) / "payloads.json"
        payload_file.write_text(json.dumps(payloads()))
        command = [ns.verifiers_python, __file__, "--stage", "episodes", "--payloads", str(payload_file)]
        return subprocess.run([*command, "-o", str(ns.output)], check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
