"""An in-process single-turn harness.

The stock `null` harness starts a uv-managed Python program for every rollout just
to send one chat-completions request; that costs about two CPU-seconds a rollout and
needs `uv` plus network. Our benchmarks are all single-turn, so this harness sends
that one request from the eval process itself. It still goes through the rollout's
interception endpoint, so the framework records nodes, calls, usage, sampling and
provider errors on the trace exactly as it does for `null`: a failed call ends up as
the same `ProviderError` in `trace.errors`, because the interception server stashes
the real error on the session and the rollout re-raises it in preference to the
harness's own exit status.

Retries follow the OpenAI SDK's policy (2 retries of 408/409/429/5xx answers and of
connection failures, exponential backoff), done here rather than by the SDK so that a
`Retry-After` from the endpoint is honoured up to `max_retry_wait`. verifiers 0.2.1's
interception server answers us with the upstream status but without the upstream's
headers (verifiers/v1/clients/eval.py:162-172 keeps only status and body), so the harness
also reads `Retry-After` off the upstream answers themselves, through a passive response
hook on the eval client's HTTP client, matched to this rollout by its session header.

Every request is bounded by `request_timeout`: a stalled endpoint ends as an error
trace (re-run by `eval --resume`) instead of holding the run open.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import math
import random
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import httpx
import openai
import verifiers.v1 as vf
from pydantic import Field
from verifiers.v1.errors import HarnessError
from verifiers.v1.runtimes import ProgramResult, Runtime

from medhal.kit.lines import TIMEOUT_STOPS

# A child of verifiers' library logger: `eval` routes only that tree to the console and
# eval.log (verifiers/v1/utils/logging.py:40-56). The harness only runs inside `eval`.
logger = logging.getLogger(f"verifiers.v1.{__name__}")

# The null harness's program uses the OpenAI SDK defaults; keep the same retry policy so
# transient 5xx/429 answers are retried identically.
MAX_RETRIES = 2
INITIAL_RETRY_DELAY = 0.5
MAX_RETRY_DELAY = 8.0
CONNECT_TIMEOUT = 5.0
TIMEOUT = httpx.Timeout(600.0, connect=CONNECT_TIMEOUT)
SESSION_HEADER = "X-Session-ID"
"""The header verifiers' eval client puts the rollout's trace id in on every upstream
request (verifiers/v1/clients/client.py:14, clients/eval.py:134-135)."""


class SingleTurnHarnessConfig(vf.HarnessConfig):
    request_timeout: float = Field(600.0, gt=0, le=3600)
    """Seconds one request may take before it is abandoned (and retried); the reply is
    not streamed, so this bounds the whole generation. `--timeout.rollout` bounds the
    rollout as a whole."""
    max_retry_wait: float = Field(60.0, ge=0, le=3600)
    """Longest `Retry-After` honoured on a 429/503 answer, in seconds. An endpoint asking
    for longer is not retried: the item ends as an error that `eval --resume` re-runs."""


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """`retry-after-ms` or `retry-after` (seconds, or an HTTP date) -> seconds to wait;
    None when absent or unreadable. A date in the past gives 0."""
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            continue
        if math.isnan(seconds):
            return None
        return max(0.0, seconds)
    value = headers.get("retry-after")
    if value:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is not None and when.tzinfo is not None:
            return max(0.0, when.timestamp() - (time.time() if now is None else now))
    return None


def should_retry(status: int, headers: Mapping[str, str]) -> bool:
    """The OpenAI SDK's rule (openai/_base_client.py `_should_retry`): the non-standard
    `x-should-retry` header decides when present, else 408, 409, 429 and 5xx are retried."""
    verdict = headers.get("x-should-retry")
    if verdict in ("true", "false"):
        return verdict == "true"
    return status in (408, 409, 429) or status >= 500


def backoff(attempt: int) -> float:
    """The SDK's wait before retry number `attempt + 1`: 0.5 s doubling, at most 8 s, less
    up to 25 % jitter."""
    return min(INITIAL_RETRY_DELAY * 2.0**attempt, MAX_RETRY_DELAY) * (1 - 0.25 * random.random())


class UpstreamRetryAfter:
    """Remembers the `Retry-After` of the endpoint's latest 429/503 answer per rollout
    (keyed by the session header), for the harness to read when the interception server
    relays the status without the header. Bounded: oldest entries are dropped."""

    def __init__(self, limit: int = 4096) -> None:
        self.limit = limit
        self.values: OrderedDict[str, float] = OrderedDict()

    async def __call__(self, response: httpx.Response) -> None:
        if response.status_code not in (429, 503):
            return
        session = response.request.headers.get(SESSION_HEADER)
        seconds = retry_after_seconds(response.headers)
        if session and seconds is not None:
            self.values[session] = seconds
            self.values.move_to_end(session)
            while len(self.values) > self.limit:
                self.values.popitem(last=False)

    def pop(self, session: str) -> float | None:
        return self.values.pop(session, None)

    def install(self, client: object) -> bool:
        """Add this hook to verifiers' eval client's `httpx.AsyncClient` (its `http`
        attribute), once; False when the client has none (another client type)."""
        http = getattr(client, "http", None)
        if not isinstance(http, httpx.AsyncClient):
            return False
        hooks = http.event_hooks
        if any(hook is self for hook in hooks.get("response", [])):
            return True
        http.event_hooks = {**hooks, "response": [*hooks.get("response", []), self]}
        return True


class GiveUp(Exception):
    """The endpoint asked to wait longer than `max_retry_wait`: not retried."""


async def send_with_retries(
    send: Callable[[], Awaitable[object]],
    max_retry_wait: float,
    *,
    upstream_wait: Callable[[], float | None] = lambda: None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    retries: int = MAX_RETRIES,
) -> object:
    """Call `send` until it succeeds or `retries` retries are spent, waiting between tries
    as the endpoint asks (`Retry-After` on our answer, else `upstream_wait()`, the one the
    interception server dropped) or with the SDK's backoff. A wait over `max_retry_wait`
    raises GiveUp (chained to the last error) instead of retrying."""
    for attempt in range(retries + 1):
        try:
            return await send()
        except openai.APIStatusError as e:
            headers = e.response.headers
            if attempt == retries or not should_retry(e.status_code, headers):
                raise
            asked = retry_after_seconds(headers)
            if asked is None and e.status_code in (429, 503):
                asked = upstream_wait()
            if asked is not None and asked > max_retry_wait:
                raise GiveUp(
                    f"the endpoint answered {e.status_code} and asked to wait {asked:g} s (Retry-After), "
                    f"more than harness.max_retry_wait = {max_retry_wait:g} s; not retried"
                ) from e
            wait = asked if asked is not None else backoff(attempt)
            if asked is not None:
                logger.info(
                    "endpoint answered %s: waiting %.3g s as its Retry-After asks", e.status_code, asked
                )
        except openai.APIConnectionError:  # includes APITimeoutError
            if attempt == retries:
                raise
            wait = backoff(attempt)
        await sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover


def failure_detail(error: BaseException, trace: vf.Trace, config: SingleTurnHarnessConfig) -> str:
    """One sentence for a request that finally failed. When verifiers recorded the real
    provider error on the session, the rollout records that one instead of ours; this
    text is what is recorded otherwise (a fault verifiers passed to us only as a 502)."""
    if isinstance(error, GiveUp):
        return str(error)
    if isinstance(error, openai.APITimeoutError):
        return (
            f"no reply from the endpoint within harness.request_timeout = {config.request_timeout:g} s "
            f"({MAX_RETRIES + 1} attempts); the endpoint stalled or is too slow"
        )
    failed = [c.error for c in trace.calls if c.error is not None]
    if failed and failed[-1].type == "IndexError":
        # verifiers' chat dialect reads `completion.choices[0]` (verifiers/v1/dialects/chat.py:173);
        # an IndexError there escapes its client (clients/eval.py:103-110 catches only
        # ValueError/ValidationError) and reaches us as a bare 502 "list index out of range".
        return "the endpoint returned a completion with no choices ('choices' is empty); nothing to score"
    if failed and failed[-1].type != "ProviderError":
        return (
            f"the endpoint's answer could not be read by verifiers ({failed[-1].type}: {failed[-1].message})"
        )
    return f"{type(error).__name__}: {error}"


class SingleTurnHarness(vf.Harness[SingleTurnHarnessConfig]):
    """Send the task's (system, user) prompt once; the reply is recorded by interception."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_MESSAGE_PROMPT = True
    # verifiers 0.4: no program runs and the model gets no execution, so the host
    # (`--env.agent.runtime.type subprocess`) is a fit runtime; 0.2 does not read these.
    NEEDS_CONTAINER = False
    EXECUTES_CODE = False

    def __init__(self, config: SingleTurnHarnessConfig) -> None:
        super().__init__(config)
        self._http: dict[int, httpx.AsyncClient] = {}
        self._upstream = UpstreamRetryAfter()
        declare_in_process(config.id)

    def _http_client(self) -> httpx.AsyncClient:
        """One pooled HTTP client per event loop (a client cannot cross loops)."""
        loop = id(asyncio.get_running_loop())
        client = self._http.get(loop)
        if client is None or client.is_closed:
            limits = httpx.Limits(max_connections=None, max_keepalive_connections=256)
            client = httpx.AsyncClient(timeout=TIMEOUT, limits=limits)
            self._http[loop] = client
        return client

    async def setup(self, runtime: Runtime) -> None:
        """Nothing to provision: no program, no uv, no network."""

    async def launch(
        self,
        ctx: vf.ModelContext,
        trace: vf.Trace,
        runtime: Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData | None = None,
    ) -> ProgramResult:
        """`data`: the task as this segment sees it, which verifiers 0.4 passes (0.2 does not:
        the task on the trace)."""
        if mcp_urls:
            raise ValueError("the single-turn harness cannot serve tools (MCP servers given)")
        system, prompt = self.resolve_prompt(data if data is not None else trace.task.data)
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        elif prompt is not None:
            messages.extend(m.model_dump(exclude_none=True) for m in prompt)
        client = openai.AsyncOpenAI(
            base_url=endpoint,
            api_key=secret,
            max_retries=0,  # retried by send_with_retries
            # The SDK's stubs name its vendored httpx; the objects are the same httpx types.
            timeout=httpx.Timeout(self.config.request_timeout, connect=CONNECT_TIMEOUT),  # type: ignore[arg-type]
            http_client=self._http_client(),  # type: ignore[arg-type]
        )
        self._upstream.install(ctx.client)
        try:
            await send_with_retries(
                lambda: client.chat.completions.create(model=ctx.model, messages=messages),  # type: ignore[arg-type]
                self.config.max_retry_wait,
                upstream_wait=lambda: self._upstream.pop(trace.id),
            )
        except (openai.OpenAIError, GiveUp) as e:
            # Same shape as a crashed null program: a non-zero exit with the cause. When the
            # interception recorded a provider error, the rollout raises that one instead.
            if isinstance(e, GiveUp):
                logger.warning("rollout %s: %s", trace.id, e)
            return ProgramResult(exit_code=1, stdout="", stderr=failure_detail(e, trace, self.config))
        finally:
            self._upstream.pop(trace.id)
        return ProgramResult(exit_code=0, stdout="", stderr="")

    async def score(self, trace: vf.Trace, runtime: Runtime) -> None:
        """A rollout stopped by the rollout timeout before the model replied has no answer
        to score: record it as an error, so reports count it as one and `eval --resume`
        re-runs it (the framework would otherwise score the empty trajectory as wrong)."""
        await super().score(trace, runtime)
        if trace.stop_condition in TIMEOUT_STOPS and not trace.assistant_messages:
            raise HarnessError(
                f"harness {self.config.id!r}: no reply before the rollout timeout (--timeout.rollout); "
                "the model request was still pending"
            )


