"""A vLLM OpenAI-compatible server as a child process, with the same lifecycle as
`medhal.serving.local_model.LocalModel` (start/stop/running/log_tail, context manager):

    with VllmServer("Qwen/Qwen2.5-3B-Instruct") as server:
        client = OpenAI(base_url=server.base_url, api_key="vllm")

vLLM is an external executable, not a locked extra of this project: the user installs it in
its own environment on the GPU machine (`uv tool install vllm`) and `vllm` must be on PATH (or
passed as `executable=`). Why: every vLLM release since 0.30 requires `mcp>=2`, which
verifiers 0.2.1 (`mcp<2`) excludes, so a locked extra would freeze users on vLLM 0.29; and even
that one, resolved into this project's universal lock, downgrades fastapi, protobuf and (on
Python >= 3.12) numpy for every install and adds ~3.8 GB of CUDA wheels to the lock. A
separate process needs nothing from vLLM's Python environment but its HTTP API.

Every failure to start is one exception with a one-line message (`VllmError` and its
subclasses), so the CLI can print it and exit 2 without a traceback."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

import httpx

from medhal.serving.server_process import ServerProcess, port_available, signal_group, unused_port

MIN_VERSION = (0, 10, 0)
"""Oldest vLLM whose `vllm serve` takes every flag this module passes (`--data-parallel-size`
for one API server over several engine replicas, `--generation-config`)."""
MIN_VERSION_TEXT = ".".join(map(str, MIN_VERSION))
INSTALL_COMMAND = f"uv tool install 'vllm>={MIN_VERSION_TEXT}'"
INSTALL_HINT = (
    f"install it on the GPU machine in its own environment: `{INSTALL_COMMAND}` (puts `vllm` on PATH; "
    "a few GB of CUDA wheels), or pass the path of an existing one with --vllm"
)
DEFAULT_STARTUP_TIMEOUT = 900.0
"""Seconds: a first start downloads the weights and compiles CUDA graphs; minutes are normal."""
VERSION_TIMEOUT = 180.0
"""Seconds for `vllm --version` (it imports torch)."""
LOG_SCAN_BYTES = 64_000
"""How much of the end of the server log is read to explain a failed start."""

_VERSION = re.compile(r"v?(\d{1,4})\.(\d{1,4})(?:\.(\d{1,4}))?")
_NO_DEVICE = ("", "-1", "none", "void", "nodevfiles")


class VllmError(RuntimeError):
    """vLLM could not be started or died; the message is one line."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))


class VllmNotInstalled(VllmError):
    """No usable `vllm` executable (missing, broken, or older than MIN_VERSION)."""


class NoGpuVisible(VllmError):
    """No GPU (or too few for the requested parallelism) is visible."""


class PortTaken(VllmError):
    """The requested port is already in use."""


class ModelNotFound(VllmError):
    """vLLM could not resolve the model to a Hub repository or a local directory."""


class ServerDied(VllmError):
    """The server exited while starting, for another reason (the message quotes its log)."""


class StartupTimeout(VllmError):
    """The server did not become healthy in time."""


# --- checks before starting --------------------------------------------------------------------
def find_executable(executable: str = "vllm", env: Mapping[str, str] | None = None) -> str:
    """The path of the `vllm` executable (a bare name is looked up on the PATH of `env`)."""
    env = os.environ if env is None else env
    if os.sep in executable:
        if os.path.isfile(executable) and os.access(executable, os.X_OK):
            return executable
        raise VllmNotInstalled(
            f"vLLM executable {executable} does not exist or is not executable; {INSTALL_HINT}"
        )
    found = shutil.which(executable, path=env.get("PATH", os.defpath))
    if found is None:
        raise VllmNotInstalled(f"vLLM is not installed (no `{executable}` on PATH); {INSTALL_HINT}")
    return found


def parse_version(text: str) -> tuple[int, int, int] | None:
    """The first `X.Y[.Z]` at the start of a line of `vllm --version`'s output, read from the
    last line up (the version is printed last; log lines may come before it)."""
    for line in reversed(text.strip().splitlines()[-20:]):
        match = _VERSION.match(line.strip())
        if match:
            return int(match[1]), int(match[2]), int(match[3] or 0)
    return None


