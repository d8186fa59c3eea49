"""A reasoning model's replies, as vLLM's `--reasoning-parser` returns them, through every
environment: the reasoning (`reasoning_content`, or `reasoning` as newer vLLM names it) is
recorded on the trace and shown in the report's item view, and never read as the answer; a
reply the token limit cut inside its reasoning (`finish_reason` `length`, empty `content`) is
labelled as cut, in the trace (`info.truncated`) and in the report (a count, and a label on the
item).

Each environment's demo rows run through the installed line's eval against a scripted
endpoint that answers by turns: (0) the gold reply inside the reasoning, nothing after it, cut
by the token limit; (1) a wrong reply in the reasoning, the gold reply as the answer; (2) the
gold reply in the reasoning (under `reasoning`), a wrong reply as the answer. Whatever the
reasoning holds, every trace's metrics and rewards are those of its `content` alone, scored
with no reasoning at all.
"""

from __future__ import annotations

import asyncio
import importlib
import json
from pathlib import Path
from typing import Any

import pytest

from medhal.kit.lines import reward_values, select_tasks, taskset_class, taskset_config_type
from medhal.kit.outcomes import CORRECT
from medhal.kit.reasoning import BEFORE_ANSWER, IN_ANSWER, TRUNCATED, truncation
from medhal.kit.task import prompt_messages, score_reply
from medhal.reports.traces import iter_traces
from tests.running import medhal_main
from tests.scripted_endpoint import Reasoned, ScriptedEndpoint
from tests.test_cross_line import ENVIRONMENTS, demo_options, last_user_text, line_eval


def reasoned(kind: int, gold: str, wrong: str) -> Reasoned:
    if kind == 0:
        return Reasoned(f"The reply to give: {gold}", None, "length")
    if kind == 1:
        return Reasoned(f"Perhaps {wrong}? No.", gold)
    return Reasoned(f"The answer is {gold}", wrong, field="reasoning")


def run(env_id: str, work: Path) -> tuple[dict[int, Any], dict[int, Reasoned], dict[int, Any], Path]:
    """(tasks, each task's scripted reply, each task's trace record, the trace file)."""
    module = ENVIRONMENTS[env_id]
    scoring = importlib.import_module(f"{module}.scoring")
    options = demo_options(module)
    config = taskset_config_type(env_id).model_validate({"id": env_id, **options})
    tasks = {t.data.idx: t for t in select_tasks(taskset_class(env_id)(config))}
    scripted = {
        idx: reasoned(idx % 3, scoring.gold_reply(t.data), scoring.wrong_reply(t.data))
        for idx, t in tasks.items()
    }
    by_prompt = {str(prompt_messages(t.data)[-1].content): scripted[idx] for idx, t in tasks.items()}
    with ScriptedEndpoint(lambda body, n: by_prompt[last_user_text(body)]) as endpoint:
        traces = line_eval(env_id, endpoint.base_url, work / env_id, options)
    records = {r.data["idx"]: r for r in iter_traces(traces)}
    assert sorted(records) == sorted(tasks) and not any(r.errored for r in records.values())
    return tasks, scripted, records, traces


@pytest.fixture(scope="module", params=list(ENVIRONMENTS))
def reasoning_run(request, tmp_path_factory):
    return request.param, *run(request.param, tmp_path_factory.mktemp("reasoning"))


def test_the_reasoning_is_recorded_and_never_read_as_the_answer(reasoning_run):
    env_id, tasks, scripted, records, _ = reasoning_run
    for idx, record in records.items():
        reply = scripted[idx]
        assert record.reasoning == reply.reasoning, (env_id, idx)
        assert record.reply == (reply.content or "")
        # what the content alone earns, scored with no reasoning anywhere
        alone = asyncio.run(score_reply(tasks[idx], reply.content or ""))
        assert record.metrics == alone.metrics, (env_id, idx)
        assert record.rewards == pytest.approx(reward_values(alone)), (env_id, idx)
        assert record.metrics[CORRECT] == (1.0 if idx % 3 == 1 else 0.0), (env_id, idx, reply)


