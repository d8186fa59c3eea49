"""`medhal serve --backend vllm`, `medhal reproduce`, `medhal demo --backend vllm` and
`VllmServer`, against a fake `vllm` executable and a fake `nvidia-smi` put first on PATH
(tests/medhal/fake_vllm/): the flags passed, start and health wait, each start failure as one
line with exit status 2, shutdown with no process left behind, and reproduce end to end.
No GPU needed. Timeouts here only stop a hung test; nothing asserts how long anything took."""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from argparse import Namespace
from pathlib import Path

import httpx
import pytest

from medhal.commands.reproduce import paper_settings, pick_settings
from medhal.commands.serve import EndpointFailed, model_endpoint
from medhal.serving.vllm_server import ServerDied, VllmServer, parse_version

ROOT = Path(__file__).resolve().parents[2]
FAKE_DIR = Path(__file__).parent / "fake_vllm"
BIN = Path(sys.executable).parent
DEMO_DATA = ROOT / "environments" / "medfact_bench" / "medfact_bench" / "demo" / "medfact_demo.jsonl"
CONFIGS = ROOT / "configs" / "eval"
FAKE_REPLY = "<think>The article reports this result.</think><score>2</score>"  # fake_vllm.DEFAULT_REPLY
GUARD = 120  # seconds before a hung step fails the test (a guard, not a measurement)


def alive(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie waiting to be reaped counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat[stat.rfind(")") + 2] != "Z"


class Fake:
    """The environment that puts the fakes on PATH, and the files they report through."""

    def __init__(self, tmp_path: Path) -> None:
        self.argv_file = tmp_path / "fake-argv.json"
        self.pids_file = tmp_path / "fake-pids.json"
        self.requests_file = tmp_path / "fake-requests.jsonl"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_VLLM_", "FAKE_NVIDIA_SMI_"))}
        env.pop("CUDA_VISIBLE_DEVICES", None)
        env.update(
            PATH=os.pathsep.join([str(FAKE_DIR), str(BIN), os.environ.get("PATH", os.defpath)]),
            FAKE_VLLM_PYTHON=sys.executable,
            FAKE_VLLM_ARGV_FILE=str(self.argv_file),
            FAKE_VLLM_PIDS_FILE=str(self.pids_file),
            FAKE_VLLM_REQUESTS_FILE=str(self.requests_file),
            TMPDIR=str(tmp_path),  # kept server logs of `medhal serve` land here, not in /tmp
        )
        self.env = env

    def with_(self, **overrides: str) -> dict[str, str]:
        return {**self.env, **overrides}

    def argv(self) -> list[str]:
        return json.loads(self.argv_file.read_text())

    def pids(self) -> list[int]:
        return list(json.loads(self.pids_file.read_text()).values()) if self.pids_file.exists() else []

    def requests(self) -> list[dict]:
        return [json.loads(line) for line in self.requests_file.read_text().splitlines() if line.strip()]

    def wait_started(self) -> None:
        deadline = time.monotonic() + GUARD
        while not self.pids_file.exists():
            assert time.monotonic() < deadline, "the fake vllm never started"
            time.sleep(0.1)


@pytest.fixture
def fake(tmp_path: Path):
    for tool in ("vllm", "nvidia-smi"):
        assert os.access(FAKE_DIR / tool, os.X_OK), f"{FAKE_DIR / tool} must be executable (git mode 100755)"
    f = Fake(tmp_path)
    yield f
    for pid in f.pids():  # a failed test must not leave the fake running (processes this test started)
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def medhal(*args: str, env: dict[str, str], timeout: int = GUARD) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "medhal"), *args], check=False, capture_output=True, text=True, env=env, timeout=timeout
    )


def assert_one_line_error(proc: subprocess.CompletedProcess, command: str, *phrases: str) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr
    message = proc.stderr.strip()
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "\n" not in message, message
    assert message.startswith(f"medhal {command}: error: "), message
    for phrase in phrases:
        assert phrase in message, (phrase, message)
    return message


