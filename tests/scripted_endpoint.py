"""Test utilities: a scripted OpenAI-compatible chat-completions endpoint on 127.0.0.1.

A fixture, not a model: it answers every request instantly with text chosen by a script (a
function of the request), and can inject the faults real endpoints produce (HTTP 500/429, a
hung request, a truncated body, a 1 MB reply, an empty reply, non-UTF-8 bytes, a dropped
connection). Runs in a background thread of the calling process, or as its own process
(`python tests/scripted_endpoint.py --reply TEXT`, as the benchmark scripts and the release
check run it) when the caller's CPU time must not include it. Standard library and aiohttp
only, so it runs in any environment that has verifiers installed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

FAULTS = ("500", "429", "hang", "truncated", "huge", "empty", "non-utf8", "drop")


@dataclass(frozen=True)
class Fault:
    kind: str

    def __post_init__(self) -> None:
        if self.kind not in FAULTS:
            raise ValueError(f"unknown fault {self.kind!r}; one of {FAULTS}")


@dataclass(frozen=True)
class Reasoned:
    """A reply as vLLM gives it with `--reasoning-parser`: the reasoning in the message's
    `reasoning_content` (or `field`: `reasoning`, as newer vLLM and OpenRouter name it), the
    answer in `content` (None: generation stopped inside the reasoning, as with
    `finish_reason` `length`)."""

    reasoning: str
    content: str | None = None
    finish_reason: str = "stop"
    field: str = "reasoning_content"


Script = Callable[[dict[str, Any], int], "str | Fault | Reasoned"]
"""(request body, request number from 0) -> reply text, a reasoned reply or a fault."""


def last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


def completion(text: str | None, model: str, reasoning: Reasoned | None = None) -> dict[str, Any]:
    """A chat.completion answering `text`; with `reasoning`, its reasoning, content and
    finish reason instead."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    finish = "stop"
    if reasoning is not None:
        message = {"role": "assistant", "content": reasoning.content, reasoning.field: reasoning.reasoning}
        finish = reasoning.finish_reason
    generated = len(text or "")
    if reasoning is not None:
        generated = len(reasoning.reasoning) + len(reasoning.content or "")
    return {
        "id": f"chatcmpl-{time.time_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": 10,
            "completion_tokens": max(1, generated // 4),
            "total_tokens": 10 + max(1, generated // 4),
        },
    }


class ScriptedEndpoint:
    def __init__(self, script: Script, hang_seconds: float = 3600.0) -> None:
        self.script = script
        self.hang_seconds = hang_seconds
        self.requests: list[dict[str, Any]] = []
        self._count = 0
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self.port: int | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        with self._lock:
            number = self._count
            self._count += 1
            self.requests.append(body)
        reply = self.script(body, number)
        model = body.get("model", "scripted")
        if isinstance(reply, str):
            return web.json_response(completion(reply, model))
        if isinstance(reply, Reasoned):
            return web.json_response(completion(None, model, reply))
        kind = reply.kind
        if kind in ("500", "429"):
            return web.json_response(
                {"error": {"message": f"injected {kind}", "type": "injected"}}, status=int(kind)
            )
        if kind == "hang":
            await asyncio.sleep(self.hang_seconds)
            return web.json_response(completion("too late", model))
        if kind == "huge":
            return web.json_response(completion("x" * (1 << 20), model))
        if kind == "empty":
            return web.json_response(completion("", model))
        if kind == "truncated":
            text = json.dumps(completion("cut", model))
            return web.Response(body=text[: len(text) // 2].encode(), content_type="application/json")
        if kind == "non-utf8":
            return web.Response(
                body=b'{"id": "\xff\xfe\xfa", "choices": [\xff]}', content_type="application/json"
            )
        # drop: close the connection without an answer
        if request.transport is not None:
            request.transport.close()
        raise ConnectionResetError("dropped by script")

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "scripted", "object": "model"}]})

    def routes(self, app: web.Application) -> None:
        """What the server answers: chat completions and the model list (a subclass serving
        another API replaces this)."""
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)

    async def _start(self, port: int) -> None:
        app = web.Application(client_max_size=64 << 20)
        self.routes(app)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port, backlog=1024)
        await site.start()
        server = site._server
        assert isinstance(server, asyncio.Server)
        self.port = int(server.sockets[0].getsockname()[1])

    def start(self, port: int = 0) -> ScriptedEndpoint:
        ready = threading.Event()

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(self._start(port))
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, daemon=True, name="scripted-endpoint")
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("scripted endpoint did not start within 10 s")
        return self

    def stop(self) -> None:
        if self._loop is None or self._runner is None or self._thread is None:
            return
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop = None

    def __enter__(self) -> ScriptedEndpoint:
        return self.start() if self._loop is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def constant(text: str) -> Script:
    return lambda body, number: text


def cycled(replies: list[str], fail_every: int = 0) -> Script:
    """The replies in turn, request by request; with `fail_every` k, a persistent HTTP 500 for
    the requests whose messages hash (crc32) to a multiple of k: the same prompt fails on
    every retry, as a broken item does."""
    import zlib

    def script(body: dict[str, Any], number: int) -> str | Fault:
        text = json.dumps(body.get("messages", []))
        if fail_every and zlib.crc32(text.encode()) % fail_every == 0:
            return Fault("500")
        return replies[number % len(replies)]

    return script


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve scripted replies on an OpenAI-compatible endpoint.")
    parser.add_argument("--port", type=int, default=0)
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--reply", help="the text every request is answered with")
    what.add_argument("--replies", help="a JSON file holding a list of replies, given in turn")
    parser.add_argument(
        "--fail-every", type=int, default=0, help="with --replies: HTTP 500 for 1 prompt in K"
    )
    args = parser.parse_args()
    if args.replies:
        with open(args.replies, encoding="utf-8") as f:
            script = cycled(json.load(f), args.fail_every)
    else:
        script = constant(args.reply)
    endpoint = ScriptedEndpoint(script).start(args.port)
    print(endpoint.base_url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        endpoint.stop()


if __name__ == "__main__":
    main()
