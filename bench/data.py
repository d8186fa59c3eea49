"""Inputs for the benchmark scripts, one `Bench` per installed environment.

A `Bench` knows how to write a local dataset file of any size in the benchmark's own
schema, which `eval`/`Taskset` options load it, and a list of raw model replies. Every
installed environment has one, from what the contract says it provides (`medhal.kit.contract`):
its demo rows cycled to the size asked for, the gold and wrong replies of its demo items, its
pure `scoring.score` and its `FULL_SIZE`. Where the shared data (`MEDHAL_SHARED_DATA`) holds an
environment's real rows and model outputs, `REALISTIC` builds the inputs from them instead (or
from text of ours with realistic lengths): what the shared data holds is known here, not in
the environments. Nothing upstream is copied into the repository: files are written to a
temporary directory at run time.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from importlib import import_module
from pathlib import Path
from typing import Any

from common import shared_data

from medhal.kit.datasets import load_rows
from medhal.reports.registry import benchmark_module, installed, package


def _lines(path: Path) -> list[str]:
    """The non-empty lines of a JSONL file (split on newlines only: str.splitlines would also
    split at U+2028 inside a JSON string)."""
    return [line for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


@dataclass
class Bench:
    env_id: str
    module: str
    full_size: int
    """Items in the complete benchmark (the task-building benchmark loads this many)."""
    write_dataset: Callable[[Path, int], dict[str, Any]]
    """(directory, rows) -> the taskset options that load the file(s) written there."""
    replies: Callable[[], list[str]]
    parse_score: Callable[[Any, str], Any]
    """(task data, reply) -> the benchmark's pure reading + grading of one reply under every
    reading convention (`<package>.scoring.score`: what its one metric computes, without
    the trace around it)."""
    available: Callable[[], str | None] = lambda: None
    """None when usable now, else why not (e.g. the shared data is missing)."""


# ---------------------------------------------------------------------------- any environment


def demo_options(env_id: str) -> dict[str, Any]:
    """The environment's demo rows, with its demo prompts where it has a `prompts` option."""
    from medhal.kit.lines import taskset_config_type

    options = dict(benchmark_module(env_id).DEMO_OPTIONS)
    if "prompts" in taskset_config_type(env_id).model_fields:
        options["prompts"] = "demo"
    return options


def _demo_file(env_id: str) -> Path | None:
    path = Path(benchmark_module(env_id).DEMO_OPTIONS.get("dataset_path", ""))
    return path if path.is_file() else None


def _write_demo_rows(env_id: str, directory: Path, n: int) -> dict[str, Any]:
    """n rows, the demo rows cycled, as JSON lines in the environment's own schema."""
    demo = _demo_file(env_id)
    assert demo is not None
    rows = load_rows(None, demo).rows
    path = directory / f"{package(env_id)}-{n}.jsonl"
    if not path.exists():
        with open(path, "w", encoding="utf-8") as f:
            for i in range(n):
                f.write(json.dumps(rows[i % len(rows)], ensure_ascii=False) + "\n")
    return {**demo_options(env_id), "dataset_path": str(path)}


def _demo_replies(env_id: str) -> list[str]:
    """The gold and the wrong reply of every demo item, and an empty reply."""
    from medhal.kit.lines import taskset_class, taskset_config_type

    scoring = import_module(f"{package(env_id)}.scoring")
    config = taskset_config_type(env_id).model_validate({"id": env_id, **demo_options(env_id)})
    tasks = taskset_class(env_id)(config).load()
    return [reply for t in tasks for reply in (scoring.gold_reply(t.data), scoring.wrong_reply(t.data))] + [
        ""
    ]


def _parse_score(env_id: str, data: Any, reply: str) -> Any:
    return import_module(f"{package(env_id)}.scoring").score(data, reply)


def _demo_available(env_id: str) -> str | None:
    return None if _demo_file(env_id) else "its demo rows are not one file (no generic writer)"


def from_contract(env_id: str) -> Bench:
    """The `Bench` every environment has: its demo rows and demo items' replies."""
    return Bench(
        env_id=env_id,
        module=package(env_id),
        full_size=benchmark_module(env_id).FULL_SIZE,
        write_dataset=partial(_write_demo_rows, env_id),
        replies=partial(_demo_replies, env_id),
        parse_score=partial(_parse_score, env_id),
        available=partial(_demo_available, env_id),
    )


# ---------------------------------------------------------------------------- MedFact-Bench


