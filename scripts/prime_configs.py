#!/usr/bin/env python3
"""Write configs/prime/ from configs/eval/: every paper setting in the `[[eval]]` schema that
`prime eval run CONFIG --hosted` (prime 0.18) and `vf-eval CONFIG` (verifiers 0.2.1) read.

Why two folders from one source: no file satisfies both loaders. `uv run eval @ FILE`
(verifiers 0.2.1's v1 CLI) validates the file as its `EvalConfig`, which forbids unknown keys,
so an `[[eval]]` table is an error there; prime's hosted loader needs at least one `[[eval]]`
table and refuses a `timeout` key, which our per-rollout `[timeout] rollout` is. So
configs/eval/ stays the source (it is also what `medhal reproduce` runs) and configs/prime/
is rendered from it here; tests/test_prime.py checks that the rendered files are current and
that prime's and vf-eval's loaders read the same setting from them as `eval @` reads from
the source.

The mapping, key by key (any other key in a source file is an error, so nothing is dropped
unnoticed):

| configs/eval (v1 `eval @`)   | configs/prime (`[[eval]]`)            |
|------------------------------|---------------------------------------|
| `model`                      | `model`                               |
| `num_rollouts`               | `rollouts_per_example`                |
| `num_tasks` (absent: all)    | `num_examples` (-1: all)              |
| `[taskset] id`               | `[[eval]] env_id`                     |
| `[taskset]` other options    | `[eval.env_args]` (`-a/--env-args`)   |
| `[sampling]`                 | `[eval.sampling_args]`                |
| `[timeout] rollout`          | not carried (see the file's header)   |

Usage: uv run python scripts/prime_configs.py [--check]
(`--check` writes nothing and exits 1 when a file is missing, stale or left over.)
"""

from __future__ import annotations

import argparse
import sys
import textwrap
import tomllib
from pathlib import Path
from typing import Any

import tomli_w

from medhal.kit.contract import settings_dirs

ROOT = Path(__file__).resolve().parents[1]
TOP_LEVEL = frozenset({"model", "num_rollouts", "num_tasks", "taskset", "sampling", "timeout"})
TIMEOUT_KEYS = frozenset({"rollout"})


class BadSource(ValueError):
    """A source config this script cannot carry over faithfully."""


def prime_setting(source: dict[str, Any], name: str) -> dict[str, Any]:
    """The `[[eval]]`-schema document for one v1 config (the mapping in the module docstring)."""
    unknown = sorted(set(source) - TOP_LEVEL)
    if unknown:
        raise BadSource(f"{name}: keys {unknown} have no mapping to prime's [[eval]] schema")
    unknown_timeouts = sorted(set(source.get("timeout", {})) - TIMEOUT_KEYS)
    if unknown_timeouts:
        raise BadSource(f"{name}: [timeout] keys {unknown_timeouts} have no mapping")
    taskset = dict(source.get("taskset", {}))
    env_id = taskset.pop("id", None)
    if not isinstance(env_id, str) or not env_id:
        raise BadSource(f"{name}: [taskset] id is missing")
    entry: dict[str, Any] = {"env_id": env_id}
    if taskset:
        entry["env_args"] = taskset
    if source.get("sampling"):
        entry["sampling_args"] = dict(source["sampling"])
    document: dict[str, Any] = {}
    if "model" in source:
        document["model"] = source["model"]
    document["num_examples"] = source.get("num_tasks", -1)
    document["rollouts_per_example"] = source.get("num_rollouts", 1)
    document["eval"] = [entry]
    return document


def description(text: str) -> list[str]:
    """The source's leading comment lines, without its `# Run:` line (the run commands differ)."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        if not line.startswith("# Run:"):
            lines.append(line)
    return lines


def target(path: Path) -> Path:
    """Where the rendering of a configs/eval/<stem>.toml goes: the configs/prime/ beside it."""
    return path.parent.parent / "prime" / path.name


def shown(path: Path) -> str:
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def render(path: Path) -> str:
    """configs/prime/<stem>.toml for configs/eval/<stem>.toml, as text."""
    text = path.read_text(encoding="utf-8")
    try:
        source = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise BadSource(f"{path.name}: not valid TOML: {e}") from e
    rendered = shown(target(path))
    timeout = source.get("timeout", {}).get("rollout")
    header = [
        f"# Generated from {shown(path)} by scripts/prime_configs.py (`make configs`): edit that one.",
        *description(text),
        "# The [[eval]] schema of prime 0.18's hosted loader and of verifiers 0.2.1's vf-eval:",
        f"#   prime eval run {rendered} --hosted -m <hosted model>",
        f"#   vf-eval {rendered}   (add api_base_url and api_key_var for your endpoint)",
    ]
    if timeout is not None:
        header += textwrap.wrap(
            f"Not carried over: [timeout] rollout = {timeout} (seconds per rollout, for `uv run eval`): "
            "prime rejects a timeout key (a hosted run is bounded by --timeout-minutes instead) and "
            "vf-eval would read it as a v0 setting of another meaning.",
            width=100,
            initial_indent="# ",
            subsequent_indent="# ",
        )
    return "\n".join(header) + "\n\n" + tomli_w.dumps(prime_setting(source, path.name))


def sources() -> list[Path]:
    """Every paper setting: the repository's configs/eval/ and each test environment's own."""
    return [path for folder in settings_dirs(ROOT) for path in sorted(folder.glob("*.toml"))]


def expected() -> dict[Path, str]:
    return {target(path): render(path) for path in sources()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if configs/prime is stale"
    )
    ns = parser.parse_args(argv)
    try:
        files = expected()
    except BadSource as e:
        print(f"prime_configs: {e}", file=sys.stderr)
        return 2
    stale = sorted(p for p, text in files.items() if not p.is_file() or p.read_text() != text)
    targets = {target(folder / "x").parent for folder in settings_dirs(ROOT)}
    extra = sorted(p for folder in targets for p in folder.glob("*.toml") if p not in files)
    if ns.check:
        for path in stale:
            print(f"{shown(path)}: missing or stale (run `make configs`)", file=sys.stderr)
        for path in extra:
            print(f"{shown(path)}: has no source in configs/eval/ (remove it)", file=sys.stderr)
        return 1 if stale or extra else 0
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for path in extra:
        path.unlink()
    print(f"configs/prime: {len(files)} files ({len(stale)} rewritten, {len(extra)} removed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