# --- medhal serve --backend vllm -------------------------------------------------------------------
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_serve_passes_explicit_flags_serves_and_stops_on_signal(fake: Fake, tmp_path: Path, sig: int) -> None:
    log = tmp_path / "server.log"
    proc = subprocess.Popen(
        [
            str(BIN / "medhal"),
            "serve",
            "--backend",
            "vllm",
            "--model",
            "org/some-model",
            "--served-model-name",
            "served-name",
            "--max-model-len",
            "2048",
            "--gpu-memory-utilization",
            "0.5",
            "--dtype",
            "bfloat16",
            "--seed",
            "7",
            "--vllm-args=--enforce-eager --max-num-seqs 8",
            "--server-log",
            str(log),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=fake.env,
        start_new_session=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
    try:
        seen: list[str] = []
        deadline = time.monotonic() + GUARD
        while not any(line.startswith("model:") for line in seen):
            try:
                seen.append(lines.get(timeout=1))
            except queue.Empty:
                if proc.poll() is not None or time.monotonic() > deadline:
                    stderr = proc.stderr.read() if proc.poll() is not None else "(still running)"
                    pytest.fail(f"no 'model:' line; stdout: {seen}; stderr: {stderr}")
        fields = dict(line.split(":", 1) for line in seen if line.startswith(("base URL:", "model:")))
        base_url, model = fields["base URL"].strip(), fields["model"].strip()
        assert model == "served-name"
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        port = base_url.removeprefix("http://127.0.0.1:").removesuffix("/v1")
        assert fake.argv() == [
            "serve",
            "org/some-model",
            "--served-model-name",
            "served-name",
            "--host",
            "127.0.0.1",
            "--port",
            port,
            "--gpu-memory-utilization",
            "0.5",
            "--tensor-parallel-size",
            "1",
            "--data-parallel-size",
            "1",
            "--dtype",
            "bfloat16",
            "--seed",
            "7",
            "--generation-config",
            "vllm",
            "--max-model-len",
            "2048",
            "--enforce-eager",
            "--max-num-seqs",
            "8",
        ]
        assert [m["id"] for m in httpx.get(f"{base_url}/models").json()["data"]] == ["served-name"]
        reply = httpx.post(
            f"{base_url}/chat/completions",
            json={"model": "served-name", "messages": [{"role": "user", "content": "Is water wet?"}]},
        ).json()
        assert reply["choices"][0]["message"]["content"] == FAKE_REPLY
        text = log.read_text()
        assert text.startswith("# medhal: vLLM 0.11.0: ") and "Application startup complete." in text

        server_pids = fake.pids()
        assert len(server_pids) == 2 and all(alive(p) for p in server_pids)  # API server + engine
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=GUARD)
        assert proc.returncode == 0, err
        assert "stopped (server exit status 0)" in err and "Traceback" not in err
        assert not [p for p in server_pids if alive(p)], "server or engine process left running"
        assert "Shutting down the API server." in log.read_text()
        with pytest.raises(httpx.TransportError):
            httpx.get(f"{base_url}/models", timeout=5)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


# (environment overrides, extra flags, phrases the message must hold, whether `vllm serve` was run)
FAILURES = {
    "model-not-found": (
        {"FAKE_VLLM_MODE": "model-not-found"},
        [],
        ["model 'fake/model' not found", "Hugging Face repository", "server log: "],
        True,
    ),
    "dies-during-start": (
        {"FAKE_VLLM_MODE": "die"},
        [],
        ["vLLM exited with status 1 during start-up", "Engine core initialization failed"],
        True,
    ),
    "port-taken-at-bind": (
        {"FAKE_VLLM_MODE": "port-taken"},
        [],
        ["on 127.0.0.1 is taken (address already in use)", "--port"],
        True,
    ),
    "never-healthy": (
        {"FAKE_VLLM_MODE": "unhealthy"},
        ["--startup-timeout", "3"],
        ["did not answer", "/health within 3s", "this fake never finishes"],
        True,
    ),
    "unknown-passthrough-flag": (
        {},
        ["--vllm-args=--no-such-flag"],
        ["exited with status 2", "unrecognized arguments: --no-such-flag"],
        True,
    ),
    "no-gpu": (
        {"FAKE_NVIDIA_SMI_GPUS": "0"},
        [],
        ["no GPU visible", "No devices were found", "--backend local"],
        False,
    ),
    "gpus-hidden": ({"CUDA_VISIBLE_DEVICES": ""}, [], ["no GPU visible", "CUDA_VISIBLE_DEVICES=''"], False),
    # 2 x 2 = 4 GPUs asked for, 2 listed by the fake nvidia-smi
    "too-few-gpus": (
        {"FAKE_NVIDIA_SMI_GPUS": "2"},
        ["--tensor-parallel-size", "2", "--data-parallel-size", "2"],
        ["needs 4 GPUs; 2 visible"],
        False,
    ),
    # 2 listed, CUDA_VISIBLE_DEVICES keeps 1
    "too-few-gpus-masked": (
        {"FAKE_NVIDIA_SMI_GPUS": "2", "CUDA_VISIBLE_DEVICES": "1"},
        ["--data-parallel-size", "2"],
        ["needs 2 GPUs; 1 visible"],
        False,
    ),
    "vllm-too-old": (
        {"FAKE_VLLM_VERSION": "0.9.2"},
        [],
        ["vLLM 0.9.2", "older than the minimum 0.10.0", "uv tool install 'vllm>=0.10.0'"],
        False,
    ),
}


@pytest.mark.parametrize("case", list(FAILURES))
def test_serve_start_failures_are_one_line_with_exit_2(fake: Fake, case: str) -> None:
    overrides, flags, phrases, starts = FAILURES[case]
    proc = medhal("serve", "--backend", "vllm", "--model", "fake/model", *flags, env=fake.with_(**overrides))
    message = assert_one_line_error(proc, "serve", *phrases)
    assert fake.argv_file.exists() == starts, message  # the fake writes its argv first thing
    assert not [p for p in fake.pids() if alive(p)], "a process of the failed server is still running"
    if starts:  # the message names the server log, which was kept
        log = Path(message.rsplit("server log: ", 1)[1].rstrip(")"))
        assert log.is_file() and log.read_text().startswith("# medhal: vLLM 0.11.0: ")


def test_serve_without_vllm_installed_says_how_to_install(fake: Fake) -> None:
    path = os.pathsep.join([str(BIN), "/usr/bin", "/bin"])
    if shutil.which("vllm", path=path):
        pytest.skip(f"a real vllm is installed on {path}")
    proc = medhal("serve", "--backend", "vllm", "--model", "fake/model", env=fake.with_(PATH=path))
    assert_one_line_error(
        proc, "serve", "vLLM is not installed (no `vllm` on PATH)", "uv tool install 'vllm>=0.10.0'", "--vllm"
    )


def test_serve_refuses_a_port_in_use_before_starting(fake: Fake) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        proc = medhal(
            "serve", "--backend", "vllm", "--model", "fake/model", "--port", str(port), env=fake.env
        )
    assert_one_line_error(proc, "serve", f"port {port} on 127.0.0.1 is taken")
    assert not fake.pids_file.exists()


def test_serve_vllm_needs_a_model_and_local_takes_none(fake: Fake) -> None:
    assert_one_line_error(
        medhal("serve", "--backend", "vllm", env=fake.env), "serve", "--backend vllm needs --model"
    )
    assert_one_line_error(
        medhal("serve", "--model", "m", env=fake.env), "serve", "--model is for --backend vllm"
    )


def test_ctrl_c_during_start_up_stops_the_server(fake: Fake) -> None:
    proc = subprocess.Popen(
        [str(BIN / "medhal"), "serve", "--backend", "vllm", "--model", "fake/model"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=fake.with_(FAKE_VLLM_MODE="unhealthy"),
        start_new_session=True,
    )
    try:
        fake.wait_started()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=GUARD)
        assert proc.returncode == 130, err
        assert "interrupted during start-up; the server is stopped" in err and "Traceback" not in err
        assert not [p for p in fake.pids() if alive(p)]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


# --- VllmServer in-process -------------------------------------------------------------------------
def test_server_lifecycle_as_a_context_manager(fake: Fake, tmp_path: Path) -> None:
    with VllmServer("fake/model", env=fake.env, output_dir=tmp_path / "out") as server:
        assert server.running() and server.model == "fake/model" and server.version == "0.11.0"
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
        assert server.log_path == tmp_path / "out" / "vllm-server.log"
        assert server.startup_seconds is not None
        assert "Application startup complete." in server.log_tail()
        assert httpx.get(f"{server.root_url}/health").status_code == 200
        pids = fake.pids()
    assert not server.running() and server.process.returncode == 0
    assert not [p for p in pids if alive(p)]
    assert server.stop() == 0  # idempotent


def test_stop_kills_a_server_that_ignores_sigterm(fake: Fake, tmp_path: Path) -> None:
    server = VllmServer(
        "fake/model", env=fake.with_(FAKE_VLLM_IGNORE_SIGTERM="1"), log=tmp_path / "s.log"
    ).start()
    pids = fake.pids()
    assert all(alive(p) for p in pids)
    assert server.stop(timeout=2) == -signal.SIGKILL
    assert not [p for p in pids if alive(p)], "the engine process outlived stop()"


def test_server_died_error_is_one_line_and_quotes_the_log(fake: Fake, tmp_path: Path) -> None:
    with pytest.raises(ServerDied) as info:
        VllmServer("fake/model", env=fake.with_(FAKE_VLLM_MODE="die"), log=tmp_path / "s.log").start()
    message = str(info.value)
    assert "\n" not in message
    assert message.endswith(f"(server log: {tmp_path / 's.log'})")
    assert "ERROR EngineCore failed to start. | " in message  # the last 3 log lines, joined


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0.11.0\n", (0, 11, 0)),
        ("INFO 11-30 [__init__.py:1] Automatically detected platform cuda.\n0.29.0\n", (0, 29, 0)),
        ("0.10.1.1\n", (0, 10, 1)),
        ("0.11.1.dev42+g0123abc\n", (0, 11, 1)),
        ("v0.12\n", (0, 12, 0)),
        ("no version here\n", None),
    ],
)
def test_parse_version(text: str, expected) -> None:
    assert parse_version(text) == expected


