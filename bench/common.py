"""Shared helpers for the benchmark scripts: machine description, tables, JSON output,
child processes measured with their CPU time and peak memory, and realistic data.

Every script prints a Markdown table and writes a JSON file (default: `reports/bench/`,
the figures `reports/performance.md` is built from; `--out` elsewhere for trial runs).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DEFAULT_OUT = ROOT / "reports" / "bench"
QUICK_OUT = ROOT / "outputs" / "bench"
"""Smoke-test (`--quick`) figures go here (git-ignored), never next to the published ones."""
SHARED_ENV = "MEDHAL_SHARED_DATA"


# ---------------------------------------------------------------------------- machine


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def machine() -> dict[str, Any]:
    import verifiers

    return {
        "nproc": os.cpu_count(),
        "cpu": _cpu_model(),
        "memory_gib": _memory_gib(),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "verifiers": verifiers.__version__,
        "commit": _git_commit(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
    }


# ---------------------------------------------------------------------------- output


def fmt(value: Any) -> str:
    if isinstance(value, float):
        if value == 0:
            return "0"
        if abs(value) >= 100:
            return f"{value:,.0f}"
        if abs(value) >= 1:
            return f"{value:.2f}"
        return f"{value:.3g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def out_dir(requested: Path | None, quick: bool) -> Path:
    return requested if requested is not None else (QUICK_OUT if quick else DEFAULT_OUT)


def add_out_option(parser: argparse.ArgumentParser) -> None:
    """`--out DIR`, where the script's JSON goes (`out_dir`)."""
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="directory for the JSON (default reports/bench, or outputs/bench with --quick)",
    )


def write_json(out_dir: Path, name: str, payload: dict[str, Any]) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.json"
    path.write_text(json.dumps({"machine": machine(), **payload}, indent=1, ensure_ascii=False) + "\n")
    return path


def shared_data() -> Path | None:
    root = os.environ.get(SHARED_ENV)
    return Path(root) if root and Path(root).is_dir() else None


# ---------------------------------------------------------------------------- processes


@dataclass
class Measured:
    returncode: int
    wall_s: float
    cpu_s: float
    """User + system CPU of the process and every descendant it waited for."""
    max_rss_mib: float
    """Peak resident memory of the command's own process (VmHWM, polled from /proc while it
    runs; `wait4`'s figure would include the memory of the forking parent)."""
    stdout: str
    stderr: str


def run_measured(
    argv: list[str],
    timeout: float = 900,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    samples: list[tuple[float, float]] | None = None,
) -> Measured:
    """Run a command to completion and return its wall time, CPU time and peak memory
    (from `wait4`, so it covers the whole process tree, e.g. `uv` programs a harness starts).
    With `samples`, append (time.time(), CPU seconds so far of the process and its reaped
    children) about every 10 ms while it runs, to measure the CPU of a phase of the run."""
    out_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"medhal-bench-{os.getpid()}-{time.time_ns()}"
    with open(f"{out_path}.out", "w+b") as out, open(f"{out_path}.err", "w+b") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env={**os.environ, **(env or {})}, cwd=cwd)
        deadline = start + timeout
        hwm_kib = 0
        while True:
            try:
                for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        hwm_kib = max(hwm_kib, int(line.split()[1]))
            except (OSError, ValueError):
                pass
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            if samples is not None:
                with contextlib.suppress(OSError, IndexError, ValueError):
                    samples.append((time.time(), process_cpu_s(proc.pid, children=True)))
            time.sleep(0.005)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    for suffix in (".out", ".err"):
        Path(f"{out_path}{suffix}").unlink(missing_ok=True)
    return Measured(proc.returncode, wall, usage.ru_utime + usage.ru_stime, hwm_kib / 1024, stdout, stderr)


def process_cpu_s(pid: int, children: bool = False) -> float:
    """CPU seconds (user + system, all threads) a running process has used so far, from
    /proc; with `children`, plus that of the children it has already waited for."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    if children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / os.sysconf("SC_CLK_TCK")


def cpu_between(samples: list[tuple[float, float]], start: float, end: float) -> float:
    """CPU seconds used between two wall-clock times, interpolated from `run_measured` samples."""

    def at(t: float) -> float:
        for (t0, c0), (t1, c1) in itertools.pairwise(samples):
            if t0 <= t <= t1:
                return c0 + (c1 - c0) * ((t - t0) / (t1 - t0) if t1 > t0 else 0.0)
        return samples[0][1] if t < samples[0][0] else samples[-1][1]

    return at(end) - at(start)


class EndpointProcess:
    """The scripted endpoint (`tests/scripted_endpoint.py`, run as a program) in its own
    process, so its CPU is not charged to `eval`: one reply for every request, or
    `--replies FILE [--fail-every K]` in `args`."""

    def __init__(self, reply: str | None = None, *args: str) -> None:
        self.args = ["--reply", reply] if reply is not None else list(args)
        self.proc: subprocess.Popen | None = None
        self.base_url = ""

    def __enter__(self) -> EndpointProcess:
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "tests" / "scripted_endpoint.py"), *self.args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=ROOT,
        )
        line = self.proc.stdout.readline().strip()
        if not line.startswith("http://127.0.0.1:"):
            self.proc.kill()
            raise RuntimeError(f"scripted endpoint did not start (printed {line!r})")
        self.base_url = line
        return self

    def cpu_s(self) -> float:
        return process_cpu_s(self.proc.pid)

    def __exit__(self, *exc) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def long_replies_table(long: dict[str, dict[str, Any]]) -> str:
    """`bench/tasks_and_scoring.py`'s long replies, per benchmark: `Task.score` on the plain
    replies, the same with a 2,000-token reasoning block, their ratio, the worst reply, and a
    1 MB reply against a 10 KB one."""
    return table(
        [
            "benchmark",
            "Task.score us (plain)",
            "us with 2,000-token reasoning",
            "ratio",
            "worst us",
            "1 MB reply ms",
            "1 MB / 10 KB",
        ],
        [
            [
                name,
                v["plain_task_score_us"],
                v["reasoning_task_score_us"],
                v["reasoning_over_plain"],
                v["reasoning_task_score_worst_us"],
                v["task_score_1mb_ms"],
                v["ratio_1mb_over_10kb"],
            ]
            for name, v in long.items()
        ],
    )
