"""Scoring fingerprints: a score for the same reply changes only with a minor version bump.

RELEASING.md's policy: an environment's minor version changes whenever a score for the
same reply can change (reading, grading, reward, prompt, dataset revision). This test
keeps, per environment, a fingerprint of that behaviour in `tests/scoring_fingerprints.json`
next to the version it was recorded at, and fails (saying what to do) when the behaviour
changed but the version did not.

The fingerprint has three parts:
- `replies`: for each reply (a fixed list written here, the labelled corpus
  `tests/<package>/replies.jsonl` when present, and every demo item's gold and wrong
  reply), a hash of what `scoring.score` makes of it on every demo item under every
  reading convention (metrics and readings). Keyed by the reply's hash, so a growing
  corpus adds entries without touching the others, and a change names the replies.
- `demo`: each demo item's prompt (the environment's demo prompts on its demo rows) and
  the reward and metrics its gold and wrong replies earn through the task itself
  (`medhal.kit.task.score_reply`), under each `parser` option.
- `declaration`: the pinned dataset revisions, pinned prompt assets (url, sha256) and the
  taskset option defaults.

Re-record after a bump with `make fingerprints` (`python -m tests.test_scoring_fingerprint
--update`), which refuses to record changed scores at an unchanged minor version.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import hashlib
import importlib
import json
import re
import sys
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
FINGERPRINTS = Path(__file__).with_name("scoring_fingerprints.json")
CONVENTIONS = ("medhal", "authors", "strict")
SHORT = 16
"""Hex digits kept of each reply's key and outcome hash (64 bits: no accidental collision)."""

FIXED_REPLIES: tuple[str | None, ...] = (
    # Written by us to exercise every reader's shapes; the same list for every environment
    # (a reply in another benchmark's format is read as INVALID, which is fingerprinted too).
    None,
    "",
    "   ",
    "0",
    "1",
    "2",
    " 1 \n",
    "3",
    "-1",
    "\\boxed{1}",
    "$\\boxed{0}$",
    "<think>It matches the abstract.</think>0",
    "<think>Reasoning that never closes 1",
    "<think>first</think><think>second</think>1",
    "Answer: 1",
    "Final answer: 0",
    "The answer is hallucinated.",
    "factual",
    "Hallucinated",
    "Not sure.",
    "I am not sure, 2",
    "This is not hallucinated.",
    "non-factual",
    "pass",
    "0 or 1",
    "**1**",
    "<score>2</score>",
    "<score>-2</score>",
    "<think>weighing it</think>\n<score>-1</score>",
    "<think>x</think><score>1</score>",
    "<score> 0 </score> then <score>2</score>",
    "<score>3</score>",
    "<score>1.5</score>",
    "<score>two</score>",
    "score: 1",
    "Score = -1",
    "SUPPORT",
    "CONTRADICT",
    "The article contradicts the claim.",
    "<score>1</score",
    "\\boxed{-2}",
    "{'cop': 'A', 'cop_index': 0}",
    '{"cop": "B", "cop_index": 1, "why_correct": "because"}',
    '```json\n{"cop": "C", "cop_index": 2}\n```',
    "<think>hmm</think>\n{'cop': 'D', 'cop_index': 3}",
    "{'cop': 'it's the second one', 'cop_index': 1}",
    "{'cop': None, 'cop_index': None}",
    "{'cop': ''}",
    "cop: 'A'",
    "{'cop_index': 0}",
    "{'cop': 'A'} Stop Here Input: {'cop': 'B'}",
    "{'cop': 'I do not know'}",
    "I do not know",
    "I don't know the answer to this question.",
    "None of the above",
    "{'is_answer_correct': 'yes', 'answer': 'A', 'why_correct': 'x'}",
    "{'is_answer_correct': 'no', 'answer': 'B', 'why_correct': 'x'}",
    "{'is_answer_correct': 'maybe'}",
    "{'is_paper_exists': 'No', 'Title': 'Unknown'}",
    "{'is_paper_exists': 'Yes', 'Title': 'A study of walking'}",
    "{'is_paper_exists': 'No', 'url': 'Unknown'}",
    "{'is_paper_exists': 'Yes', 'url': 'https://pubmed.ncbi.nlm.nih.gov/12345678/'}",
    "{'Title': 'unknown.'}",
    "Title: Unknown",
    "{'cop': 'A', 'cop_index': 0",
    "{{'cop': 'A'}}",
)


@dataclass(frozen=True)
class Environment:
    name: str
    version: str
    directory: Path
    module: str
    env_id: str

    @property
    def changelog_version(self) -> str | None:
        text = (self.directory / "CHANGELOG.md").read_text(encoding="utf-8")
        match = re.search(r"^## \[?v?(\d+\.\d+\.\d+)", text, re.MULTILINE)
        return match.group(1) if match else None


