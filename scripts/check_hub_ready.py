#!/usr/bin/env python3
"""Check that every environment publishes to the Prime Environments Hub on its own.

For each `environments/<name>`: build its wheel alone (`uv build`), install it into a
fresh virtual environment from that wheel, the `medhal` wheel and PyPI (nothing from
this checkout), check the metadata the Hub reads (version, description, tags, a
verifiers requirement with a lower bound >= 0.2.0, the entry point), then run
`eval <id>` there on the environment's bundled demo sample against a scripted local
endpoint, `medhal report` on the result, and the v0 `load_environment()`.

Usage: uv run python scripts/check_hub_ready.py [ENV_DIR ...] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERIFIERS_LOWER = re.compile(r"verifiers\s*>=\s*(\d+)\.(\d+)")


def run(argv: list[str], **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if proc.returncode != 0:
        raise SystemExit(f"FAILED: {' '.join(map(str, argv))}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def check_metadata(env_dir: Path) -> tuple[str, str]:
    project = tomllib.loads((env_dir / "pyproject.toml").read_text())["project"]
    problems = [f"missing project.{k}" for k in ("version", "description", "tags", "readme") if not project.get(k)]
    requirement = next((d for d in project.get("dependencies", []) if d.startswith("verifiers")), "")
    bound = VERIFIERS_LOWER.search(requirement)
    if not bound or (int(bound.group(1)), int(bound.group(2))) < (0, 2):
        problems.append(f"verifiers requirement {requirement!r} needs a lower bound >= 0.2.0 (the Hub's v1 marker)")
    if not (env_dir / "CHANGELOG.md").is_file():
        problems.append("no CHANGELOG.md")
    entry = project.get("entry-points", {}).get("medhal.environments", {})
    if len(entry) != 1:
        problems.append("needs exactly one [project.entry-points.\"medhal.environments\"] entry")
    if problems:
        raise SystemExit(f"{env_dir.name}: " + "; ".join(problems))
    env_id, module = next(iter(entry.items()))
    return env_id, module


PROBE = """
import json, sys, subprocess, importlib
env_id, module, out = sys.argv[1:4]
mod = importlib.import_module(module)
options = getattr(mod, "DEMO_OPTIONS")
args = []
for key, value in options.items():
    args += [f"--taskset.{key}", value if isinstance(value, str) else json.dumps(value)]
print(json.dumps(args))
env = mod.load_environment(**options, max_turns=1)
assert len(env.eval_dataset) > 0, "v0 environment has no rows"
"""


def check_env(env_dir: Path, dist: Path, work: Path) -> str:
    env_id, module = check_metadata(env_dir)
    run(["uv", "build", "--wheel", "--out-dir", str(dist), str(env_dir)])
    wheel = max(dist.glob(f"{module}-*.whl"), key=os.path.getmtime)
    venv = work / f"venv-{module}"
    run(["uv", "venv", "--quiet", "--python", sys.executable, str(venv)])
    python = venv / "bin" / "python"
    medhal_wheel = max(dist.glob("medhal-*.whl"), key=os.path.getmtime)
    run(["uv", "pip", "install", "--quiet", "--python", str(python), str(wheel), str(medhal_wheel)], cwd=work)
    # Outside the checkout, so nothing resolves to the workspace sources.
    args = json.loads(run([str(python), "-c", PROBE, env_id, module, str(work)], cwd=work).stdout.strip().splitlines()[-1])
    endpoint = subprocess.Popen(
        [str(python), "-m", "medhal.scripted_endpoint", "--reply", "I am not sure."],
        stdout=subprocess.PIPE, text=True, cwd=work,
    )
    try:
        base_url = endpoint.stdout.readline().strip()
        out = work / f"run-{module}"
        run([str(venv / "bin" / "eval"), env_id, "--client.base-url", base_url, "--no-push", "--no-rich",
             "-m", "scripted", "-o", str(out), *args], cwd=work, timeout=600)
        rows = [json.loads(l) for l in (out / "traces.jsonl").read_text().splitlines() if l.strip()]
        errors = [r["errors"] for r in rows if r["errors"]]
        if not rows or errors:
            raise SystemExit(f"{env_id}: eval in the fresh venv gave {len(rows)} rows, errors: {errors[:2]}")
        report = run([str(venv / "bin" / "medhal"), "report", str(out)], cwd=work)
        if not (out / "report.json").is_file():
            raise SystemExit(f"{env_id}: medhal report wrote no report.json\n{report.stdout[-2000:]}")
    finally:
        endpoint.terminate()
        endpoint.wait(10)
    return f"{env_id}: wheel {wheel.name} installs alone; eval ran {len(rows)} rollouts; report and v0 load_environment OK"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("envs", nargs="*", type=Path, help="environment folders (default: all)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    ns = parser.parse_args()
    envs = ns.envs or sorted(p.parent for p in (ROOT / "environments").glob("*/pyproject.toml"))
    work = Path(tempfile.mkdtemp(prefix="hubcheck-"))
    dist = work / "dist"
    try:
        run(["uv", "build", "--wheel", "--out-dir", str(dist), str(ROOT)])
        for env_dir in envs:
            print(check_env(env_dir.resolve(), dist, work), flush=True)
    finally:
        if ns.keep:
            print(f"scratch kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
