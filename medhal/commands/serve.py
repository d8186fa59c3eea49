"""`medhal serve --backend local|vllm [--model M]`: serve a model until Ctrl-C (`serve-local` is
`serve --backend local`); and what `demo` and `reproduce` share with it: the model-server
options, and `model_endpoint(ns)`, the (base URL, model name) they send requests to, starting
and stopping a server when a backend is asked for.

Nothing heavy is imported at module level: the CLI imports this module on every command."""

from __future__ import annotations

import argparse
import math
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from medhal.kit.untrusted import one_line

if TYPE_CHECKING:
    from medhal.serving.local_model import LocalModel
    from medhal.serving.vllm_server import VllmServer

SignalHandler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None
"""What `signal.signal` returns (and takes back to restore it)."""

BACKENDS = ("local", "vllm")
LOCAL_STARTUP_TIMEOUT = 120.0


class EndpointFailed(Exception):
    """The endpoint could not be set up; the reason is already printed. Carries the exit status."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _fail(command: str, message: str, code: int = 2) -> EndpointFailed:
    print(f"medhal {command}: error: {one_line(message)}", file=sys.stderr)
    return EndpointFailed(code)


# --- options ---------------------------------------------------------------------------------------
def port_number(text: str) -> int | None:
    """The argparse type of --port: 1 to 65535, or 0 for a free one (None, as when not given)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--port must be a whole number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"--port must be between 1 and 65535 (0: a free one), got {value}")
    return value or None


def positive_seconds(text: str) -> float:
    """The argparse type of --startup-timeout: a finite number of seconds above 0 (NaN would
    never time out, 0 silently meant the default)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--startup-timeout must be a number of seconds, got {text!r}"
        ) from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(
            f"--startup-timeout must be a number of seconds above 0, got {text!r}"
        )
    return value


def positive_count(text: str) -> int:
    """The argparse type of a count that must be at least 1 (-n, -c)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {value}")
    return value


def add_backend_args(parser: argparse.ArgumentParser, *, vllm: bool = True) -> None:
    """The model-server options shared by `serve`, `reproduce` and `demo` (not --model/--base-url,
    which each command declares itself); `serve-local` takes them without the vLLM ones."""
    server = parser.add_argument_group("model server")
    if vllm:
        server.add_argument(
            "--backend",
            choices=BACKENDS,
            default=None,
            help="start this server: local = the embedded SmolLM2-135M on CPU "
            "(llama-cpp-python), vllm = `vllm serve --model` on the GPUs "
            "(vLLM installed separately)",
        )
    server.add_argument("--host", default="127.0.0.1", help="listen address (default 127.0.0.1)")
    server.add_argument(
        "--port", type=port_number, default=None, help="listen port, 1 to 65535 (default or 0: a free one)"
    )
    server.add_argument(
        "--server-log",
        type=Path,
        default=None,
        help="write the server's output here (default: local, a temporary file; vllm, "
        "vllm-server.log in the output directory, or a kept temporary file)",
    )
    server.add_argument(
        "--startup-timeout",
        type=positive_seconds,
        default=None,
        help=f"seconds to wait for the server (default {LOCAL_STARTUP_TIMEOUT:.0f} local, 900 vllm)",
    )
    local = parser.add_argument_group("--backend local (llama-cpp-python)")
    local.add_argument("--n-ctx", type=int, default=None, help="context size in tokens (default 4096)")
    local.add_argument("--threads", type=int, default=None, help="CPU threads (default: all cores)")
    if vllm:
        _add_vllm_args(parser)


def _add_vllm_args(parser: argparse.ArgumentParser) -> None:
    vllm = parser.add_argument_group("--backend vllm (each flag is passed to `vllm serve`)")
    vllm.add_argument(
        "--vllm",
        dest="vllm_executable",
        default="vllm",
        metavar="PATH",
        help="the vllm executable (default: `vllm` on PATH)",
    )
    vllm.add_argument(
        "--served-model-name", default=None, help="name the server answers to (default: --model)"
    )
    vllm.add_argument(
        "--max-model-len", type=int, default=None, help="context length in tokens (default: the model's own)"
    )
    vllm.add_argument(
        "--gpu-memory-utilization",
        type=float,
        default=0.9,
        help="share of each GPU's memory vLLM may take (default 0.9)",
    )
    vllm.add_argument(
        "--tensor-parallel-size", type=int, default=1, help="GPUs per model replica (default 1)"
    )
    vllm.add_argument(
        "--data-parallel-size", type=int, default=1, help="model replicas behind the one endpoint (default 1)"
    )
    vllm.add_argument("--dtype", default="auto", help="weights/activations dtype (default auto)")
    vllm.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    vllm.add_argument(
        "--generation-config",
        default="vllm",
        help="`vllm` (default): only the request's sampling fields apply; `auto`: the model's "
        "generation_config.json fills the fields a request leaves out",
    )
    vllm.add_argument(
        "--vllm-args",
        default="",
        metavar="'ARGS'",
        help="more `vllm serve` flags as one shell-quoted string, e.g. "
        "--vllm-args='--enforce-eager --max-num-seqs 256'",
    )
    vllm.add_argument(
        "--skip-gpu-check",
        action="store_true",
        help="do not check `nvidia-smi -L` first (non-NVIDIA accelerators)",
    )


