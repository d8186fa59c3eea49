"""CLI commands that need the embedded local model (`medhal[local]`). Kept separate so the
core CLI imports nothing heavy: `medhal.local_model` is imported only when a command runs.

Hook for `medhal demo` (and any other command that needs a model endpoint):
`add_local_model_args(parser)` adds the server options, `local_model_from_args(ns)` builds
the (not yet started) `LocalModel`, and `local_model_errors()` turns a failed start into a
clean CLI error. Register the command in `add_parsers`."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from medhal.local_model import LocalModel


class LocalModelFailed(Exception):
    """Raised by `local_model_errors` after printing the reason; carries the exit status."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def add_local_model_args(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("embedded local model (llama-cpp-python server)")
    g.add_argument("--host", default="127.0.0.1", help="listen address (default 127.0.0.1)")
    g.add_argument("--port", type=int, default=None, help="listen port (default: a free one)")
    g.add_argument("--n-ctx", type=int, default=None, help="context size in tokens (default 4096)")
    g.add_argument("--threads", type=int, default=None, help="CPU threads (default: all cores)")
    g.add_argument("--server-log", type=Path, default=None, help="write the server's output here (default: a temporary file)")
    g.add_argument("--startup-timeout", type=float, default=120.0, help="seconds to wait for the server (default 120)")


def local_model_from_args(ns: argparse.Namespace) -> "LocalModel":
    from medhal.local_model import DEFAULT_N_CTX, LocalModel

    return LocalModel(
        host=ns.host,
        port=ns.port,
        n_ctx=ns.n_ctx or DEFAULT_N_CTX,
        n_threads=ns.threads,
        log=ns.server_log,
        startup_timeout=ns.startup_timeout,
    )


@contextmanager
def local_model_errors(command: str) -> Iterator[None]:
    """Print a failed start (extra missing: exit 3, server failure: exit 2) and raise
    LocalModelFailed with the status, instead of a traceback."""
    from medhal.local_model import LocalModelError, LocalModelNotInstalled

    try:
        yield
    except LocalModelNotInstalled as e:
        print(f"medhal {command}: {e}", file=sys.stderr)
        raise LocalModelFailed(3) from e
    except LocalModelError as e:
        print(f"medhal {command}: error: {e}", file=sys.stderr)
        raise LocalModelFailed(2) from e


def cmd_serve_local(ns: argparse.Namespace) -> int:
    stop = threading.Event()
    received: list[int] = []

    def on_signal(signum, frame) -> None:
        received.append(signum)
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        lm = local_model_from_args(ns)
        try:
            with local_model_errors("serve-local"):
                lm.start()
        except LocalModelFailed as e:
            return e.code
        try:
            print(f"base URL: {lm.base_url}")
            print(f"model:    {lm.model}")
            print(f"ready in {lm.startup_seconds:.1f}s (pid {lm.pid}); e.g.\n"
                  f"  eval <env-id> -m {lm.model} --client.base-url {lm.base_url}\n"
                  "Ctrl-C to stop.", flush=True)
            while not stop.wait(0.5):
                if not lm.running():
                    print(f"medhal serve-local: error: the server exited with status {lm.process.returncode}; "
                          f"log:\n{lm.log_tail()}", file=sys.stderr)
                    lm.stop(keep_log=True)
                    return 2
        finally:
            if lm.running():
                code = lm.stop()
                print(f"stopped (server exit status {code})", file=sys.stderr)
        return 0
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register `serve-local` and `demo`."""
    from medhal.demo import add_parser as add_demo_parser

    serve = sub.add_parser(
        "serve-local",
        help="serve the embedded SmolLM2-135M-Instruct model (OpenAI-compatible) until Ctrl-C",
        description="Start llama-cpp-python's OpenAI-compatible server for the embedded "
        "SmolLM2-135M-Instruct GGUF on a free local port, print its base URL and model name, "
        "and serve until Ctrl-C or SIGTERM. Needs the `local` extra.",
    )
    add_local_model_args(serve)
    serve.set_defaults(handler=cmd_serve_local)
    add_demo_parser(sub, add_local_model_args)