def installed_version(executable: str, env: Mapping[str, str] | None = None) -> str:
    """`vllm --version`, checked against MIN_VERSION; the version text."""
    try:
        proc = subprocess.run(
            [executable, "--version"],
            check=False,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=VERSION_TIMEOUT,
            env=dict(os.environ if env is None else env),
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as e:
        raise VllmNotInstalled(
            f"`{executable} --version` did not answer within {VERSION_TIMEOUT:.0f}s"
        ) from e
    except OSError as e:
        raise VllmNotInstalled(f"cannot run {executable}: {e}; {INSTALL_HINT}") from e
    version = parse_version(proc.stdout)
    if proc.returncode != 0 or version is None:
        last = last_lines(proc.stdout + proc.stderr, 1) or "(no output)"
        raise VllmNotInstalled(
            f"`{executable} --version` failed (exit status {proc.returncode}): {last}; "
            f"broken install? {INSTALL_HINT}"
        )
    text = ".".join(map(str, version))
    if version < MIN_VERSION:
        raise VllmNotInstalled(
            f"vLLM {text} at {executable} is older than the minimum {MIN_VERSION_TEXT}; "
            f"upgrade it: `uv tool upgrade vllm` or `{INSTALL_COMMAND}`"
        )
    return text


def visible_gpus(env: Mapping[str, str] | None = None) -> int:
    """How many NVIDIA GPUs this process's children can use: `nvidia-smi -L`'s count, capped
    by CUDA_VISIBLE_DEVICES when it is set. Raises NoGpuVisible when there are none."""
    env = os.environ if env is None else env
    advice = "vLLM needs a GPU (on a CPU machine use --backend local)"
    masked = env.get("CUDA_VISIBLE_DEVICES")
    if masked is not None and masked.strip().lower() in _NO_DEVICE:
        raise NoGpuVisible(f"no GPU visible: CUDA_VISIBLE_DEVICES={masked!r} hides every GPU; {advice}")
    smi = shutil.which("nvidia-smi", path=env.get("PATH", os.defpath))
    if smi is None:
        raise NoGpuVisible(
            f"no GPU visible: nvidia-smi is not on PATH (no NVIDIA driver?); {advice}; "
            "for other accelerators pass --skip-gpu-check"
        )
    try:
        proc = subprocess.run(
            [smi, "-L"],
            check=False,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=60,
            env=dict(env),
            stdin=subprocess.DEVNULL,
        )
    except (subprocess.TimeoutExpired, OSError) as e:
        raise NoGpuVisible(f"no GPU visible: `nvidia-smi -L` failed ({e}); {advice}") from e
    count = sum(1 for line in proc.stdout.splitlines() if line.startswith("GPU "))
    if count == 0:
        said = last_lines(proc.stdout + proc.stderr, 1) or f"exit status {proc.returncode}"
        raise NoGpuVisible(f"no GPU visible: `nvidia-smi -L` lists none ({said}); {advice}")
    if masked is not None:
        count = min(count, len([d for d in masked.split(",") if d.strip()]))
    return count


# --- reading the log of a failed start -----------------------------------------------------------
_MODEL_MISSING = (
    "invalid repository id or local directory specified",
    "is not a local folder and is not a valid model identifier",
    "repositorynotfounderror",
    "repository not found for url",
)
_MODEL_GATED = ("gatedrepoerror", "gated repo")
_PORT_IN_USE = ("address already in use", "[errno 98]")
_NO_GPU = (
    "failed to infer device type",
    "no cuda gpus are available",
    "found no nvidia driver",
    "cuda driver initialization failed",
)
_OUT_OF_MEMORY = (
    "cuda out of memory",
    "outofmemoryerror",
    "no available memory for the cache blocks",
    "larger than the available kv cache memory",
)


def last_lines(text: str, n: int, width: int = 240) -> str:
    lines = [line.strip()[:width] for line in text.splitlines() if line.strip()]
    return " | ".join(lines[-n:])


def explain_exit(
    log_text: str, code: int | None, *, model: str, host: str, port: int | None, log: Path | None
) -> VllmError:
    """The error for a server that exited during start-up, recognised from the end of its log."""
    low = log_text.lower()
    where = f"(server log: {log})"
    if any(n in low for n in _MODEL_GATED):
        return ModelNotFound(
            f"model {model!r} is gated on the Hugging Face Hub: accept its licence on the model page "
            f"and export HF_TOKEN {where}"
        )
    if any(n in low for n in _MODEL_MISSING):
        return ModelNotFound(
            f"model {model!r} not found: vLLM resolved it to neither a Hugging Face repository nor a local "
            f"directory with config.json (check the name; gated models need HF_TOKEN; offline machines need "
            f"the weights in the Hugging Face cache) {where}"
        )
    if any(n in low for n in _PORT_IN_USE):
        return PortTaken(
            f"port {port} on {host} is taken (address already in use); choose another --port, "
            f"or leave --port out for a free one {where}"
        )
    if any(n in low for n in _NO_GPU):
        return NoGpuVisible(f"vLLM found no usable GPU: {last_lines(log_text, 1)} {where}")
    hint = ""
    if any(n in low for n in _OUT_OF_MEMORY):
        hint = "; out of GPU memory: lower --max-model-len, raise --gpu-memory-utilization, or add GPUs"
    return ServerDied(
        f"vLLM exited with status {code} during start-up{hint}; "
        f"last log lines: {last_lines(log_text, 3)} {where}"
    )


# --- process groups --------------------------------------------------------------------------------
def live_group_members(pgid: int) -> list[int]:
    """Pids of the processes of group `pgid` that are not zombies (read from /proc; where
    there is no /proc, [pgid] while the group can still be signalled)."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return []
        return [pgid]
    members = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so split after the last ')'.
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


class VllmServer(ServerProcess):
    """`vllm serve MODEL` on host:port, started as its own process group.

    `start()` checks the executable's version and the visible GPUs, starts the server with
    its output streamed to a log file, and returns once `/health` answers and `/v1/models`
    lists the served model name. `stop()` sends SIGTERM to the whole group (API server and
    engine processes), then SIGKILL to whatever is left after `timeout`."""

    def __init__(
        self,
        model: str,
        *,
        served_model_name: str | None = None,
        host: str = "127.0.0.1",
        port: int | None = None,
        max_model_len: int | None = None,
        gpu_memory_utilization: float = 0.9,
        tensor_parallel_size: int = 1,
        data_parallel_size: int = 1,
        dtype: str = "auto",
        seed: int = 0,
        generation_config: str = "vllm",
        extra_args: Sequence[str] | str = (),
        executable: str = "vllm",
        log: str | os.PathLike[str] | None = None,
        output_dir: str | os.PathLike[str] | None = None,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        check_gpu: bool = True,
        env: Mapping[str, str] | None = None,
    ) -> None:
        if tensor_parallel_size < 1 or data_parallel_size < 1:
            raise VllmError("--tensor-parallel-size and --data-parallel-size must be at least 1")
        if not 0 < gpu_memory_utilization <= 1:
            raise VllmError(f"--gpu-memory-utilization {gpu_memory_utilization} is not in (0, 1]")
        self.model_path = model
        self.model = served_model_name or model
        """The name the server answers to; pass it as `--model` to `eval`."""
        self.host = host
        self.port = port
        self.max_model_len = max_model_len
        self.gpu_memory_utilization = gpu_memory_utilization
        self.tensor_parallel_size = tensor_parallel_size
        self.data_parallel_size = data_parallel_size
        self.dtype = dtype
        self.seed = seed
        self.generation_config = generation_config
        self.extra_args = shlex.split(extra_args) if isinstance(extra_args, str) else list(extra_args)
        self.executable = executable
        self.log_path: Path | None = Path(log) if log is not None else None
        self.output_dir = Path(output_dir) if output_dir is not None else None
        self.startup_timeout = startup_timeout
        self.check_gpu = check_gpu
        self.env = dict(os.environ if env is None else env)
        self.version: str | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.startup_seconds: float | None = None
        self._log_file: IO[bytes] | None = None
        self._lock = threading.Lock()

    def command(self, executable: str | None = None) -> list[str]:
        """The full `vllm serve` command line. `--generation-config vllm` keeps the model's own
        generation_config.json (e.g. a repetition penalty) out of requests that do not set those
        fields, so the sampling is exactly what the run's config asks for, as with vLLM's
        offline `SamplingParams` that the papers' scripts used."""
        argv = [
            executable or self.executable,
            "serve",
            self.model_path,
            "--served-model-name",
            self.model,
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--gpu-memory-utilization",
            str(self.gpu_memory_utilization),
            "--tensor-parallel-size",
            str(self.tensor_parallel_size),
            "--data-parallel-size",
            str(self.data_parallel_size),
            "--dtype",
            self.dtype,
            "--seed",
            str(self.seed),
            "--generation-config",
            self.generation_config,
        ]
        if self.max_model_len is not None:
            argv += ["--max-model-len", str(self.max_model_len)]
        return argv + self.extra_args

    # --- lifecycle -------------------------------------------------------------------------
    def start(self) -> VllmServer:
        with self._lock:
            if self.process is not None:
                return self
            executable = find_executable(self.executable, self.env)
            self.version = installed_version(executable, self.env)
            if self.check_gpu:
                gpus = visible_gpus(self.env)
                needed = self.tensor_parallel_size * self.data_parallel_size
                if needed > gpus:
                    raise NoGpuVisible(
                        f"--tensor-parallel-size {self.tensor_parallel_size} x --data-parallel-size "
                        f"{self.data_parallel_size} needs {needed} GPUs; {gpus} visible"
                    )
            if self.port is None:
                self.port = unused_port(self.host)
            elif not port_available(self.host, self.port):
                raise PortTaken(
                    f"port {self.port} on {self.host} is taken; choose another --port, "
                    "or leave --port out for a free one"
                )
            if self.log_path is None:
                if self.output_dir is not None:
                    self.output_dir.mkdir(parents=True, exist_ok=True)
                    self.log_path = self.output_dir / "vllm-server.log"
                else:
                    fd, name = tempfile.mkstemp(prefix="medhal-vllm-", suffix=".log")
                    os.close(fd)
                    self.log_path = Path(name)
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log_file = open(self.log_path, "wb")  # noqa: SIM115 (the server writes to it until stop())
            argv = self.command(executable)
            self._log_file.write(f"# medhal: vLLM {self.version}: {shlex.join(argv)}\n".encode())
            self._log_file.flush()
            env = dict(self.env)
            env.setdefault("PYTHONUNBUFFERED", "1")  # the log file shows each line as it is written
            t0 = time.monotonic()
            try:
                self.process = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=self._log_file,
                    stderr=subprocess.STDOUT,
                    env=env,
                    start_new_session=True,  # own process group: stop() takes the engine processes too
                )
            except OSError as e:
                self._log_file.close()
                self._log_file = None
                raise VllmNotInstalled(f"cannot run {executable}: {e}; {INSTALL_HINT}") from e
            self._started()
        try:
            self._wait_ready(t0 + self.startup_timeout)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - t0
        return self

    def _wait_ready(self, deadline: float) -> None:
        with httpx.Client(timeout=10.0) as client:
            while True:
                self._check_alive()
                try:
                    if client.get(f"{self.root_url}/health").status_code == 200:
                        self._check_model_listed(client)
                        return
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise StartupTimeout(
                        f"vLLM did not answer {self.root_url}/health within {self.startup_timeout:.0f}s "
                        f"(still downloading or loading? raise --startup-timeout); last log line: "
                        f"{last_lines(self.log_text(), 1) or '(empty)'} (server log: {self.log_path})"
                    )
                time.sleep(0.5)

    def _check_model_listed(self, client: httpx.Client) -> None:
        try:
            response = client.get(f"{self.base_url}/models")
            response.raise_for_status()
            names = [m.get("id") for m in response.json().get("data", [])]
        except (httpx.HTTPError, ValueError, AttributeError, TypeError) as e:
            raise VllmError(f"{self.base_url}/models did not answer with a model list: {e}") from e
        if self.model not in names:
            raise VllmError(f"the server on {self.base_url} serves {names}, not {self.model!r}")

    def _check_alive(self) -> None:
        assert self.process is not None
        code = self.process.poll()
        if code is not None:
            raise explain_exit(
                self.log_text(),
                code,
                model=self.model_path,
                host=self.host,
                port=self.port,
                log=self.log_path,
            )

    def log_text(self) -> str:
        """The end of the server log (the last LOG_SCAN_BYTES)."""
        if self.log_path is None or not self.log_path.exists():
            return ""
        if self._log_file is not None and not self._log_file.closed:
            self._log_file.flush()
        with open(self.log_path, "rb") as f:
            f.seek(max(f.seek(0, os.SEEK_END) - LOG_SCAN_BYTES, 0))
            return f.read().decode("utf-8", "replace")

    def log_tail(self, lines: int = 40) -> str:
        text = self.log_text()
        return "\n".join(text.splitlines()[-lines:]) if text else "(no log)"

    def stop(self, timeout: float = 15.0) -> int | None:
        """Stop the server's whole process group; return the server's exit status (None if it
        never started). Idempotent. The log file is kept."""
        with self._lock:
            proc = self.process
            if proc is None:
                return None
            pgid = proc.pid  # start_new_session: the group id is the server's pid
            if proc.poll() is None:
                signal_group(pgid, signal.SIGTERM)
                try:
                    proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    signal_group(pgid, signal.SIGKILL)
                    proc.wait(timeout)
            elif live_group_members(pgid):
                signal_group(pgid, signal.SIGTERM)
            # Engine processes can outlive the API server: give them the same grace, then kill them.
            deadline = time.monotonic() + timeout
            while live_group_members(pgid) and time.monotonic() < deadline:
                time.sleep(0.1)
            if live_group_members(pgid):
                signal_group(pgid, signal.SIGKILL)
            self._stopped()
            if self._log_file is not None:
                self._log_file.close()
                self._log_file = None
            return proc.returncode