# --- servers ---------------------------------------------------------------------------------------
def local_server(ns: argparse.Namespace) -> LocalModel:
    from medhal.serving.local_model import DEFAULT_N_CTX, LocalModel

    return LocalModel(
        host=ns.host,
        port=ns.port,
        n_ctx=ns.n_ctx or DEFAULT_N_CTX,
        n_threads=ns.threads,
        log=ns.server_log,
        startup_timeout=ns.startup_timeout or LOCAL_STARTUP_TIMEOUT,
    )


def vllm_server(ns: argparse.Namespace, output_dir: Path | None = None) -> VllmServer:
    from medhal.serving.vllm_server import DEFAULT_STARTUP_TIMEOUT, VllmError, VllmServer

    try:
        return VllmServer(
            ns.model,
            served_model_name=ns.served_model_name,
            host=ns.host,
            port=ns.port,
            max_model_len=ns.max_model_len,
            gpu_memory_utilization=ns.gpu_memory_utilization,
            tensor_parallel_size=ns.tensor_parallel_size,
            data_parallel_size=ns.data_parallel_size,
            dtype=ns.dtype,
            seed=ns.seed,
            generation_config=ns.generation_config,
            extra_args=ns.vllm_args,
            executable=ns.vllm_executable,
            log=ns.server_log,
            output_dir=output_dir,
            startup_timeout=ns.startup_timeout or DEFAULT_STARTUP_TIMEOUT,
            check_gpu=not ns.skip_gpu_check,
        )
    except ValueError as e:  # --vllm-args that do not split (an unclosed quote)
        raise VllmError(f"--vllm-args {ns.vllm_args!r}: {e}") from e


@contextmanager
def server_errors(command: str) -> Iterator[None]:
    """A failed start becomes one printed message and EndpointFailed: exit 3 when the local
    extra is missing (as before), 2 otherwise."""
    from medhal.serving.local_model import LocalModelError, LocalModelNotInstalled
    from medhal.serving.vllm_server import VllmError

    try:
        yield
    except LocalModelNotInstalled as e:
        print(f"medhal {command}: {e}", file=sys.stderr)
        raise EndpointFailed(3) from e
    except (LocalModelError, VllmError) as e:
        raise _fail(command, str(e)) from e


def _check_model_arg(ns: argparse.Namespace, backend: str, command: str) -> None:
    if backend == "vllm" and not ns.model:
        raise _fail(
            command, "--backend vllm needs --model (a Hugging Face model id or a local model directory)"
        )


def _start(
    ns: argparse.Namespace, backend: str, command: str, output_dir: Path | None
) -> LocalModel | VllmServer:
    with server_errors(command):
        server = vllm_server(ns, output_dir) if backend == "vllm" else local_server(ns)
        server.start()
    return server