# --- model_endpoint --------------------------------------------------------------------------------
def test_model_endpoint_uses_a_given_base_url_and_refuses_both() -> None:
    with model_endpoint(Namespace(base_url="http://h:1/v1", model="m", backend=None)) as endpoint:
        assert endpoint == ("http://h:1/v1", "m")
    with (
        pytest.raises(EndpointFailed) as info,
        model_endpoint(Namespace(base_url="http://h:1/v1", model="m", backend="vllm")),
    ):
        pass
    assert info.value.code == 2


# --- settings --------------------------------------------------------------------------------------
def test_paper_settings_are_the_benchmarks_config_files(tmp_path: Path) -> None:
    # configs/eval holds 7 Med-HALT sets, 4 MedHallu settings (knowledge x not-sure), 1 MedFact-Bench.
    assert len(paper_settings("med-halt", CONFIGS)) == 7
    assert sorted(paper_settings("medhallu", CONFIGS)) == [
        "medhallu_with_knowledge_binary",
        "medhallu_with_knowledge_notsure",
        "medhallu_without_knowledge_binary",
        "medhallu_without_knowledge_notsure",
    ]
    assert paper_settings("medfact-bench", CONFIGS) == {"medfact_bench": CONFIGS / "medfact_bench.toml"}
    medhallu = paper_settings("medhallu", CONFIGS)
    assert list(
        pick_settings(medhallu, ["without_knowledge_notsure", "medhallu_with_knowledge_binary"], "medhallu")
    ) == ["medhallu_without_knowledge_notsure", "medhallu_with_knowledge_binary"]
    with pytest.raises(ValueError, match="'nope' is not one of medhallu_with_knowledge_binary"):
        pick_settings(medhallu, ["nope"], "medhallu")

    (tmp_path / "medhallu_v2_x.toml").write_text(
        '[taskset]\nid = "medhallu-v2"\n'
    )  # another benchmark's file
    (tmp_path / "medhallu_mine.toml").write_text('[taskset]\nid = "medhallu"\n')
    assert list(paper_settings("medhallu", tmp_path)) == ["medhallu_mine"]
    (tmp_path / "medhallu_broken.toml").write_text("[taskset\n")
    with pytest.raises(ValueError, match=r"medhallu_broken.toml: not a valid TOML file.*line 1"):
        paper_settings("medhallu", tmp_path)


