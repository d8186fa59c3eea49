"""Serving a model and reproducing a paper's numbers from the command line:

- `medhal serve --backend local|vllm [--model M]`: serve until Ctrl-C (`serve-local` is
  `serve --backend local`);
- `medhal reproduce BENCHMARK --model M [--backend vllm | --base-url U]`: every paper setting
  of the benchmark in `configs/eval/`, one `eval` each, then the report;
- `model_endpoint(ns)`: the (base URL, model name) that `demo` and `reproduce` send requests to,
  starting and stopping a server when a backend is asked for.

Nothing heavy is imported at module level: the CLI imports this module on every command."""

from __future__ import annotations

import argparse
import re
import signal
import subprocess
import sys
import threading
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from medhal.serving.local_model import LocalModel
    from medhal.serving.vllm_server import VllmServer

SignalHandler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None
"""What `signal.signal` returns (and takes back to restore it)."""

BACKENDS = ("local", "vllm")
LOCAL_STARTUP_TIMEOUT = 120.0
ENV_OPTION_PREFIX = "--taskset."


class EndpointFailed(Exception):
    """The endpoint could not be set up; the reason is already printed. Carries the exit status."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _fail(command: str, message: str, code: int = 2) -> EndpointFailed:
    print(f"medhal {command}: error: {message}", file=sys.stderr)
    return EndpointFailed(code)


# --- options ---------------------------------------------------------------------------------------
def add_backend_args(parser: argparse.ArgumentParser) -> None:
    """The model-server options shared by `serve`, `reproduce` and `demo` (not --model/--base-url,
    which each command declares itself)."""
    server = parser.add_argument_group("model server")
    server.add_argument(
        "--backend",
        choices=BACKENDS,
        default=None,
        help="start this server: local = the embedded SmolLM2-135M on CPU "
        "(llama-cpp-python), vllm = `vllm serve --model` on the GPUs "
        "(vLLM installed separately)",
    )
    server.add_argument("--host", default="127.0.0.1", help="listen address (default 127.0.0.1)")
    server.add_argument("--port", type=int, default=None, help="listen port (default: a free one)")
    server.add_argument(
        "--server-log",
        type=Path,
        default=None,
        help="write the server's output here (default: local, a temporary file; vllm, "
        "vllm-server.log in the output directory, or a kept temporary file)",
    )
    server.add_argument(
        "--startup-timeout",
        type=float,
        default=None,
        help=f"seconds to wait for the server (default {LOCAL_STARTUP_TIMEOUT:.0f} local, 900 vllm)",
    )
    local = parser.add_argument_group("--backend local (llama-cpp-python)")
    local.add_argument("--n-ctx", type=int, default=None, help="context size in tokens (default 4096)")
    local.add_argument("--threads", type=int, default=None, help="CPU threads (default: all cores)")
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
    from medhal.commands.local import local_model_from_args

    return local_model_from_args(
        argparse.Namespace(**{**vars(ns), "startup_timeout": ns.startup_timeout or LOCAL_STARTUP_TIMEOUT})
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
    ns: argparse.Namespace, command: str = "demo", output_dir: Path | None = None
) -> Iterator[tuple[str, str]]:
    """(base URL, model name) for the endpoint the options ask for: `--base-url` as given, or a
    server started here (`--backend local`, the default, or `--backend vllm --model M`) and
    stopped on exit. Start failures print one line and raise EndpointFailed."""
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
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


# --- medhal reproduce ------------------------------------------------------------------------------
def default_configs_dir() -> Path:
    """`configs/eval/` of the source tree medhal runs from, else of the working directory."""
    here = Path(__file__).resolve().parents[2] / "configs" / "eval"
    return here if here.is_dir() else Path("configs") / "eval"


def _module_name(benchmark: str) -> str:
    return benchmark.strip().lower().replace("-", "_")


def paper_settings(benchmark: str, configs_dir: Path) -> dict[str, Path]:
    """Setting name (file stem) -> config, for every `<module>*.toml` in `configs_dir` whose
    `[taskset] id` is this benchmark (the prefix alone would also match a longer module name)."""
    module = _module_name(benchmark)
    found: dict[str, Path] = {}
    for path in sorted(configs_dir.glob(f"{module}*.toml")):
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise ValueError(f"{path}: not a valid TOML file: {e}") from e
        taskset = data.get("taskset")
        env_id = taskset.get("id") if isinstance(taskset, dict) else None
        if isinstance(env_id, str) and _module_name(env_id) == module:
            found[path.stem] = path
    return found


def pick_settings(available: dict[str, Path], wanted: list[str] | None, module: str) -> dict[str, Path]:
    """The settings named by `--setting` (a file stem, or the stem without `<module>_`), in the
    order given; all of them without `--setting`."""
    if not wanted:
        return available
    short = {stem.removeprefix(f"{module}_"): stem for stem in available}
    picked: dict[str, Path] = {}
    for name in wanted:
        stem = name if name in available else short.get(name)
        if stem is None:
            raise ValueError(f"--setting {name!r} is not one of {', '.join(available)}")
        picked[stem] = available[stem]
    return picked


def check_env_args(args: list[str]) -> list[str]:
    """`--taskset.<option> value` / `--taskset.<option>=value` pairs, passed to `eval` unchanged."""
    i = 0
    while i < len(args):
        if not args[i].startswith(ENV_OPTION_PREFIX) or args[i] == ENV_OPTION_PREFIX:
            raise ValueError(
                f"unexpected argument {args[i]!r}; environment options look like "
                f"{ENV_OPTION_PREFIX}<option> <value>"
            )
        if "=" not in args[i]:
            if i + 1 >= len(args):
                raise ValueError(f"option {args[i]} needs a value")
            i += 1
        i += 1
    return args


def eval_command(
    config: Path, *, model: str, base_url: str, out: Path, ns: argparse.Namespace, env_args: list[str]
) -> list[str]:
    argv = [
        str(Path(sys.executable).parent / "eval"),
        "@",
        str(config),
        "--model",
        model,
        "--client.base-url",
        base_url,
        "-o",
        str(out),
        "--no-push",
    ]
    if ns.num_tasks:
        argv += ["-n", str(ns.num_tasks)]
    if ns.concurrency:
        argv += ["-c", str(ns.concurrency)]
    return argv + env_args


def run_eval(argv: list[str], out: Path) -> int:
    """One `eval` with visible progress: its live dashboard on a terminal; otherwise its
    per-rollout log lines, with the per-trace dump it prints sent to OUT/eval.stdout."""
    out.mkdir(parents=True, exist_ok=True)
    if sys.stdout.isatty():
        return subprocess.run(argv, check=False).returncode
    with open(out / "eval.stdout", "w") as dump:
        return subprocess.run([*argv, "--no-rich"], stdout=dump, check=False).returncode


def report_settings(run_dirs: list[Path], out_root: Path, max_error_rate: float) -> int:
    """Report each paper setting's run next to its traces (and compare them when there are
    several, in OUT/comparison); the gate's exit status."""
    from medhal.reports.markdown import to_markdown
    from medhal.reports.report_files import gate, report_runs, write_comparison

    runs, reports, _ = report_runs(run_dirs, None, None)
    for report in reports:
        print(to_markdown(report, report["headline"]))
    if len(reports) > 1:
        text, _ = write_comparison(runs, reports, out_root / "comparison")
        print(text)
    return gate(reports, max_error_rate, allow_incomplete=False)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text.replace("/", "--")).strip("-") or "model"


