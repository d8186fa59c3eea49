"""Fault injection: `eval` against a scripted endpoint that fails the way real endpoints do.

For every fault (HTTP 500 and 429, transient or persistent; a dropped connection; a
refused connection; a request that hangs past the rollout timeout; a truncated JSON body;
non-UTF-8 bytes; a 1 MB reply; an empty reply) we check that

- every task appears exactly once in `traces.jsonl`, scored or with its error;
- `medhal report` counts the errors apart and keeps them in every denominator;
- `eval --resume` re-runs exactly the failed rollouts, and nothing else;
- no exception escapes: `eval` exits 0 and logs no traceback, `medhal report` exits with
  its documented codes.

One mixed run covers the in-endpoint faults (each fault has its own items), so the suite
pays `eval`'s start-up only a few times; the per-fault tests read that run. Every `eval`
is bounded by a subprocess timeout, and the hung requests by the endpoint's hang time.
"""

from __future__ import annotations

import collections
import json
import re
import subprocess
import threading
from pathlib import Path

import pytest

from medhal.kit.harness import MAX_RETRIES
from medhal.serving.server_process import unused_port
from tests.conftest import BIN, run_eval
from tests.medfact_bench.fixtures import LABELS
from tests.medfact_bench.fixtures import rows as medfact_rows
from tests.running import medhal_main
from tests.scripted_endpoint import Fault, ScriptedEndpoint, last_user_text
from tests.tables import write_jsonl

pytestmark = pytest.mark.slow(
    reason="the eval executable and its --resume against failing endpoints: "
    "waits out hung requests and retries, and runs 2,000 rollouts"
)

ENV_ID = "medfact-bench"
SCORE_FOR = {"SUPPORT": 2, "NEI": 0, "CONTRADICT": -2}
ITEM = re.compile(r"\[item (\d+)\]")

# Faults after which the rollout has no reply: an errored row, re-run by --resume.
ERROR_FAULTS = ("500", "429", "truncated", "non-utf8", "drop", "hang")
# Faults that still deliver a reply (nonsense): a scored row, predicted INVALID.
REPLY_FAULTS = ("huge", "empty")
# Faults on the first attempt only: the harness's retry must recover the item.
TRANSIENT_FAULTS = ("500", "429", "truncated", "drop")
ERROR_TEXT = {
    "500": "upstream 500",
    "429": "upstream 429",
    "truncated": "malformed upstream response",
    "non-utf8": "malformed upstream response",
    "drop": "Server disconnected",
    "hang": "no reply from the endpoint within harness.request_timeout",
}
ROLLOUT_TIMEOUT_S = 300
"""So generous that no healthy or retried item can reach it on a loaded machine: the hung
requests are cut by the harness's own request timeout instead, so attempt counts do not
depend on how fast retries happen."""
REQUEST_TIMEOUT_S = 4
HANG_S = 20  # > the request timeout; eval waits for the hung exchange before it exits


def right_answer(i: int) -> str:
    return f"<think>item {i}</think><score>{SCORE_FOR[LABELS[i % 3]]}</score>"


class FaultScript:
    """Answers each item correctly unless its plan says otherwise; counts requests per item.
    `healing` makes every later request succeed (the endpoint recovered: time to resume)."""

    def __init__(self, plan: dict[int, str]) -> None:
        self.plan = plan
        self.attempts: collections.Counter[int] = collections.Counter()
        self.healing = False
        self._lock = threading.Lock()

    def __call__(self, body: dict, number: int) -> str | Fault:
        match = ITEM.search(last_user_text(body))
        assert match, "request without an item marker"
        i = int(match.group(1))
        with self._lock:
            self.attempts[i] += 1
            attempt = self.attempts[i]
        if self.healing:
            return right_answer(i)
        how, _, kind = self.plan.get(i, "ok").partition(":")
        if how == "always" or (how == "once" and attempt == 1):
            return Fault(kind)
        return right_answer(i)


