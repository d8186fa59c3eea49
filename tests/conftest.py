"""Shared test fixtures: real upstream data (when MEDHAL_SHARED_DATA is set), the scripted
OpenAI-compatible endpoint, and a helper that runs `eval` against it. The test environments
(tests/environments/) are staged first, as if installed, for this process and its children."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.running import eval_main
from tests.scripted_endpoint import ScriptedEndpoint
from tests.staging import stage, staged_environments

stage(staged_environments())

SHARED_ENV = "MEDHAL_SHARED_DATA"
BIN = Path(sys.executable).parent
IN_CI = bool(os.environ.get("CI"))
"""CI (`.ci/run` sets CI=1) must run everything: there a skip is a failure."""


def _verifiers_line() -> str:
    from medhal.kit.lines import LINE

    return LINE


collect_ignore = ["test_prime_rl.py"] if _verifiers_line() == "0.2" else []
"""prime-rl's load path (`vf.load_taskset`, task data shipped to an env server) exists from
verifiers 0.3 on: its tests run on the verifiers prime-rl pins (`make test-prime-rl`), not on
the main project's 0.2.1."""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under CI, a skipped test (missing shared data, extra or tool) fails instead: a green
    CI means every test ran. Expected failures (xfail) are not skips."""
    outcome = yield
    report = outcome.get_result()
    if IN_CI and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped under CI (CI is set, so every test must run): {reason}"


SLOW_FIRST = (
    # make test-slow
    "tests/test_release.py",
    "tests/medhal/test_faults.py",
    "tests/medhal/test_harness_faults.py",
    "tests/med_halt/test_validate.py",
    "tests/medhal/test_reply_scaling.py",
    "tests/medhal/test_demo_local_model.py",
    "tests/medhal/test_serve_vllm.py",
    # make test
    "tests/med_halt/test_properties.py",
    "tests/medfact_bench/test_report.py",
    "tests/medhal/test_item_view.py",
    "tests/medfact_bench/test_properties.py",
    "tests/medhal/test_bad_input.py",
)
"""The modules that take longest (`--durations`), in that order. `make test` and `make
test-slow` hand whole modules to the workers (--dist loadscope) in collection order: these go
first, so no worker is left with a long module once the others are done."""


def pytest_collection_modifyitems(session, config, items):
    for item in items:
        for mark in item.iter_markers("slow"):
            if not mark.kwargs.get("reason"):
                raise pytest.UsageError(f"{item.nodeid}: a slow mark needs reason= (why it must be slow)")

    def rank(item) -> int:
        path = item.nodeid.split("::", 1)[0]
        return SLOW_FIRST.index(path) if path in SLOW_FIRST else len(SLOW_FIRST)

    items.sort(key=rank)  # stable: every module keeps its own order


def pytest_terminal_summary(terminalreporter):
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if not hasattr(r, "wasxfail")]
    if skipped and not IN_CI:
        terminalreporter.write_line(
            f"{len(skipped)} tests skipped: set {SHARED_ENV} to a copy of the upstream data (../shared/data) "
            "and install the local extra (`uv sync`) to run them all; CI runs them all."
        )


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """`../shared/data`. Skips when MEDHAL_SHARED_DATA is unset; fails when it is set but wrong
    (CI sets it, and then these tests must run)."""
    root = os.environ.get(SHARED_ENV)
    if not root:
        pytest.skip(f"{SHARED_ENV} is not set")
    path = Path(root)
    assert path.is_dir(), f"{SHARED_ENV}={root} is not a directory"
    return path


@pytest.fixture
def assets_dir(shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Read pinned assets from the offline copies in shared data."""
    monkeypatch.setenv("MEDHAL_ASSETS_DIR", str(shared_data))
    return shared_data


@pytest.fixture
def offline_assets(shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every environment's pinned prompt assets, offline, for this process and its children:
    the real upstream files in shared data (MEDHAL_ASSETS_DIR)."""
    monkeypatch.setenv("MEDHAL_ASSETS_DIR", str(shared_data))
    return shared_data


@pytest.fixture
def endpoint():
    """Factory: `endpoint(script)` starts a scripted endpoint, stopped after the test."""
    started: list[ScriptedEndpoint] = []

    def start(script, **kwargs) -> ScriptedEndpoint:
        ep = ScriptedEndpoint(script, **kwargs).start()
        started.append(ep)
        return ep

    yield start
    for ep in started:
        ep.stop()


def run_eval(
    env_id: str,
    base_url: str,
    out_dir: Path,
    *args: str,
    env: dict | None = None,
    timeout: int = 300,
    process: bool = False,
) -> list[dict]:
    """Run `eval <env_id>` against `base_url` with the environment's default (in-process)
    harness; return the saved trace rows. Fails with eval's output if it exits non-zero.
    `process`: run the `eval` executable in a new process, as users do (the tests of faults,
    interrupts and resumes); by default verifiers' `main` runs in this process
    (`tests.running.eval_main`), which tests the same run without verifiers' start-up."""
    argv = [
        env_id,
        "--client.base-url",
        base_url,
        "--no-push",
        "--no-rich",
        "-m",
        "scripted",
        "-o",
        str(out_dir),
        *args,
    ]
    if process:
        proc = subprocess.run(
            [str(BIN / "eval"), *argv],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, **(env or {})},
        )
    else:
        proc = eval_main(*argv, env=env, timeout=timeout)
    assert proc.returncode == 0, f"eval exited {proc.returncode}:\n{proc.stderr[-4000:]}"
    return [json.loads(line) for line in (out_dir / "traces.jsonl").read_text().splitlines() if line.strip()]


def run_medhal(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "medhal"), *args], capture_output=True, text=True, timeout=timeout)