@pytest.mark.parametrize(
    "args, phrase",
    [
        (
            ["medhallu", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--setting", "nope"],
            "--setting 'nope' is not one of medhallu_with_knowledge_binary",
        ),
        (
            ["no-such-bench", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"],
            "no paper settings for 'no-such-bench'",
        ),
        (["medfact-bench", "--model", "m"], "give --backend vllm|local (start a server) or --base-url URL"),
        (["medfact-bench", "--backend", "vllm"], "--model is required with --backend vllm or --base-url"),
        (
            ["medfact-bench", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--taskset.subset"],
            "option --taskset.subset needs a value",
        ),
        (
            ["medfact-bench", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "stray"],
            "unexpected argument 'stray'",
        ),
    ],
)
def test_reproduce_rejects_bad_requests_in_one_line(
    fake: Fake, tmp_path: Path, args: list[str], phrase: str
) -> None:
    assert_one_line_error(
        medhal("reproduce", *args, "-o", str(tmp_path / "out"), env=fake.env), "reproduce", phrase
    )


# --- end to end ------------------------------------------------------------------------------------
@pytest.mark.slow(reason="reproduce end to end: a stand-in vLLM process, the eval executable and the report")
def test_reproduce_medfact_bench_with_the_vllm_backend(fake: Fake, tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = fake.with_(MEDHAL_ASSETS_DIR=os.environ.get("MEDHAL_SHARED_DATA", ""))
    proc = medhal(
        "reproduce",
        "medfact-bench",
        "--backend",
        "vllm",
        "--model",
        "fake/model",
        "-n",
        "3",
        "--taskset.dataset-path",
        str(DEMO_DATA),
        "-o",
        str(out),
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "=== medfact-bench: medfact_bench (1 of 1) ===" in proc.stdout
    assert "vLLM 0.11.0 serving fake/model at http://127.0.0.1:" in proc.stdout

    run = out / "medfact_bench"
    traces = [json.loads(line) for line in (run / "traces.jsonl").read_text().splitlines() if line.strip()]
    assert sorted(t["task"]["data"]["idx"] for t in traces) == [0, 1, 2]
    assert all(not t["errors"] for t in traces)
    # The paper setting's sampling (configs/eval/medfact_bench.toml) reached the server.
    requests = fake.requests()
    assert len(requests) == 3
    assert {r["model"] for r in requests} == {"fake/model"}
    assert {r["temperature"] for r in requests} == {0.0}
    assert {r.get("max_tokens", r.get("max_completion_tokens")) for r in requests} == {1024}

    report = json.loads((run / "report.json").read_text())
    # Every reply scores 2 (SUPPORT); the first 3 demo rows are SUPPORT, CONTRADICT, SUPPORT -> 2 of 3 right.
    assert report["n"] == 3 and report["n_errors"] == 0
    assert report["micro_accuracy"] == pytest.approx(2 / 3)
    assert (run / "report.md").is_file()

    assert (out / "vllm-server.log").read_text().startswith("# medhal: vLLM 0.11.0: ")
    assert fake.argv()[:2] == ["serve", "fake/model"]
    assert not [p for p in fake.pids() if alive(p)], "reproduce left the server running"


@pytest.mark.slow(reason="reproduce end to end while its server process dies mid-run")
def test_reproduce_says_when_the_server_dies_and_stops(fake: Fake, tmp_path: Path) -> None:
    """vLLM's engine dies after the first reply: reproduce must say so and stop the eval, not
    let the remaining rollouts run into their timeouts against a dead endpoint."""
    out = tmp_path / "out"
    env = fake.with_(MEDHAL_ASSETS_DIR=os.environ.get("MEDHAL_SHARED_DATA", ""), FAKE_VLLM_DIE_AFTER="1")
    proc = medhal(
        "reproduce", "medfact-bench", "--backend", "vllm", "--model", "fake/model", "-n", "6", "-c", "1",
        "--taskset.dataset-path", str(DEMO_DATA), "-o", str(out),
        env=env, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    said = [line for line in proc.stderr.splitlines() if "the model server" in line]
    assert len(said) == 1 and "exited with status 1 while medfact_bench ran; stopped" in said[0], proc.stderr
    assert "medhal reproduce: no results for medfact_bench" in proc.stderr
    assert not [p for p in fake.pids() if alive(p)], "reproduce left the server running"


def test_reproduce_sigterm_while_the_server_starts_stops_it(fake: Fake, tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [
            str(BIN / "medhal"),
            "reproduce",
            "medfact-bench",
            "--backend",
            "vllm",
            "--model",
            "fake/model",
            "-o",
            str(tmp_path / "out"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=fake.with_(FAKE_VLLM_MODE="unhealthy"),
        start_new_session=True,
    )
    try:
        fake.wait_started()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=GUARD)
        assert proc.returncode == 130, err
        assert "interrupted; the server is stopped" in err and "Traceback" not in err
        assert not [p for p in fake.pids() if alive(p)]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.mark.slow(reason="the demo end to end through a stand-in vLLM process")
def test_demo_with_the_vllm_backend(fake: Fake, tmp_path: Path) -> None:
    out = tmp_path / "demo"
    proc = medhal(
        "demo",
        "--backend",
        "vllm",
        "--model",
        "fake/model",
        "--env",
        "medfact-bench",
        "-n",
        "2",
        "-o",
        str(out),
        env=fake.env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    traces = [
        json.loads(line)
        for line in (out / "medfact-bench" / "traces.jsonl").read_text().splitlines()
        if line.strip()
    ]
    assert len(traces) == 2 and all(not t["errors"] for t in traces)
    assert {r["model"] for r in fake.requests()} == {"fake/model"}
    assert (out / "vllm-server.log").is_file()
    assert not [p for p in fake.pids() if alive(p)]


# --- scripts/gpu_check.sh --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "overrides",
    [{"FAKE_NVIDIA_SMI_GPUS": "0"}, {"CUDA_VISIBLE_DEVICES": ""}],
    ids=["nvidia-smi-lists-none", "cuda-visible-devices-empty"],
)
def test_gpu_check_refuses_to_run_without_a_gpu(
    fake: Fake, tmp_path: Path, overrides: dict[str, str]
) -> None:
    proc = subprocess.run(
        ["bash", str(ROOT / "scripts" / "gpu_check.sh")],
        check=False,
        capture_output=True,
        text=True,
        env=fake.with_(OUT=str(tmp_path / "out"), **overrides),
        timeout=GUARD,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "this check runs only on a GPU machine" in proc.stderr
    assert not fake.pids_file.exists() and not (tmp_path / "out").exists()
