"""An experiment, not a harness to use: medhal's single-turn harness with its one request
sent by a plain aiohttp POST instead of the OpenAI SDK over httpx.

It exists only so `bench/throughput.py --aiohttp-harness` can measure how much of the
in-process harness's cost is its own HTTP client (the framework's interception server
and its upstream client stay the same). It has no retries and none of the SDK's error
mapping, so it must not run real evaluations. `eval` finds it as `--harness.id
aiohttp_harness` with `bench/` on PYTHONPATH.
"""

from __future__ import annotations

import asyncio

import aiohttp
from verifiers.v1.runtimes import ProgramResult

from medhal.kit.harness import SingleTurnHarness


class AiohttpSingleTurnHarness(SingleTurnHarness):
    def __init__(self, config) -> None:
        super().__init__(config)
        self._sessions: dict[int, aiohttp.ClientSession] = {}

    def _session(self) -> aiohttp.ClientSession:
        loop = id(asyncio.get_running_loop())
        session = self._sessions.get(loop)
        if session is None or session.closed:
            session = self._sessions[loop] = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
        return session

    async def launch(self, ctx, trace, runtime, endpoint, secret, mcp_urls) -> ProgramResult:
        system, prompt = self.resolve_prompt(trace.task.data)
        messages = [{"role": "system", "content": system}] if system else []
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        elif prompt is not None:
            messages.extend(m.model_dump(exclude_none=True) for m in prompt)
        body = {"model": ctx.model, "messages": messages}
        async with self._session().post(
            f"{endpoint}/chat/completions", json=body, headers={"authorization": f"Bearer {secret}"}
        ) as response:
            await response.read()
            if response.status != 200:
                return ProgramResult(exit_code=1, stdout="", stderr=f"HTTP {response.status}")
        return ProgramResult(exit_code=0, stdout="", stderr="")


__all__ = ["AiohttpSingleTurnHarness"]