def _stop(server: LocalModel | VllmServer, keep_log: bool = False) -> int | None:
    from medhal.serving.local_model import LocalModel

    return server.stop(keep_log=keep_log) if isinstance(server, LocalModel) else server.stop()


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _stop_on_sigterm() -> SignalHandler:
    """While a server we started runs, SIGTERM unwinds like Ctrl-C, so `finally` stops the server
    (its own process group does not get the signal). Returns the handler to restore."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _interrupt)


@contextmanager
def model_endpoint(
    ns: argparse.Namespace,
    command: str = "demo",
    output_dir: Path | None = None,
    started: list[Any] | None = None,
) -> Iterator[tuple[str, str]]:
    """(base URL, model name) for the endpoint the options ask for: `--base-url` as given, or a
    server started here (`--backend local`, the default, or `--backend vllm --model M`) and
    stopped on exit; `started`, when given, receives that server (to watch it). Start
    failures print one line and raise EndpointFailed."""
    base_url = getattr(ns, "base_url", None)
    if base_url:
        if ns.backend is not None:
            raise _fail(
                command, "give --backend (start a server) or --base-url (use a running one), not both"
            )
        yield base_url, ns.model or "default"
        return
    from medhal.serving.local_model import LocalModel

    backend = ns.backend or "local"
    _check_model_arg(ns, backend, command)
    previous = _stop_on_sigterm()
    try:
        server = _start(ns, backend, command, output_dir)
        if started is not None:
            started.append(server)
        try:
            if not isinstance(server, LocalModel):
                model = server.model
                print(
                    f"vLLM {server.version} serving {model} at {server.base_url}, ready in "
                    f"{server.startup_seconds:.1f}s (server log: {server.log_path})",
                    flush=True,
                )
            else:
                model = ns.model or server.model
                print(
                    f"local model {server.model} ready at {server.base_url} in {server.startup_seconds:.1f}s",
                    flush=True,
                )
            yield server.base_url, model
        finally:
            _stop(server)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


# --- medhal serve ----------------------------------------------------------------------------------
def cmd_serve(ns: argparse.Namespace) -> int:
    command = ns.command
    backend = ns.backend or "local"
    if backend == "local" and getattr(ns, "model", None):
        print(
            f"medhal {command}: error: --model is for --backend vllm; the local backend serves the "
            "embedded SmolLM2-135M-Instruct",
            file=sys.stderr,
        )
        return 2
    stop = threading.Event()
    state = {"starting": True}

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if state["starting"]:
            raise KeyboardInterrupt(f"signal {signum}")  # unwinds start(), which stops the server
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            _check_model_arg(ns, backend, command)
            server = _start(ns, backend, command, None)
        except EndpointFailed as e:
            return e.code
        except KeyboardInterrupt:
            print(f"medhal {command}: interrupted during start-up; the server is stopped", file=sys.stderr)
            return 130
        state["starting"] = False
        return _serve_until_stopped(server, backend, command, stop)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _serve_until_stopped(
    server: LocalModel | VllmServer, backend: str, command: str, stop: threading.Event
) -> int:
    """Say where the server is, then wait for Ctrl-C or SIGTERM (`stop`) or for the server to
    die (exit 2 with the last lines of its log); the server is stopped either way."""
    try:
        print(f"base URL: {server.base_url}")
        print(f"model:    {server.model}")
        version = getattr(server, "version", "")
        what = "llama-cpp-python (embedded model)" if backend == "local" else f"vLLM {version}"
        print(f"server:   {what}, pid {server.pid}, log {server.log_path}")
        print(
            f"ready in {server.startup_seconds:.1f}s; e.g.\n"
            f"  eval <env-id> -m {server.model} --client.base-url {server.base_url}\n"
            f"  medhal reproduce <benchmark> --model {server.model} --base-url {server.base_url}\n"
            "Ctrl-C to stop.",
            flush=True,
        )
        while not stop.wait(0.5):
            if not server.running():
                from medhal.serving.vllm_server import last_lines

                tail = last_lines(server.log_tail(), 3) or "(empty)"
                status = server.process.returncode if server.process is not None else None
                print(
                    f"medhal {command}: error: the server exited with status {status}; "
                    f"last log lines: {tail} (server log: {server.log_path})",
                    file=sys.stderr,
                )
                _stop(server, keep_log=True)
                return 2
    finally:
        if server.running():
            code = _stop(server)
            print(f"stopped (server exit status {code})", file=sys.stderr)
    return 0


# --- registration ----------------------------------------------------------------------------------
def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `serve` and `serve-local`."""
    serve = sub.add_parser(
        "serve",
        help="serve a model (OpenAI-compatible) until Ctrl-C: the embedded CPU model, or any model with vLLM",
        description="Start an OpenAI-compatible server, print its base URL and model name, and serve "
        "until Ctrl-C or SIGTERM. --backend local (default): the embedded SmolLM2-135M-Instruct "
        "(needs the `local` extra). --backend vllm --model M: `vllm serve M` with the flags below "
        "(needs the vllm executable and a GPU).",
    )
    serve.add_argument("--model", help="--backend vllm: Hugging Face model id or local model directory")
    add_backend_args(serve)
    serve.set_defaults(handler=cmd_serve)

    alias = sub.add_parser(
        "serve-local",
        help="serve the embedded SmolLM2-135M-Instruct model until Ctrl-C (= serve --backend local)",
        description="Same as `medhal serve --backend local`: llama-cpp-python's OpenAI-compatible server "
        "for the embedded SmolLM2-135M-Instruct GGUF on a free local port. Needs the `local` extra.",
    )
    add_backend_args(alias, vllm=False)
    alias.set_defaults(handler=cmd_serve, backend="local", model=None)