def environments() -> list[Environment]:
    found = []
    for pyproject in sorted((ROOT / "environments").glob("*/pyproject.toml")):
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        module = project["name"].replace("-", "_")
        env_id = next(iter(project["entry-points"]["medhal.environments"]))
        found.append(Environment(project["name"], project["version"], pyproject.parent, module, env_id))
    return found


def minor(version: str) -> tuple[int, int]:
    major, minor_, _ = version.split(".", 2)
    return int(major), int(minor_)


# ---------------------------------------------------------------------------- computing


def digest(value: Any) -> str:
    return hashlib.sha256(canonical(value).encode()).hexdigest()


def canonical(value: Any) -> str:
    """JSON with sorted keys; sets sorted, anything else JSON cannot hold by its repr (the
    readers return only builtin values, whose repr is stable)."""

    def default(obj: Any) -> Any:
        if isinstance(obj, (set, frozenset)):
            return sorted(map(repr, obj))
        if hasattr(obj, "model_dump"):
            return obj.model_dump(mode="json")
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            return dataclasses.asdict(obj)
        return repr(obj)

    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=default)


def reply_key(reply: str | None) -> str:
    return digest(reply)[:SHORT]


def corpus_replies(env: Environment) -> list[str | None]:
    """The labelled reply corpus `tests/<package>/replies.jsonl` (its `reply` fields), if any."""
    path = ROOT / "tests" / env.module / "replies.jsonl"
    if not path.is_file():
        return []
    replies: list[str | None] = []
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}, line {line_no}: not JSON ({e.msg})") from e
        if not isinstance(record, dict) or not isinstance(record.get("reply"), (str, type(None))):
            raise ValueError(f"{path}, line {line_no}: field 'reply' must be a string or null")
        replies.append(record["reply"])
    return replies


def demo_tasks(env: Environment, parser: str) -> list:
    """The environment's demo items, with its demo prompts where it has them."""
    from medhal.kit.lines import taskset_class, taskset_config_type

    benchmark = importlib.import_module(f"{env.module}.benchmark")
    options = dict(benchmark.DEMO_OPTIONS)
    config_type = taskset_config_type(env.env_id)
    if "prompts" in config_type.model_fields:
        options["prompts"] = "demo"
    options["parser"] = parser
    return taskset_class(env.env_id)(config_type.model_validate({"id": env.env_id, **options})).select()


def pinned(value: Any, found: dict[str, list[Any]], depth: int = 0) -> None:
    """Collect the pinned datasets and prompt assets a benchmark declaration holds."""
    from medhal.kit.assets import Asset
    from medhal.kit.datasets import HubDataset

    if isinstance(value, HubDataset):
        found["datasets"].append(dataclasses.asdict(value))
    elif isinstance(value, Asset):
        found["assets"].append({"name": value.name, "url": value.url, "sha256": value.sha256})
    elif depth < 3 and isinstance(value, dict):
        for item in value.values():
            pinned(item, found, depth + 1)
    elif depth < 3 and isinstance(value, (list, tuple)):
        for item in value:
            pinned(item, found, depth + 1)
    elif depth < 3 and dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            pinned(getattr(value, field.name), found, depth + 1)


def declaration(env: Environment) -> dict[str, Any]:
    from medhal.kit.lines import taskset_config_type

    benchmark = importlib.import_module(f"{env.module}.benchmark")
    found: dict[str, list[Any]] = {"datasets": [], "assets": []}
    for value in vars(benchmark).values():
        pinned(value, found)
    config_type = taskset_config_type(env.env_id)
    defaults = {
        name: field.default
        for name, field in config_type.model_fields.items()
        if name not in framework_fields(config_type)
    }
    return {
        "datasets": sorted(found["datasets"], key=canonical),
        "assets": sorted(found["assets"], key=canonical),
        "defaults": json.loads(canonical(defaults)),
    }


def framework_fields(model: type) -> set[str]:
    """The fields `model` inherits from verifiers (its `TaskData` or `TasksetConfig`), less
    the ones a task's scoring reads: they differ between verifiers lines (0.4 adds sandbox,
    network and artifact fields) and describe the framework, not the benchmark, so the
    fingerprint is the same on both lines (tests/verifiers04 runs it on 0.4)."""
    import verifiers.v1 as vf

    if issubclass(model, vf.TaskData):
        return set(vf.TaskData.model_fields) - {"idx", "prompt", "system_prompt"}
    return set(vf.TasksetConfig.model_fields)


def weighted(rewards: dict[str, Any]) -> dict[str, float]:
    """Rewards by name as numbers: 0.2 records the weighted number, 0.4 a `Reward`."""
    return {name: getattr(value, "value", value) for name, value in rewards.items()}


