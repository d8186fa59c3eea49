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

`max_tokens` is read as the server reads it (its request model's field, pydantic's lax
mode: `"5"` and `5.0` are 5); one the server refuses is left as it is, for the server to
answer. `max_completion_tokens` must be null or an integer of at least 1; anything else is
answered with HTTP 400 naming the field. Every route of the app that generates text is
capped: the POST routes whose request model has `max_tokens` (the chat and text completion
routes and llama-cpp-python's alias `/v1/engines/copilot-codex/completions`), found from the
app's own routes, so an alias a later version adds is capped too.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from typing import Annotated, Any, TypeGuard

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

Reading = Callable[[Any], Any]
"""A request's `max_tokens` -> the value the server reads from it (an int or None), or
`UNREADABLE` when the server refuses it."""
UNREADABLE = object()


class BadTokenCap(ValueError):
    """`max_completion_tokens` is not null or a positive integer."""


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def server_reading(annotation: Any = int | None, metadata: tuple[Any, ...] = ()) -> Reading:
    """How the server reads `max_tokens`: pydantic's lax validation of the field's type and
    constraints (llama-cpp-python's request models say `Optional[int]`, the text route `ge=0`)."""
    from pydantic import TypeAdapter, ValidationError

    adapter: TypeAdapter[Any] = TypeAdapter(Annotated[(annotation, *metadata)] if metadata else annotation)

    def read(value: Any) -> Any:
        try:
            return adapter.validate_python(value)
        except ValidationError:
            return UNREADABLE

    return read


LAX_INT = server_reading()


def cap_request(body: bytes, read_max_tokens: Reading = LAX_INT) -> bytes:
    """The request body with `max_completion_tokens` folded into `max_tokens` (the rule in
    the module docstring), `max_tokens` read with `read_max_tokens` (the route's own field).
    A body without `max_completion_tokens`, or that is not a JSON object, comes back
    unchanged: llama-cpp-python answers malformed requests itself."""
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
        current = read_max_tokens(request.get("max_tokens"))
        if current is not UNREADABLE:  # else the server answers the bad max_tokens itself
            request["max_tokens"] = min(cap, current) if _is_int(current) and current >= 1 else cap
    return json.dumps(request).encode()


def completion_routes(app: Any) -> list[tuple[str, Reading]]:
    """The app's routes that generate text, as the path each serves and how it reads
    `max_tokens`: the POST routes whose request body model declares `max_tokens` (FastAPI's
    `APIRoute.body_field`), wherever a router included them."""
    found = []
    for route, path in _routes(getattr(app, "routes", ())):
        body = getattr(getattr(route, "body_field", None), "field_info", None)
        fields = getattr(getattr(body, "annotation", None), "model_fields", None)
        if (
            "POST" in (getattr(route, "methods", None) or ())
            and isinstance(fields, dict)
            and "max_tokens" in fields
        ):
            field = fields["max_tokens"]
            found.append((path, server_reading(field.annotation, tuple(field.metadata))))
    return found


def _routes(routes: Any) -> Iterator[tuple[Any, str]]:
    """Every route and the whole path it serves: an included router's routes with their
    prefix (FastAPI 0.165 keeps a router included by `include_router` as one entry, whose
    `effective_route_contexts` are its routes; older versions list them one by one)."""
    for route in routes:
        contexts = getattr(route, "effective_route_contexts", None)
        if callable(contexts):
            for context in contexts():
                yield context.original_route, context.path
        elif isinstance(getattr(route, "path", None), str):
            yield route, route.path


class TokenCap:
    """ASGI middleware applying `cap_request` to POSTs on the app's completion routes
    (`completion_routes`, matched on the path as the app matches it). The body is read whole
    (requests are small JSON documents) and handed on as one message; later `receive` calls
    (a streaming reply watching for a disconnect) reach the client as before."""

    def __init__(self, app: App) -> None:
        from starlette.routing import compile_path

        self.app = app
        routes = completion_routes(app)
        self.paths = {path for path, _ in routes}
        self.routes = [(compile_path(path)[0], reading) for path, reading in routes]

    def _reading(self, scope: Scope) -> Reading | None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return None
        path, root = scope["path"], scope.get("root_path", "")
        path = path[len(root) :] if root and path.startswith(root) else path
        for pattern, reading in self.routes:
            if pattern.match(path):
                return reading
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        reading = self._reading(scope)
        if reading is None:
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
            body = cap_request(b"".join(chunks), reading)
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