IN_PROCESS = (
    "Harness %r is medhal's in-process single-turn harness: the eval process sends each rollout's one "
    "chat request itself; no program and no model-directed code runs on this system."
)
"""What this harness is, said where verifiers 0.2 would caution against running it on the host."""


class SubprocessCaution(logging.Filter):
    """verifiers 0.2.1 warns, for every harness but its own `null`, that it "is running in the
    subprocess runtime on the local system ... use subprocess only for debugging"
    (verifiers/v1/env.py, `Environment.__init__`): a caution about harnesses that hand the
    model a shell. Its test reads only the harness id, nothing a harness can declare (0.4
    reads `EXECUTES_CODE`, which this harness sets False, and stays silent). So for the ids of
    this harness alone, that one record is replaced by `IN_PROCESS`, at INFO; every other
    record of the logger, the same caution about any other harness included, passes as it
    was."""

    CAUTION = "Harness %r is running in the subprocess runtime"

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        if (
            isinstance(record.msg, str)
            and record.msg.startswith(self.CAUTION)
            and args
            and args[0] in self.ids
        ):
            record.msg, record.args = IN_PROCESS, (args[0],)
            record.levelno, record.levelname = logging.INFO, logging.getLevelName(logging.INFO)
        return True


_SUBPROCESS_CAUTION = SubprocessCaution()


def declare_in_process(harness_id: str) -> None:
    """Say what this harness is where verifiers cautions about the subprocess runtime (the
    logger of verifiers' `verifiers.v1.env`, which logs it right after loading the harness)."""
    env_logger = logging.getLogger("verifiers.v1.env")
    if _SUBPROCESS_CAUTION not in env_logger.filters:
        env_logger.addFilter(_SUBPROCESS_CAUTION)
    _SUBPROCESS_CAUTION.ids.add(harness_id)