def resume(out_dir: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [str(BIN / "eval"), "--resume", str(out_dir)], capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, f"eval --resume exited {proc.returncode}:\n{proc.stderr[-4000:]}"
    return proc


def read_rows(out_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (out_dir / "traces.jsonl").read_text().splitlines() if line.strip()]


def by_idx(rows: list[dict]) -> dict[int, dict]:
    idxs = [r["task"]["data"]["idx"] for r in rows]
    duplicated = [i for i, c in collections.Counter(idxs).items() if c > 1]
    assert not duplicated, f"tasks with more than one row: {duplicated}"
    return {r["task"]["data"]["idx"]: r for r in rows}


def report(run_dir: Path, out: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    proc = medhal_main("report", str(run_dir), "-o", str(out), *args)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode in (0, 1), f"medhal report exited {proc.returncode}:\n{proc.stderr}"
    return proc, json.loads((out / "report.json").read_text())


def no_traceback(out_dir: Path) -> None:
    log = (out_dir / "eval.log").read_text(errors="replace")
    assert "Traceback" not in log, log[-4000:]


# ---------------------------------------------------------------------------- the mixed run


def build_plan() -> dict[int, str]:
    plan: dict[int, str] = {}
    i = 0
    for how, kinds in (("always", ERROR_FAULTS), ("always", REPLY_FAULTS), ("once", TRANSIENT_FAULTS)):
        for kind in kinds:
            for _ in range(2):
                plan[i] = f"{how}:{kind}"
                i += 1
    for _ in range(6):  # healthy items
        plan[i] = "ok"
        i += 1
    return plan


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """One eval with every in-endpoint fault on its own items, its report, then a resume
    against the healed endpoint and the report after it."""
    tmp = tmp_path_factory.mktemp("faults")
    plan = build_plan()
    dataset = write_jsonl(tmp / "medfact.jsonl", medfact_rows(len(plan)))
    script = FaultScript(plan)
    endpoint = ScriptedEndpoint(script, hang_seconds=HANG_S).start()
    try:
        out = tmp / "run"
        first = run_eval(
            ENV_ID,
            endpoint.base_url,
            out,
            "-c",
            "8",
            "--timeout.rollout",
            str(ROLLOUT_TIMEOUT_S),
            "--harness.request-timeout",
            str(REQUEST_TIMEOUT_S),
            "--taskset.dataset-path",
            str(dataset),
            timeout=600,
            process=True,
        )
        first_attempts = collections.Counter(script.attempts)
        no_traceback(out)
        rep_proc, rep = report(out, tmp / "report", "--max-error-rate", "1")
        strict_proc = medhal_main("report", str(out), "-o", str(tmp / "report-strict"))
        script.healing = True
        script.attempts.clear()
        resumed = resume(out)
        no_traceback(out)
        resume_attempts = collections.Counter(script.attempts)
        after = read_rows(out)
        _, rep_after = report(out, tmp / "report-after")
    finally:
        endpoint.stop()
    return {
        "plan": plan,
        "first": first,
        "first_attempts": first_attempts,
        "report": rep,
        "report_proc": rep_proc,
        "strict": strict_proc,
        "resume": resumed,
        "resume_attempts": resume_attempts,
        "after": after,
        "report_after": rep_after,
    }


def items(plan: dict[int, str], *specs: str) -> set[int]:
    return {i for i, spec in plan.items() if spec in specs}


def test_every_task_exactly_once(mixed):
    rows = by_idx(mixed["first"])
    assert sorted(rows) == sorted(mixed["plan"])


@pytest.mark.parametrize("kind", ERROR_FAULTS)
def test_persistent_fault_is_an_errored_row(mixed, kind):
    rows = by_idx(mixed["first"])
    for i in items(mixed["plan"], f"always:{kind}"):
        row = rows[i]
        assert row["errors"], f"item {i} ({kind}) has no error: {row['stop_condition']}"
        assert ERROR_TEXT[kind] in row["errors"][-1]["message"], row["errors"]
        assert not any(n.get("sampled") for n in row["nodes"]), "an errored row must carry no reply"
        # Every fault is retried by the harness exactly as the stock program's SDK would, then
        # given up. A hung request is cut by the harness's request timeout; its retries go
        # to the interception server, which still holds the hung upstream exchange, so the
        # endpoint sees that one request only.
        expected = 1 if kind == "hang" else 1 + MAX_RETRIES
        assert mixed["first_attempts"][i] == expected


@pytest.mark.parametrize("kind", REPLY_FAULTS)
def test_nonsense_reply_is_scored_invalid(mixed, kind):
    rows = by_idx(mixed["first"])
    for i in items(mixed["plan"], f"always:{kind}"):
        row = rows[i]
        assert not row["errors"]
        assert row["stop_condition"] == "agent_completed"
        assert row["rewards"]["accuracy"] == 0.0
        assert row["info"]["pred_label"] is None
        reply = [n for n in row["nodes"] if n.get("sampled")][-1]["message"]["content"]
        assert len(reply) == ((1 << 20) if kind == "huge" else 0)


@pytest.mark.parametrize("kind", TRANSIENT_FAULTS)
def test_transient_fault_is_retried(mixed, kind):
    rows = by_idx(mixed["first"])
    for i in items(mixed["plan"], f"once:{kind}"):
        assert not rows[i]["errors"], rows[i]["errors"]
        assert rows[i]["rewards"]["accuracy"] == 1.0
        assert mixed["first_attempts"][i] == 2


def test_report_counts_errors_and_keeps_denominators(mixed):
    plan, rep = mixed["plan"], mixed["report"]
    n = len(plan)
    errored = len([s for s in plan.values() if s.startswith("always:") and s[7:] in ERROR_FAULTS])
    correct = len([s for s in plan.values() if s == "ok" or s.startswith("once:")])
    invalid = len([s for s in plan.values() if s[7:] in REPLY_FAULTS])
    assert rep["n"] == n and rep["n_errors"] == errored
    assert rep["error_rate"] == pytest.approx(errored / n)
    assert rep["micro_accuracy"] == pytest.approx(correct / n)  # not correct / (n - errored)
    assert rep["parse_rate"] == pytest.approx(correct / n)
    assert sum(row["ERROR"] for row in rep["confusion"].values()) == errored
    assert sum(row["INVALID"] for row in rep["confusion"].values()) == invalid
    assert sum(rep["errors"].values()) == errored
    assert sum(g["n"] for g in rep["groups"]["dataset"].values()) == n
    assert sum(g["n_errors"] for g in rep["groups"]["dataset"].values()) == errored


def test_report_error_rate_gate(mixed):
    assert mixed["report_proc"].returncode == 0
    strict = mixed["strict"]
    assert strict.returncode == 1, strict.stderr
    assert "error rate above --max-error-rate 0.0" in strict.stderr
    assert (
        f"{sum(1 for s in mixed['plan'].values() if s[7:] in ERROR_FAULTS and s.startswith('always'))} "
        f"of {len(mixed['plan'])} rollouts failed" in strict.stderr
    )


def test_resume_reruns_only_failed(mixed):
    plan = mixed["plan"]
    failed = {i for i, s in plan.items() if s.startswith("always:") and s[7:] in ERROR_FAULTS}
    assert set(mixed["resume_attempts"]) == failed
    assert all(count == 1 for count in mixed["resume_attempts"].values())
    rows = by_idx(mixed["after"])
    assert sorted(rows) == sorted(plan)
    assert not any(r["errors"] for r in rows.values())
    rep = mixed["report_after"]
    invalid = len([s for s in plan.values() if s[7:] in REPLY_FAULTS])
    assert rep["n"] == len(plan) and rep["n_errors"] == 0
    assert rep["micro_accuracy"] == pytest.approx((len(plan) - invalid) / len(plan))


# ---------------------------------------------------------------------------- connection refused


def test_connection_refused_then_resume(tmp_path):
    n = 6
    dataset = write_jsonl(tmp_path / "medfact.jsonl", medfact_rows(n))
    port = unused_port()
    out = tmp_path / "run"
    rows = by_idx(
        run_eval(
            ENV_ID,
            f"http://127.0.0.1:{port}/v1",
            out,
            "-c",
            "3",
            "--taskset.dataset-path",
            str(dataset),
            timeout=240,
            process=True,
        )
    )
    assert sorted(rows) == list(range(n))
    for row in rows.values():
        assert row["errors"] and row["stop_condition"] == "error"
        assert "connect" in row["errors"][-1]["message"].lower(), row["errors"]
    no_traceback(out)
    proc, rep = report(out, tmp_path / "report")
    assert proc.returncode == 1 and rep["n"] == n and rep["n_errors"] == n
    assert rep["micro_accuracy"] == 0.0
    # The endpoint comes up on the configured address; resume re-runs all six.
    script = FaultScript({})
    endpoint = ScriptedEndpoint(script).start(port)
    try:
        resume(out)
    finally:
        endpoint.stop()
    assert sorted(script.attempts) == list(range(n))
    rows = by_idx(read_rows(out))
    assert sorted(rows) == list(range(n)) and not any(r["errors"] for r in rows.values())
    _, rep = report(out, tmp_path / "report-after")
    assert rep["n_errors"] == 0 and rep["micro_accuracy"] == 1.0


# ---------------------------------------------------------------------------- 2,000 rollouts


def test_2000_rollouts_at_concurrency_64_with_10_percent_failures(tmp_path):
    n = 2000
    kinds = ("500", "429", "truncated", "non-utf8", "drop")
    plan = {i: f"always:{kinds[(i // 10) % len(kinds)]}" for i in range(0, n, 10)}  # 200 failing items
    dataset = write_jsonl(tmp_path / "medfact.jsonl", medfact_rows(n))
    script = FaultScript(plan)
    with ScriptedEndpoint(script) as endpoint:
        out = tmp_path / "run"
        rows = run_eval(
            ENV_ID,
            endpoint.base_url,
            out,
            "-c",
            "64",
            "--taskset.dataset-path",
            str(dataset),
            timeout=900,
            process=True,
        )
        assert len(rows) == n
        rows = by_idx(rows)
        assert sorted(rows) == list(range(n))
        errored = {i for i, r in rows.items() if r["errors"]}
        assert errored == set(plan)
        no_traceback(out)
        proc, rep = report(out, tmp_path / "report", "--max-error-rate", "0.1")
        assert proc.returncode == 0
        assert rep["n"] == n and rep["n_errors"] == len(plan)
        assert rep["micro_accuracy"] == pytest.approx((n - len(plan)) / n)
        script.healing = True
        script.attempts.clear()
        resume(out, timeout=600)
    assert set(script.attempts) == set(plan)
    rows = by_idx(read_rows(out))
    assert len(rows) == n and not any(r["errors"] for r in rows.values())
