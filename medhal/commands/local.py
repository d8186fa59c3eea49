"""Options and construction of the embedded local model (`medhal[local]`) for the CLI. Kept
separate so the core CLI imports nothing heavy: `medhal.serving.local_model` is imported only when a
command runs.

`add_local_model_args(parser)` adds the server options (`medhal serve-local`), and
`local_model_from_args(ns)` builds the (not yet started) `LocalModel`. The commands that start
it, and turn a failed start into a one-line error, are in `medhal.commands.serve` (`serve`,
`serve-local`, and `model_endpoint` for `demo` and `reproduce`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from medhal.serving.local_model import LocalModel


def add_local_model_args(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("embedded local model (llama-cpp-python server)")
    g.add_argument("--host", default="127.0.0.1", help="listen address (default 127.0.0.1)")
    g.add_argument("--port", type=int, default=None, help="listen port (default: a free one)")
    g.add_argument("--n-ctx", type=int, default=None, help="context size in tokens (default 4096)")
    g.add_argument("--threads", type=int, default=None, help="CPU threads (default: all cores)")
    g.add_argument(
        "--server-log",
        type=Path,
        default=None,
        help="write the server's output here (default: a temporary file)",
    )
    g.add_argument(
        "--startup-timeout", type=float, default=120.0, help="seconds to wait for the server (default 120)"
    )


def local_model_from_args(ns: argparse.Namespace) -> LocalModel:
    from medhal.serving.local_model import DEFAULT_N_CTX, LocalModel

    return LocalModel(
        host=ns.host,
        port=ns.port,
        n_ctx=ns.n_ctx or DEFAULT_N_CTX,
        n_threads=ns.threads,
        log=ns.server_log,
        startup_timeout=ns.startup_timeout,
    )
