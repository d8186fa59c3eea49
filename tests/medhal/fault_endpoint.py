"""A scripted endpoint with the faults medhal's scripted endpoint does not script: a
connection reset (TCP RST), a completion with no choices, and an HTTP error carrying
headers (a 429 with Retry-After). It also records every request's headers."""

from __future__ import annotations

import asyncio
import json
import socket
import struct
from dataclasses import dataclass, field

from aiohttp import web

from tests.scripted_endpoint import ScriptedEndpoint, completion


@dataclass(frozen=True)
class Raw:
    kind: str
    """"reset", "no-choices", "status" (with `status` and `headers`) or "stall" (headers and
    the first bytes of the body sent, then nothing for `hang_seconds`)."""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


class FaultEndpoint(ScriptedEndpoint):
    def __init__(self, script, hang_seconds: float = 3600.0) -> None:
        super().__init__(script, hang_seconds)
        self.headers: list[dict[str, str]] = []

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        with self._lock:
            number = self._count
            self._count += 1
            self.requests.append(body)
            self.headers.append(dict(request.headers))
        reply = self.script(body, number)
        model = body.get("model", "scripted")
        if isinstance(reply, str):
            return web.json_response(completion(reply, model))
        if reply.kind == "reset":
            # SO_LINGER 0 then abort: the peer gets a TCP RST, not an orderly close.
            sock = request.transport.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            request.transport.abort()
            raise ConnectionResetError("reset by script")
        if reply.kind == "no-choices":
            return web.json_response({**completion("unused", model), "choices": []})
        if reply.kind == "status":
            text = json.dumps({"error": {"message": f"injected {reply.status}", "type": "injected"}})
            return web.Response(
                text=text, status=reply.status, headers=reply.headers, content_type="application/json"
            )
        if reply.kind == "stall":
            response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
            await response.prepare(request)
            await response.write(b'{"id": "chatcmpl-stalled", ')
            await asyncio.sleep(self.hang_seconds)
            return response
        raise ValueError(f"unknown raw fault {reply.kind!r}")