def cmd_reproduce(ns: argparse.Namespace) -> int:
    rest = ns.taskset_args
    command = "reproduce"
    try:
        env_args = check_env_args(rest)
        configs_dir = ns.configs or default_configs_dir()
        available = paper_settings(ns.benchmark, configs_dir)
        if not available:
            raise ValueError(
                f"no paper settings for {ns.benchmark!r} in {configs_dir} "
                f"(files {_module_name(ns.benchmark)}*.toml with "
                f"[taskset] id = {ns.benchmark!r})"
            )
        settings = pick_settings(available, ns.setting, _module_name(ns.benchmark))
    except (ValueError, OSError) as e:
        print(f"medhal {command}: error: {e}", file=sys.stderr)
        return 2
    if not ns.base_url and ns.backend is None:
        print(
            f"medhal {command}: error: give --backend vllm|local (start a server) or --base-url URL "
            "(use a running one)",
            file=sys.stderr,
        )
        return 2
    if (ns.base_url or ns.backend == "vllm") and not ns.model:
        print(
            f"medhal {command}: error: --model is required with --backend vllm or --base-url", file=sys.stderr
        )
        return 2
    run_name = f"{_slug(ns.benchmark)}--{_slug(ns.model or 'local')}"
    out_root: Path = ns.output or Path("outputs") / "reproduce" / run_name
    out_root.mkdir(parents=True, exist_ok=True)
    done: list[Path] = []
    failed: list[str] = []
    try:
        with model_endpoint(ns, command, output_dir=out_root) as (base_url, model):
            for number, (setting, config) in enumerate(settings.items(), 1):
                out = out_root / setting
                print(f"\n=== {ns.benchmark}: {setting} ({number} of {len(settings)}) ===", flush=True)
                argv = eval_command(config, model=model, base_url=base_url, out=out, ns=ns, env_args=env_args)
                code = run_eval(argv, out)
                if code == 0:
                    done.append(out)
                else:
                    failed.append(setting)
                    print(
                        f"medhal {command}: eval of {setting} exited {code} (its output is above)",
                        file=sys.stderr,
                    )
    except EndpointFailed as e:
        return e.code
    except KeyboardInterrupt:
        print(f"medhal {command}: interrupted; the server is stopped", file=sys.stderr)
        return 130
    code = report_settings(done, out_root, ns.max_error_rate) if done else 1
    print(
        f"\nmedhal {command}: {len(done)} of {len(settings)} settings ran; runs and reports under {out_root}",
        flush=True,
    )
    if failed:
        print(f"medhal {command}: no results for {', '.join(failed)}", file=sys.stderr)
        return 1
    return code