async def demo_outcomes(env: Environment, scoring: Any) -> list[Any]:
    from medhal.kit.task import prompt_messages, score_reply

    outcomes = []
    for parser in CONVENTIONS:
        for task in demo_tasks(env, parser):
            excluded = {"provenance", "selection", *framework_fields(type(task.data))}
            item: dict[str, Any] = {
                "prompt": [m.model_dump(mode="json", exclude_none=True) for m in prompt_messages(task.data)],
                "data": task.data.model_dump(mode="json", exclude=excluded),
            }
            for kind in ("gold_reply", "wrong_reply"):
                trace = await score_reply(task, getattr(scoring, kind)(task.data))
                item[kind] = {"rewards": weighted(trace.rewards), "metrics": dict(trace.metrics)}
            outcomes.append(item)
    return outcomes


@cache
def fingerprint(env: Environment) -> dict[str, Any]:
    """The environment's fingerprint at its current version (see the module docstring)."""
    scoring = importlib.import_module(f"{env.module}.scoring")
    items = [task.data for task in demo_tasks(env, "medhal")]
    replies = [*FIXED_REPLIES, *corpus_replies(env)]
    for item in items:
        replies += [scoring.gold_reply(item), scoring.wrong_reply(item)]
    outcomes: dict[str, str] = {}
    for reply in replies:
        scored = []
        for item in items:
            for convention in CONVENTIONS:
                result = scoring.score(item.model_copy(update={"parser": convention}), reply)
                scored.append({"metrics": result.metrics, "info": result.info})
        outcomes[reply_key(reply)] = digest(scored)[:SHORT]
    record = {
        "declaration": digest(declaration(env)),
        "demo": digest(asyncio.run(demo_outcomes(env, scoring))),
        "replies": dict(sorted(outcomes.items())),
    }
    return {"version": env.version, "sha256": digest(record), **record}


def replies_by_key(env: Environment) -> dict[str, str | None]:
    return {reply_key(r): r for r in [*FIXED_REPLIES, *corpus_replies(env)]}


# ---------------------------------------------------------------------------- comparing