def _medfact_sources() -> tuple[str, list[str], list[str]]:
    """(system prompt, user prompts, raw replies)."""
    root = shared_data()
    if root is not None and (root / "medfact/prompts_example_input_file.jsonl").is_file():
        system = (root / "medfact/system_prompt.txt").read_text(encoding="utf-8")
        prompts = [
            json.loads(line)["user_prompt"]
            for line in _lines(root / "medfact/prompts_example_input_file.jsonl")
        ]
        replies = [
            json.loads(line)["raw_output"] for line in _lines(root / "medfact/medv1_l3b_outputs.jsonl")
        ]
        return system, prompts, replies
    rng = random.Random(0)
    words = [
        "patients",
        "trial",
        "dose",
        "risk",
        "cohort",
        "outcome",
        "placebo",
        "therapy",
        "cells",
        "protein",
        "expression",
        "mortality",
    ]
    text = lambda n: " ".join(rng.choice(words) for _ in range(n))  # noqa: E731
    system = "Rate how strongly the article supports the claim from -2 to 2. " + text(150)
    prompts = [f"Article:\n{text(250)}\n\nClaim:\n{text(15)}" for _ in range(340)]
    replies = [f"<think>{text(120)}</think>\n<score>{rng.randint(-2, 2)}</score>" for _ in range(340)]
    return system, prompts, replies


def medfact_rows(n: int) -> list[dict]:
    from medfact_bench.benchmark import COMPONENTS

    system, prompts, _ = _medfact_sources()
    labels = ("SUPPORT", "NEI", "CONTRADICT")
    names = [name for name, size in COMPONENTS.items() for _ in range(size)]
    rows = []
    for i in range(n):
        prompt = prompts[i % len(prompts)]
        rows.append(
            {
                "dataset": names[i % len(names)],
                "claim": prompt.rsplit("Claim:", 1)[-1].strip()[:300] or f"claim {i}",
                "source": prompt[:1500],
                "label": labels[i % 3],
                "system_prompt": system,
                "user_prompt": prompt,
            }
        )
    return rows


def _write_medfact(directory: Path, n: int) -> dict[str, Any]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = directory / f"medfact-{n}.parquet"
    if not path.exists():
        pq.write_table(pa.Table.from_pylist(medfact_rows(n)), path)
    return {"dataset_path": str(path)}


def _medfact(bench: Bench) -> Bench:
    return replace(
        bench, write_dataset=_write_medfact, replies=lambda: _medfact_sources()[2], available=lambda: None
    )


# ---------------------------------------------------------------------------- Med-HALT


def _halt_samples() -> Path | None:
    root = shared_data()
    return root / "medhalt/samples" if root is not None and (root / "medhalt/samples").is_dir() else None


def _halt_available() -> str | None:
    if _halt_samples() is None:
        return "needs MEDHAL_SHARED_DATA (its prompt files and sample rows are not in the repository)"
    return None


def _halt_rows(name: str) -> list[dict]:
    return [json.loads(line) for line in _lines(_halt_samples() / f"{name}.jsonl")]


def _write_med_halt(directory: Path, n: int) -> dict[str, Any]:
    """n items over the seven sets in the complete benchmark's proportions, each set's
    rows cycled from its real sample rows (full official columns) with fresh ids."""
    from med_halt.benchmark import FULL_SIZE, SETS

    out = directory / f"med-halt-{n}"
    if not out.exists():
        out.mkdir()
        for name, spec in SETS.items():
            rows = _halt_rows(name)
            count = max(1, round(n * spec.size / FULL_SIZE))
            with open(out / f"{name}.jsonl", "w", encoding="utf-8") as f:
                for i in range(count):
                    row = dict(rows[i % len(rows)])
                    row["id"] = f"{row['id']}-{i}"
                    f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return {"subset": "all", "dataset_path": str(out)}


def _halt_replies() -> list[str]:
    """Real deepseek-r1-7b answers (as upstream kept them: the answer dict), written back
    as replies in the three shapes models use: a bare dict, JSON after a reasoning block,
    and a dict followed by an invented next example."""
    from med_halt.benchmark import SETS

    replies = []
    for name in SETS:
        for k, line in enumerate(_lines(_halt_samples() / f"{name}.deepseek-r1-7b.outputs.jsonl")):
            answer = json.loads(line)["output"]
            shape = k % 3
            if shape == 0:
                replies.append(str(answer))
            elif shape == 1:
                replies.append(
                    "<think>\nLet me recall the paper and the options one by one.\n</think>\n"
                    + json.dumps(answer)
                )
            else:
                replies.append(
                    f"{answer}\nStop Here\n\nInput: {{'Question': 'next'}}\nOutput: {{'cop': 'x'}}"
                )
    return replies


def _med_halt(bench: Bench) -> Bench:
    return replace(bench, write_dataset=_write_med_halt, replies=_halt_replies, available=_halt_available)


# ---------------------------------------------------------------------------- MedHallu


