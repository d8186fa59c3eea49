"""llama-cpp-python's OpenAI-compatible server, with both token caps honoured.

`python -m medhal.commands.llama_server` takes the flags of `python -m llama_cpp.server` and
serves its app behind `TokenCap` (the embedded model is started this way by
`medhal.serving.local_model`). The one difference is the reply length:
llama-cpp-python 0.3.x reads `max_tokens` only and silently ignores `max_completion_tokens`,
the name OpenAI's API and verifiers' v0 client (`vf-eval`) use for the same cap, so a request
capped at 8 tokens generated thousands. Here a chat or text completion request is capped by

- `max_completion_tokens` when only it is given,
- `max_tokens` when only it is given,
- the smaller of the two when both are given: each is a cap, and a reply never exceeds a cap
  the request states,
- the server's default (the context size) when neither is.

`max_completion_tokens` must be null or an integer of at least 1; anything else is answered
with HTTP 400 naming the field. `max_tokens` is left to llama-cpp-python's own validation.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, TypeGuard

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

CAPPED_PATHS = frozenset({"/v1/chat/completions", "/v1/completions"})


class BadTokenCap(ValueError):
    """`max_completion_tokens` is not null or a positive integer."""


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def cap_request(body: bytes) -> bytes:
    """The request body with `max_completion_tokens` folded into `max_tokens` (the rule in
    the module docstring). A body without `max_completion_tokens`, or that is not a JSON
    object, comes back unchanged: llama-cpp-python answers malformed requests itself."""
    try:
        request = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return body
    if not isinstance(request, dict) or "max_completion_tokens" not in request:
        return body
    cap = request.pop("max_completion_tokens")
    if cap is not None:
        if not _is_int(cap) or cap < 1:
            raise BadTokenCap(f"max_completion_tokens must be null or an integer >= 1, got {cap!r}")
        current = request.get("max_tokens")
        request["max_tokens"] = min(cap, current) if _is_int(current) and current >= 1 else cap
    return json.dumps(request).encode()


class TokenCap:
    """ASGI middleware applying `cap_request` to POSTs on the completion routes. The body is
    read whole (requests are small JSON documents) and handed on as one message; later
    `receive` calls (a streaming reply watching for a disconnect) reach the client as before."""

    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] not in CAPPED_PATHS:
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client left before sending its body
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        try:
            body = cap_request(b"".join(chunks))
        except BadTokenCap as e:
            await _error(send, 400, str(e))
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        await self.app({**scope, "headers": headers}, replay, send)


async def _error(send: Send, status: int, message: str) -> None:
    """An OpenAI-style error body, as llama-cpp-python's own errors look."""
    payload = json.dumps(
        {"error": {"message": message, "type": "invalid_request_error", "param": "max_completion_tokens"}}
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
