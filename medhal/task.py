"""What every medhal task carries, and scoring a reply outside a rollout.

`BenchmarkData` adds to verifiers' `TaskData` the fields our reports and the offline
scorer rely on: the benchmark id (so a trace from another benchmark is caught), the
dataset's own id for the row, and the run's provenance (dataset revision or file
sha256, prompt assets, shots and seeds), so every trace says where it came from.

`reply_trace` builds the trace a single-turn rollout would have produced for a given
reply, so `medhal score`, the v0 environment and tests score with the very same
`Task.score` code as a live rollout.
"""

from __future__ import annotations

from typing import Any

import verifiers.v1 as vf


class BenchmarkData(vf.TaskData):
    benchmark: str
    """Environment id (e.g. the value of the environment's `ENV_ID`)."""
    source_id: str
    """The dataset's own identifier for the row this item comes from."""
    provenance: dict[str, Any] = {}
    """Dataset id and revision or file sha256, asset hashes, prompt version, shots, seeds."""


def prompt_messages(data: vf.TaskData) -> list[vf.Message]:
    messages: list[vf.Message] = []
    if data.system_prompt:
        messages.append(vf.SystemMessage(content=data.system_prompt))
    if isinstance(data.prompt, str):
        messages.append(vf.UserMessage(content=data.prompt))
    elif data.prompt is not None:
        messages.extend(data.prompt)
    return messages


def reply_trace(task: vf.Task, reply: str | None) -> vf.Trace:
    """The trace of a single-turn rollout of `task` answered with `reply` (None: no reply)."""
    nodes = []
    for i, message in enumerate(prompt_messages(task.data)):
        nodes.append(vf.MessageNode(parent=i - 1 if i else None, message=message))
    if reply is not None:
        nodes.append(
            vf.MessageNode(
                parent=len(nodes) - 1 if nodes else None,
                message=vf.AssistantMessage(content=reply),
                sampled=True,
            )
        )
    return vf.Trace(task=vf.TraceTask(type=type(task).__name__, data=task.data), nodes=nodes)


async def score_reply(task: vf.Task, reply: str) -> vf.Trace:
    trace = reply_trace(task, reply)
    await task.score(trace)
    trace.stop("agent_completed")
    return trace