def changes(stored: dict[str, Any], current: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(what scores differently, what was only added or removed) between two fingerprints."""
    changed = [part for part in ("declaration", "demo") if stored.get(part) != current[part]]
    old, new = stored.get("replies", {}), current["replies"]
    changed += [f"reply {key}" for key in sorted(old.keys() & new.keys()) if old[key] != new[key]]
    moved = [f"reply {key} added" for key in sorted(new.keys() - old.keys())]
    moved += [f"reply {key} removed" for key in sorted(old.keys() - new.keys())]
    return changed, moved


def describe(env: Environment, keys: list[str]) -> str:
    known = replies_by_key(env)
    lines = []
    for key in keys[:5]:
        reply_id = key.split()[1] if key.startswith("reply ") else ""
        lines.append(f"{key}: {known[reply_id]!r}"[:160] if reply_id in known else key)
    more = f" (and {len(keys) - 5} more)" if len(keys) > 5 else ""
    return "; ".join(lines) + more


def problem(env: Environment, stored: dict[str, Any] | None, current: dict[str, Any]) -> str | None:
    """Why the recorded fingerprint does not hold for `env` now, with what to do; None when it holds."""
    pyproject = env.directory.relative_to(ROOT) / "pyproject.toml"
    changelog = env.directory.relative_to(ROOT) / "CHANGELOG.md"
    if stored is None:
        return (
            f"{env.name}: no fingerprint recorded in {FINGERPRINTS.name}; record it with `make fingerprints`"
        )
    changed, moved = changes(stored, current)
    if stored["version"] != env.version and minor(env.version) < minor(stored["version"]):
        return f"{env.name}: version {env.version} is older than the fingerprint's {stored['version']}"
    if changed:
        if minor(env.version) == minor(stored["version"]):
            major, minor_ = minor(env.version)
            bump = f"{major}.{minor_ + 1}.0"
            return (
                f"{env.name}: scores for the same replies changed ({describe(env, changed)}) "
                f"but the version is still {env.version}. If the change is meant, bump `version` in "
                f"{pyproject} to {bump}, add a `## {bump}` entry "
                f"to {changelog} saying what scores differently, and run `make fingerprints` (RELEASING.md). "
                "If it is not meant, it is a bug in the reading or scoring code. (Only while "
                f"{env.version} is unreleased, i.e. has no tag {env.name}-v{env.version}: "
                "`uv run python -m tests.test_scoring_fingerprint --update --unreleased` records it as is.)"
            )
        if env.changelog_version != env.version:
            return (
                f"{env.name}: version bumped to {env.version}, but the top entry of {changelog} "
                f"is {env.changelog_version}: add `## {env.version}`"
            )
        return (
            f"{env.name}: scores changed with the bump to {env.version}: record them with `make fingerprints`"
        )
    if moved:
        return (
            f"{env.name}: the reply set changed ({describe(env, moved)}), "
            "no existing reply scores differently: "
            "record it with `make fingerprints` (no version bump needed)"
        )
    if minor(env.version) != minor(stored["version"]):
        return (
            f"{env.name}: the fingerprint was recorded at {stored['version']}, "
            f"the version is now {env.version}: run `make fingerprints`"
        )
    return None


def load() -> dict[str, Any]:
    return json.loads(FINGERPRINTS.read_text(encoding="utf-8")) if FINGERPRINTS.is_file() else {}


# -------------------------------------------------------------------------------- tests


@pytest.mark.parametrize("env", environments(), ids=lambda e: e.name)
def test_scoring_fingerprint_matches_the_version(env: Environment) -> None:
    message = problem(env, load().get(env.name), fingerprint(env))
    assert message is None, message


@pytest.mark.slow(reason="every environment's fingerprint again, in a new interpreter")
def test_fingerprint_is_stable_across_processes() -> None:
    """Another interpreter, with another string-hash seed, gives the same fingerprints: they
    depend on behaviour only, not on set order or object addresses."""
    import os
    import subprocess

    code = (
        "import json; from tests.test_scoring_fingerprint import *; "
        "print(json.dumps({e.name: fingerprint(e)['sha256'] for e in environments()}))"
    )
    seed = "1" if os.environ.get("PYTHONHASHSEED") != "1" else "2"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONHASHSEED": seed},
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    there = json.loads(proc.stdout.strip().splitlines()[-1])
    assert there == {env.name: fingerprint(env)["sha256"] for env in environments()}


def test_a_changed_score_without_a_bump_is_refused() -> None:
    """The rule itself, on made-up records: one reply's outcome differs."""
    env = Environment("med-halt", "0.2.0", ROOT / "environments" / "med_halt", "med_halt", "med-halt")
    key = reply_key("1")
    stored = {"version": "0.2.0", "declaration": "d", "demo": "m", "replies": {key: "aaaa"}}
    current = {"version": "0.2.0", "sha256": "x", "declaration": "d", "demo": "m", "replies": {key: "bbbb"}}
    message = problem(env, stored, current)
    assert message is not None and "still 0.2.0" in message and "0.3.0" in message and "'1'" in message
    # A patch bump is not enough for a changed score.
    assert "0.3.0" in problem(dataclasses.replace(env, version="0.2.1"), stored, current)
    # Same scores, a reply added to the corpus: re-record, no bump.
    grown = {**current, "replies": {key: "aaaa", reply_key("2"): "cccc"}}
    assert "no version bump needed" in problem(env, stored, grown)
    # Same everything: nothing to do; a later patch release keeps the record.
    same = {**current, "replies": {key: "aaaa"}}
    assert problem(env, stored, same) is None
    assert problem(dataclasses.replace(env, version="0.2.1"), stored, same) is None


# ------------------------------------------------------------------------------- update


def released(env: Environment) -> bool:
    """Whether the environment's current version has a release tag (unknown outside a git
    checkout: then it counts as released)."""
    import subprocess

    tag = f"{env.name}-v{env.version}"
    proc = subprocess.run(
        ["git", "tag", "--list", tag], capture_output=True, text=True, cwd=ROOT, check=False
    )
    return proc.returncode != 0 or proc.stdout.strip() == tag


def update(unreleased: bool = False) -> int:
    """Record every environment's fingerprint, refusing changed scores at an unchanged minor
    version or without a CHANGELOG entry for the version. With `unreleased`, a version
    without a release tag may still absorb changes (nobody has scores from it yet)."""
    records = load()
    refused = []
    for env in environments():
        current = fingerprint(env)
        stored = records.get(env.name)
        changed, _ = changes(stored, current) if stored else ([], [])
        still_open = (
            unreleased and stored is not None and stored["version"] == env.version and not released(env)
        )
        bumped = stored is not None and minor(env.version) > minor(stored["version"])
        if changed and not still_open and (not bumped or env.changelog_version != env.version):
            refused.append(
                problem(env, stored, current) or f"{env.name}: scores changed; bump the minor version first"
            )
            continue
        records[env.name] = current
        print(f"{env.name} {env.version}: {current['sha256'][:12]} ({len(current['replies'])} replies)")
    FINGERPRINTS.write_text(json.dumps(records, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    for line in refused:
        print(f"not recorded: {line}", file=sys.stderr)
    return 1 if refused else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description="Record the scoring fingerprints (tests/scoring_fingerprints.json)."
    )
    parser.add_argument("--update", action="store_true", required=True)
    parser.add_argument(
        "--unreleased",
        action="store_true",
        help="accept changed scores at a version that has no release tag yet",
    )
    ns = parser.parse_args()
    sys.exit(update(ns.unreleased))
