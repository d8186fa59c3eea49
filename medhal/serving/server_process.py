"""A model server run as a child process group: what the embedded CPU model
(`medhal.serving.local_model.LocalModel`) and vLLM (`medhal.serving.vllm_server.VllmServer`) share.

Both start a server in its own session (so stopping it takes every process it spawned),
expose the same addresses, work as context managers, and are stopped at interpreter exit
if a caller forgot to.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import socket
import subprocess
import weakref
from typing import Any, Self


def signal_group(pgid: int, sig: int) -> None:
    """Send `sig` to a process group that may already be gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def unused_port(host: str = "127.0.0.1") -> int:
    """A port the system hands out as unused on `host` now (bind to port 0, read it back)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def port_available(host: str, port: int) -> bool:
    """Whether a server could listen on host:port now (SO_REUSEADDR, as uvicorn binds)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


_running: weakref.WeakSet[ServerProcess] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for server in list(_running):
        server.stop()


class ServerProcess:
    """Addresses, state and the context-manager protocol of a served model. Subclasses set
    `host`, `port`, `model` and `process`, and implement `start` and `stop` (calling
    `_started` and `_stopped` so that interpreter exit stops what is still running)."""

    host: str
    port: int | None
    model: str
    process: subprocess.Popen[bytes] | None

    @property
    def root_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def base_url(self) -> str:
        """OpenAI-compatible base URL (ends in /v1), for `--client.base-url` / `OpenAI(base_url=)`."""
        return f"{self.root_url}/v1"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self, *args: Any, **kwargs: Any) -> int | None:
        raise NotImplementedError

    def _started(self) -> None:
        _running.add(self)

    def _stopped(self) -> None:
        _running.discard(self)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running() else "stopped"
        return f"{type(self).__name__}({self.model!r}, {self.base_url if self.port else 'no port'}, {state})"
