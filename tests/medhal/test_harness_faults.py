"""The in-process harness against endpoints that misbehave in ways the recorded error must
explain: a connection reset, a completion with no choices, a 429 with Retry-After (short:
waited for; too long: not retried), and a stalled reply (bounded by the harness's request
timeout). Every failed item is an error trace that `eval --resume` re-runs, and nothing
else is re-run. Plus: every shipped config bounds the rollout, and an API key passed as a
header never reaches our traces or reports.

Assertions are on outcomes (errors, messages, request counts), never on durations."""

from __future__ import annotations

import collections
import json
import re
import subprocess
import threading
import tomllib
from pathlib import Path

import httpx
import openai
import pytest

from medhal.kit.harness import (
    MAX_RETRIES,
    GiveUp,
    SingleTurnHarnessConfig,
    UpstreamRetryAfter,
    retry_after_seconds,
    send_with_retries,
)
from medhal.reports.traces import iter_traces
from tests.conftest import BIN, run_eval
from tests.medfact_bench.fixtures import LABELS
from tests.medfact_bench.fixtures import rows as medfact_rows
from tests.medhal.fault_endpoint import FaultEndpoint, Raw
from tests.running import medhal_main
from tests.tables import write_jsonl

ENV_ID = "medfact-bench"
SCORE_FOR = {"SUPPORT": 2, "NEI": 0, "CONTRADICT": -2}
ITEM = re.compile(r"\[item (\d+)\]")
CONFIGS = sorted((Path(__file__).parents[2] / "configs" / "eval").glob("*.toml"))


def right_answer(i: int) -> str:
    return f"<think>item {i}</think><score>{SCORE_FOR[LABELS[i % 3]]}</score>"


# ---------------------------------------------------------------------------- retry policy, in process


def status_error(status: int, headers: dict[str, str] | None = None) -> openai.APIStatusError:
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx.Response(status, headers=headers or {}, request=request)
    return openai.APIStatusError(f"status {status}", response=response, body=None)


