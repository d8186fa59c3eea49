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
"""

from __future__ import annotations

import asyncio

import httpx
import openai
import verifiers.v1 as vf
from verifiers.v1.errors import HarnessError
from verifiers.v1.runtimes import ProgramResult, Runtime

# The null harness's program uses the OpenAI SDK defaults; keep the same retry policy so
# transient 5xx/429 answers are retried identically.
MAX_RETRIES = 2
TIMEOUT = httpx.Timeout(600.0, connect=5.0)


class SingleTurnHarnessConfig(vf.HarnessConfig):
    pass


class SingleTurnHarness(vf.Harness[SingleTurnHarnessConfig]):
    """Send the task's (system, user) prompt once; the reply is recorded by interception."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_MESSAGE_PROMPT = True

    def __init__(self, config: SingleTurnHarnessConfig) -> None:
        super().__init__(config)
        self._http: dict[int, httpx.AsyncClient] = {}

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
    ) -> ProgramResult:
        if mcp_urls:
            raise ValueError("the single-turn harness cannot serve tools (MCP servers given)")
        system, prompt = self.resolve_prompt(trace.task.data)
        messages: list[dict] = [{"role": "system", "content": system}] if system else []
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        elif prompt is not None:
            messages.extend(m.model_dump(exclude_none=True) for m in prompt)
        client = openai.AsyncOpenAI(
            base_url=endpoint,
            api_key=secret,
            max_retries=MAX_RETRIES,
            http_client=self._http_client(),
        )
        try:
            await client.chat.completions.create(model=ctx.model, messages=messages)
        except openai.OpenAIError as e:
            # Same shape as a crashed null program: a non-zero exit with the cause. When the
            # interception recorded a provider error, the rollout raises that one instead.
            return ProgramResult(exit_code=1, stdout="", stderr=f"{type(e).__name__}: {e}")
        return ProgramResult(exit_code=0, stdout="", stderr="")

    async def score(self, trace: vf.Trace, runtime: Runtime) -> None:
        """A rollout stopped by the rollout timeout before the model replied has no answer
        to score: record it as an error, so reports count it as one and `eval --resume`
        re-runs it (the framework would otherwise score the empty trajectory as wrong)."""
        await super().score(trace, runtime)
        if trace.stop_condition == "harness_timeout" and not trace.assistant_messages:
            raise HarnessError(
                f"harness {self.config.id!r}: no reply before the rollout timeout (--timeout.rollout); "
                "the model request was still pending"
            )