# --- registration ----------------------------------------------------------------------------------
def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `serve`, `serve-local` and `reproduce`."""
    from medhal.commands.local import add_local_model_args
    from medhal.reports.report_files import rate

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
    add_local_model_args(alias)
    alias.set_defaults(handler=cmd_serve, backend="local", model=None)

    rep = sub.add_parser(
        "reproduce",
        help="run a benchmark's paper settings (configs/eval/) against a model, then the report",
        description="Run every paper setting of BENCHMARK from configs/eval/ (files <module>*.toml; "
        "--setting picks some) with `eval @ <config> --model M --client.base-url URL -o OUT/<setting>`, "
        "then report each run. With --backend the server is started and stopped here; with --base-url "
        "a running one is used. Environment options (--taskset.<option> VALUE) follow BENCHMARK and go "
        "to every eval unchanged.",
    )
    rep.add_argument("benchmark", help="environment id, e.g. medfact-bench")
    rep.add_argument("--model", help="model to evaluate (required with --backend vllm or --base-url)")
    rep.add_argument("--base-url", help="an OpenAI-compatible endpoint that already serves --model")
    rep.add_argument("--setting", action="append", help="only this setting (file stem; repeatable)")
    rep.add_argument("-n", "--num-tasks", type=int, help="at most this many tasks per setting (default: all)")
    rep.add_argument("-c", "--concurrency", type=int, help="rollouts in flight per eval (default: eval's)")
    rep.add_argument(
        "-o", "--output", type=Path, help="output root (default outputs/reproduce/<benchmark>--<model>)"
    )
    rep.add_argument("--configs", type=Path, help="settings folder (default: the repository's configs/eval)")
    rep.add_argument(
        "--max-error-rate",
        type=rate,
        default=0.0,
        help="exit 1 when a run's error rate exceeds this (0..1, default 0)",
    )
    add_backend_args(rep)
    rep.set_defaults(handler=cmd_reproduce, takes_taskset_options=True)