class Sends:
    """A `send` that raises the given errors in turn, then succeeds; counts calls."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


async def run_retries(
    send: Sends, max_wait: float = 60.0, upstream: float | None = None
) -> tuple[object, list[float]]:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    result = await send_with_retries(send, max_wait, upstream_wait=lambda: upstream, sleep=sleep)
    return result, waits


async def test_retry_after_on_our_answer_is_honoured():
    send = Sends(status_error(429, {"retry-after": "3"}))
    assert await run_retries(send) == ("ok", [3.0])
    send = Sends(status_error(503, {"retry-after-ms": "1500"}))
    assert await run_retries(send) == ("ok", [1.5])


async def test_retry_after_dropped_by_the_interception_is_read_from_upstream():
    send = Sends(status_error(429))
    assert await run_retries(send, upstream=7.0) == ("ok", [7.0])


async def test_retry_after_over_the_bound_is_not_retried():
    send = Sends(status_error(429, {"retry-after": "3600"}))
    with pytest.raises(
        GiveUp, match=r"asked to wait 3600 s \(Retry-After\), more than harness.max_retry_wait = 60 s"
    ):
        await run_retries(send)
    assert send.calls == 1
    send = Sends(status_error(429))
    with pytest.raises(GiveUp):
        await run_retries(send, max_wait=10, upstream=11.0)
    assert send.calls == 1


async def test_without_retry_after_the_sdk_backoff_applies():
    send = Sends(status_error(500), status_error(502))
    result, waits = await run_retries(send)
    assert result == "ok" and send.calls == 3
    # 0.5 s then 1 s, each less up to 25 % jitter
    assert 0.375 <= waits[0] <= 0.5 and 0.75 <= waits[1] <= 1.0


async def test_retries_are_bounded_and_4xx_is_not_retried():
    send = Sends(*[status_error(500) for _ in range(5)])
    with pytest.raises(openai.APIStatusError):
        await run_retries(send)
    assert send.calls == 1 + MAX_RETRIES
    send = Sends(status_error(400))
    with pytest.raises(openai.APIStatusError):
        await run_retries(send)
    assert send.calls == 1
    send = Sends(status_error(400, {"x-should-retry": "true"}))
    assert (await run_retries(send))[0] == "ok"


def test_retry_after_parsing():
    assert retry_after_seconds({"retry-after": "120"}) == 120.0
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412470.0) == 10.0
    assert retry_after_seconds({"retry-after": "-5"}) == 0.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


async def test_upstream_hook_keys_by_session_and_stays_bounded():
    hook = UpstreamRetryAfter(limit=2)

    def answer(status: int, session: str, retry_after: str) -> httpx.Response:
        request = httpx.Request("POST", "http://x/v1/chat/completions", headers={"X-Session-ID": session})
        return httpx.Response(status, headers={"retry-after": retry_after}, request=request)

    await hook(answer(429, "a", "5"))
    await hook(answer(500, "b", "5"))  # not a rate limit: ignored
    await hook(answer(503, "c", "6"))
    await hook(answer(429, "d", "7"))
    assert hook.pop("a") is None  # dropped: only the 2 newest are kept
    assert hook.pop("b") is None and hook.pop("c") == 6.0 and hook.pop("d") == 7.0 and hook.pop("d") is None


def test_harness_config_bounds():
    config = SingleTurnHarnessConfig(id=ENV_ID)
    assert config.request_timeout == 600.0 and config.max_retry_wait == 60.0
    for bad in ({"request_timeout": 0}, {"request_timeout": 1e9}, {"max_retry_wait": -1}):
        with pytest.raises(ValueError):
            SingleTurnHarnessConfig(id=ENV_ID, **bad)


# ---------------------------------------------------------------------------- shipped configs


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.stem)
def test_every_config_bounds_the_rollout(config):
    """A stalled endpoint must not hold a paper run open: each config sets a rollout
    timeout of at least 60 s plus its token budget at 2 tokens/s."""
    declared = tomllib.loads(config.read_text())
    rollout = declared.get("timeout", {}).get("rollout")
    assert isinstance(rollout, (int, float)), f"{config.name} sets no [timeout] rollout"
    assert rollout >= 60 + declared["sampling"]["max_tokens"] / 2


# ---------------------------------------------------------------------------- eval against the faults


PLAN = {
    0: "reset",
    1: "reset",
    2: "no-choices",
    3: "no-choices",
    4: "429-long",  # Retry-After: 3600 on every attempt
    5: "429-short-once",  # Retry-After: 1 on the first attempt only
    6: "stall",
    7: "stall",
    8: "ok",
    9: "ok",
}
FAILING = {i for i, kind in PLAN.items() if kind in ("reset", "no-choices", "429-long", "stall")}
REQUEST_TIMEOUT_S = 5  # ample for an instant reply on a loaded machine; a stalled one never comes
STALL_S = 60  # far past the 3 attempts of REQUEST_TIMEOUT_S each


class Script:
    def __init__(self) -> None:
        self.attempts: collections.Counter[int] = collections.Counter()
        self.healing = False
        self._lock = threading.Lock()

    def __call__(self, body: dict, number: int) -> str | Raw:
        i = int(ITEM.search(body["messages"][-1]["content"]).group(1))
        with self._lock:
            self.attempts[i] += 1
            attempt = self.attempts[i]
        kind = PLAN[i]
        if self.healing or kind == "ok" or (kind == "429-short-once" and attempt > 1):
            return right_answer(i)
        if kind == "429-long":
            return Raw("status", 429, {"Retry-After": "3600"})
        if kind == "429-short-once":
            return Raw("status", 429, {"Retry-After": "1"})
        return Raw(kind)


SLOW_RUN = pytest.mark.slow(
    reason="the eval executable and its --resume against an endpoint that stalls and asks for retries"
)


@pytest.fixture(scope="module")
def faults_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("harness-faults")
    dataset = write_jsonl(tmp / "medfact.jsonl", medfact_rows(len(PLAN)))
    script = Script()
    endpoint = FaultEndpoint(script, hang_seconds=STALL_S).start()
    out = tmp / "run"
    try:
        first = run_eval(
            ENV_ID,
            endpoint.base_url,
            out,
            "-c",
            "10",
            "--taskset.dataset-path",
            str(dataset),
            "--harness.request-timeout",
            str(REQUEST_TIMEOUT_S),
            timeout=280,
            process=True,
        )
        first_attempts = collections.Counter(script.attempts)
        records = {r.data["idx"]: r for r in iter_traces(out)}
        log = (out / "eval.log").read_text(errors="replace")
        script.healing = True
        script.attempts.clear()
        resumed = subprocess.run(
            [str(BIN / "eval"), "--resume", str(out)],
            capture_output=True,
            text=True,
            timeout=280,
            check=False,
        )
        after = [json.loads(x) for x in (out / "traces.jsonl").read_text().splitlines() if x.strip()]
    finally:
        endpoint.stop()
    return {
        "first": {r["task"]["data"]["idx"]: r for r in first},
        "records": records,
        "log": log,
        "first_attempts": first_attempts,
        "resumed": resumed,
        "resume_attempts": collections.Counter(script.attempts),
        "after": after,
    }


@SLOW_RUN
def test_every_item_once(faults_run):
    assert sorted(faults_run["first"]) == sorted(PLAN)
    assert {i for i, r in faults_run["first"].items() if r["errors"]} == FAILING


@SLOW_RUN
def test_connection_reset(faults_run):
    """verifiers records a reset as ProviderError with an EMPTY message (httpx.ReadError('')
    at verifiers/v1/clients/eval.py:158-159); medhal's reader says what it was."""
    for i in (0, 1):
        error = faults_run["first"][i]["errors"][-1]
        assert (error["type"], error["status_code"]) == ("ProviderError", 503)
        message = faults_run["records"][i].error_message
        assert message.startswith(
            "ProviderError: no detail recorded (503: the connection to the endpoint failed"
        )
        assert faults_run["first_attempts"][i] == 1 + MAX_RETRIES