def test_a_reply_cut_inside_its_reasoning_is_labelled_in_the_trace(reasoning_run):
    env_id, _, scripted, records, traces = reasoning_run
    lines = [json.loads(line) for line in traces.read_text().splitlines()]
    # A 0.2 trace, or an episode: 0.4 records its task on the episode, 0.3 on its trace.
    rows = {(row.get("task") or row["traces"][0]["task"])["data"]["idx"]: row for row in lines}
    for idx, record in records.items():
        cut = scripted[idx].finish_reason == "length"
        assert record.finish_reason == ("length" if cut else "stop")
        assert record.truncated == (BEFORE_ANSWER if cut else None), (env_id, idx)
        info = rows[idx].get("info") or rows[idx]["traces"][0]["info"]  # 0.2 trace, 0.4 episode
        assert info.get(TRUNCATED) == (BEFORE_ANSWER if cut else None), (env_id, idx)


def test_the_report_counts_the_cut_replies_and_shows_the_reasoning(reasoning_run):
    _, _, scripted, _, traces = reasoning_run
    proc = medhal_main("report", str(traces.parent), "--no-plots")
    assert proc.returncode == 0, proc.stderr
    report = json.loads((traces.parent / "report.json").read_text())
    cut = sorted(idx for idx, r in scripted.items() if r.finish_reason == "length")
    assert report["n_truncated"] == len(cut) > 0
    (shown,) = report["truncated"]  # the smallest idx is the example (finish order varies)
    assert (shown["where"], shown["count"], shown["idx"]) == (BEFORE_ANSWER, len(cut), cut[0])
    assert f"replies cut by the token limit: {len(cut)}" in proc.stdout
    md = (traces.parent / "report.md").read_text()
    assert f"### Replies cut by the token limit ({len(cut)})" in md
    html = (traces.parent / "report.html").read_text()
    assert 'id="truncated"' in html and 'data-items-part="c"' in html


@pytest.mark.parametrize(
    "content, finish, where",
    [
        (None, "length", BEFORE_ANSWER),
        ("", "length", BEFORE_ANSWER),
        ("  \n", "length", BEFORE_ANSWER),
        ("<think>still weighing the", "length", BEFORE_ANSWER),  # no reasoning parser: all reasoning
        ("<think>done</think>", "length", BEFORE_ANSWER),
        ("<think>done</think> {'cop': 'Liv", "length", IN_ANSWER),
        ("The answer is 1 because", "length", IN_ANSWER),
        ("", "stop", None),
        ("1", "stop", None),
        (None, None, None),
        ("", "tool_calls", None),
    ],
)
def test_where_the_token_limit_cut_a_reply(content, finish, where):
    assert truncation(content, finish) == where


def test_rescoring_keeps_the_reasoning_and_the_cut(reasoning_run, tmp_path):
    """`medhal rescore` scores the replies again: the reasoning and the finish reason stay on the
    new traces (still never read), so the rescored run's report counts the same cut replies."""
    env_id, _, scripted, records, traces = reasoning_run
    out = tmp_path / "rescored"
    proc = medhal_main("rescore", str(traces.parent), "-o", str(out), "--no-plots")
    assert proc.returncode == 0, proc.stderr
    again = {r.data["idx"]: r for r in iter_traces(out / "traces.jsonl")}
    for idx, record in records.items():
        now = again[idx]
        assert (now.reasoning, now.finish_reason, now.truncated) == (
            record.reasoning,
            record.finish_reason,
            record.truncated,
        ), (env_id, idx)
        assert now.metrics == record.metrics and now.info == record.info, (env_id, idx)
    cut = sum(r.finish_reason == "length" for r in scripted.values())
    assert json.loads((out / "report.json").read_text())["n_truncated"] == cut
