"""A reasoning model's reply: the reasoning beside the answer, and a reply the token limit cut.

vLLM with `--reasoning-parser` (and DeepSeek, Qwen, SGLang, OpenRouter) returns the model's
reasoning in the message's `reasoning_content` (newer vLLM: `reasoning`) and the answer in
`content`. verifiers records both on the rollout's assistant node (0.2.1 and 0.4.0:
`AssistantMessage.reasoning_content`, read from either field) and the finish reason on its
model call. Every benchmark reads `content` only (`Trace.last_reply`): the reasoning is
shown, never read as the answer, however right an answer inside it.

When generation stops at the token limit (`finish_reason` `length`) before the model left
its reasoning, `content` is empty (or, without a reasoning parser, an unclosed `<think>`
block): the reply has no answer, and is labelled as cut off before it rather than left to
look like a model that answered nothing. Kept apart from the readers: a fact of generation,
the same for every benchmark and reading convention.
"""

from __future__ import annotations

from typing import Any

from medhal.kit.replies import after_reasoning

TRUNCATED = "truncated"
"""`trace.info` key, present only on a rollout whose final reply the token limit cut: where
it was cut (`BEFORE_ANSWER` or `IN_ANSWER`)."""
BEFORE_ANSWER = "before the answer"
"""Cut before any answer text: inside the reasoning (or before anything at all)."""
IN_ANSWER = "in the answer"
"""Cut after the answer text began: what was read is whatever came before the cut."""
LENGTH = "length"
"""The finish reason of a generation stopped by its token limit (OpenAI's, vLLM's and
verifiers' name)."""


def truncation(content: str | None, finish_reason: str | None) -> str | None:
    """Where the token limit cut a reply (`BEFORE_ANSWER`, `IN_ANSWER`), or None when it did
    not (`finish_reason` is not `length`). No answer text is an empty `content`, or one that
    is all reasoning (a `<think>` block never closed, or nothing after it)."""
    if finish_reason != LENGTH:
        return None
    answer = after_reasoning(content or "")
    return IN_ANSWER if answer and answer.strip() else BEFORE_ANSWER


def final_reply_facts(trace: Any) -> tuple[str | None, str | None, str | None]:
    """(content, reasoning, finish reason) of a verifiers trace's last sampled assistant
    message, the finish reason from the model call that produced it; all None when the
    rollout has no sampled reply. Reads the trace as both verifiers lines record it."""
    nodes = trace.nodes
    last = next((i for i in range(len(nodes) - 1, -1, -1) if nodes[i].sampled), None)
    if last is None:
        return None, None, None
    message = nodes[last].message
    call = next((c for c in reversed(trace.calls) if c.node == last), None)
    return (
        getattr(message, "content", None),
        getattr(message, "reasoning_content", None),
        None if call is None else call.finish_reason,
    )


def truncation_info(trace: Any) -> dict[str, str]:
    """`{TRUNCATED: where}` for a trace whose final reply the token limit cut, else `{}`: what
    a task adds to `trace.info` beside its readings."""
    content, _, finish = final_reply_facts(trace)
    where = truncation(content, finish)
    return {} if where is None else {TRUNCATED: where}