@SLOW_RUN
def test_no_choices(faults_run):
    for i in (2, 3):
        error = faults_run["first"][i]["errors"][-1]
        assert error["type"] == "HarnessError"
        assert "the endpoint returned a completion with no choices" in error["message"], error["message"]
        assert "list index out of range" not in error["message"]


@SLOW_RUN
def test_long_retry_after_is_not_retried(faults_run):
    error = faults_run["first"][4]["errors"][-1]
    assert error["type"] == "ProviderError" and error["message"].startswith("upstream 429")
    assert faults_run["first_attempts"][4] == 1  # the SDK's policy alone would send 3
    assert (
        "asked to wait 3600 s (Retry-After), more than harness.max_retry_wait = 60 s; not retried"
        in faults_run["log"]
    )


@SLOW_RUN
def test_short_retry_after_is_waited_for(faults_run):
    assert not faults_run["first"][5]["errors"]
    assert faults_run["first"][5]["rewards"]["accuracy"] == 1.0
    assert faults_run["first_attempts"][5] == 2
    assert "endpoint answered 429: waiting 1 s as its Retry-After asks" in faults_run["log"]


@SLOW_RUN
def test_stalled_reply_ends_as_an_error(faults_run):
    for i in (6, 7):
        error = faults_run["first"][i]["errors"][-1]
        assert error["type"] == "HarnessError"
        assert (
            f"no reply from the endpoint within harness.request_timeout = {REQUEST_TIMEOUT_S} s"
            in error["message"]
        )
        assert not any(n.get("sampled") for n in faults_run["first"][i]["nodes"])


@SLOW_RUN
def test_resume_reruns_exactly_the_failed_items(faults_run):
    assert faults_run["resumed"].returncode == 0, faults_run["resumed"].stderr[-3000:]
    assert set(faults_run["resume_attempts"]) == FAILING
    after = faults_run["after"]
    assert sorted(r["task"]["data"]["idx"] for r in after) == sorted(PLAN)
    assert not any(r["errors"] for r in after)
    assert all(r["rewards"]["accuracy"] == 1.0 for r in after)


# ---------------------------------------------------------------------------- API keys


def test_api_keys_never_reach_traces_or_reports(tmp_path, monkeypatch):
    """A key in `--client.headers` is sent upstream, and verifiers writes it verbatim into
    config.toml and eval.log (documented in the README); it must not reach traces.jsonl or
    anything `medhal report` writes. A key in the environment variable named by
    `--client.api-key-var` reaches none of these files."""
    header_key, env_key = "sk-medhal-header-0123456789", "sk-medhal-env-9876543210"
    monkeypatch.setenv("MEDHAL_TEST_API_KEY", env_key)
    dataset = write_jsonl(tmp_path / "medfact.jsonl", medfact_rows(3))
    endpoint = FaultEndpoint(
        lambda body, n: right_answer(int(ITEM.search(body["messages"][-1]["content"]).group(1)))
    )
    endpoint.start()
    out = tmp_path / "run"
    try:
        run_eval(
            ENV_ID,
            endpoint.base_url,
            out,
            "--taskset.dataset-path",
            str(dataset),
            "--client.headers",
            json.dumps({"x-api-key": header_key}),
            "--client.api-key-var",
            "MEDHAL_TEST_API_KEY",
        )
    finally:
        endpoint.stop()
    # Both keys were in use: the endpoint received them on every request.
    assert all(h.get("x-api-key") == header_key for h in endpoint.headers) and len(endpoint.headers) == 3
    assert all(h.get("Authorization") == f"Bearer {env_key}" for h in endpoint.headers)
    proc = medhal_main("report", str(out), "-o", str(tmp_path / "report"), "--max-error-rate", "1")
    assert proc.returncode in (0, 1), proc.stderr
    written = {p.name: p.read_bytes() for p in (tmp_path / "report").iterdir()}
    assert "report.json" in written
    for name, data in {
        **written,
        "traces.jsonl": (out / "traces.jsonl").read_bytes(),
        "stdout": proc.stdout.encode(),
    }.items():
        assert header_key.encode() not in data and env_key.encode() not in data, name
    assert env_key not in (out / "config.toml").read_text() and env_key not in (out / "eval.log").read_text()
    # verifiers' behaviour the README warns about (verifiers/v1/cli/output.py:46, cli/eval/runner.py:22):
    assert header_key in (out / "config.toml").read_text() and header_key in (out / "eval.log").read_text()