def _hallu_source() -> Path | None:
    root = shared_data()
    return (
        root / "medhallu/pqa_labeled.jsonl"
        if root is not None and (root / "medhallu/pqa_labeled.jsonl").is_file()
        else None
    )


def _hallu_available() -> str | None:
    return (
        None
        if _hallu_source() is not None
        else "needs MEDHAL_SHARED_DATA (MedHallu rows and prompt strings are not in the repository)"
    )


def _write_medhallu(directory: Path, n: int) -> dict[str, Any]:
    """ceil(n / 2) rows (two items each) cycled from the real pqa_labeled rows."""
    rows = [json.loads(line) for line in _lines(_hallu_source())]
    path = directory / f"medhallu-{n}.jsonl"
    if not path.exists():
        with open(path, "w", encoding="utf-8") as f:
            for i in range((n + 1) // 2):
                f.write(json.dumps(rows[i % len(rows)], ensure_ascii=False) + "\n")
    return {"dataset_path": str(path)}


def _hallu_replies() -> list[str]:
    """No real model outputs are available offline: the shapes the readers document."""
    return [
        "1",
        "0",
        "2",
        "Answer: 1",
        "**0**",
        "1 (hallucinated)",
        "<think>\nThe answer claims a mechanism the abstract does not report.\n</think>\n1",
        "The answer is factual.",
        "This answer is not hallucinated; it matches the context.",
        "I am not sure.",
        "Verdict: 0",
        "After checking each claim, my final answer is 1",
    ]


def _medhallu(bench: Bench) -> Bench:
    return replace(bench, write_dataset=_write_medhallu, replies=_hallu_replies, available=_hallu_available)


REALISTIC: dict[str, Callable[[Bench], Bench]] = {
    "medfact-bench": _medfact,
    "med-halt": _med_halt,
    "medhallu": _medhallu,
}
"""Environments whose real rows and model outputs the shared data holds (or, for MedFact-Bench,
whose inputs are written at realistic lengths without it): their inputs replace the demo's
where they are available."""


def bench_of(env_id: str) -> Bench:
    """The environment's realistic inputs where they are available now, else its demo's."""
    demo = from_contract(env_id)
    realistic = REALISTIC.get(env_id, lambda b: b)(demo)
    return realistic if realistic.available() is None or demo.available() is not None else demo


BENCHES: dict[str, Bench] = {env_id: bench_of(env_id) for env_id in installed()}
"""Every installed environment's `Bench` (the test environments too, when staged)."""


def reasoning_text(chars: int) -> str:
    """About `chars` characters of a reasoning model's thinking: the real reasoning blocks
    of the Med-V1 outputs in shared data, one after another (real prose, with its
    punctuation and quotes), or sentences of ours without it."""
    blocks: list[str] = []
    for reply in _medfact_sources()[2]:
        if "<think>" in reply and "</think>" in reply:
            blocks.append(reply.split("<think>", 1)[1].split("</think>", 1)[0].strip())
    if not blocks:
        blocks = ["Let me weigh each option against what the question states, one by one, before answering."]
    text, n = [], 0
    while n < chars:
        block = blocks[len(text) % len(blocks)]
        text.append(block)
        n += len(block) + 2
    return "\n\n".join(text)[:chars]


REASONING_TOKENS = 2000
REASONING_CHARS = 4 * REASONING_TOKENS
"""A reasoning block of about 2,000 tokens (about 4 characters per token in English prose)."""


def with_reasoning(replies: list[str], chars: int = REASONING_CHARS) -> list[str]:
    """Each reply with a reasoning block of `chars` characters in front (its own reasoning
    block, if any, replaced): what a reasoning model returns."""
    thinking = reasoning_text(chars)
    answers = [reply.split("</think>", 1)[1] if "</think>" in reply else reply for reply in replies]
    return [f"<think>\n{thinking}\n</think>\n{answer.strip()}" for answer in answers]


def asset_env() -> dict[str, str]:
    """Environment variables that let every benchmark read its pinned prompt assets offline:
    `MEDHAL_ASSETS_DIR` pointed at shared data, which holds them under their asset names
    (Med-HALT's prompt files, the MedHallu authors' script), checked against the pinned
    hashes as always. Also applied to this process."""
    root = shared_data()
    if root is None:
        return {}
    env = {"MEDHAL_ASSETS_DIR": str(root)}
    os.environ.update(env)
    return env


def usable(names: list[str] | None = None) -> list[Bench]:
    chosen = [BENCHES[n] for n in names] if names else list(BENCHES.values())
    out = []
    for bench in chosen:
        why = bench.available()
        if why is None:
            out.append(bench)
        else:
            print(f"skipping {bench.env_id}: {why}")
    return out
