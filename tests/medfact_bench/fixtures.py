"""MedFact-Bench rows and predictions for tests, in the Hugging Face schema (dataset, claim,
source, label, system_prompt, user_prompt). Every row is our own text, never an upstream row.

The system prompt is read from the shared data when available (it is upstream text and
not committed); otherwise a stand-in of ours is used, since scoring never reads it.

The component names and labels are written out here (not imported from the package under
test), so a renamed component or label in the package fails the tests instead of moving
with them.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterable
from pathlib import Path

COMPONENTS = ["scifact", "healthver", "medaesqa", "pubmedqa-fact", "bioasq-fact"]
LABELS = ["SUPPORT", "NEI", "CONTRADICT"]
FULL_SIZES = {"scifact": 340, "healthver": 903, "medaesqa": 9106, "pubmedqa-fact": 500, "bioasq-fact": 3425}
"""Rows per component of the released benchmark (dataset card); they add up to 14,274."""


def system_prompt() -> str:
    shared = os.environ.get("MEDHAL_SHARED_DATA")
    if shared and (Path(shared) / "medfact/system_prompt.txt").is_file():
        return (Path(shared) / "medfact/system_prompt.txt").read_text(encoding="utf-8")
    return (
        "Rate how strongly the article supports the claim from -2 to 2.\n"
        "<think>...</think>\n<score>...</score>"
    )


def row(i: int, component: str, label: str, prompt: str) -> dict:
    """Row `i`: a claim and an article of ours, the user prompt in the upstream layout
    (`Article:\\n…\\n\\nClaim:\\n…`) led by a marker scripted endpoints recognise the item by."""
    claim = f"Drug {i} lowers blood pressure."
    source = f"Trial {i} found an effect of size {i}."
    return {
        "dataset": component,
        "claim": claim,
        "source": source,
        "label": label,
        "system_prompt": prompt,
        "user_prompt": f"[item {i}]\nArticle:\n{source}\n\nClaim:\n{claim}",
    }


def rows(n: int = 20) -> list[dict]:
    """`n` rows; row i is of component i % 5 and gold label i % 3."""
    prompt = system_prompt()
    return [row(i, COMPONENTS[i % 5], LABELS[i % 3], prompt) for i in range(n)]


def rows_of(items: Iterable[tuple[str, str]], prompt: str | None = None) -> list[dict]:
    """One row per (component, label), in order."""
    prompt = system_prompt() if prompt is None else prompt
    return [row(i, component, label, prompt) for i, (component, label) in enumerate(items)]


def write_predictions(path: Path, replies: dict[int, str]) -> Path:
    """A `medhal score` predictions file: one `{"idx", "reply"}` line per reply."""
    path.write_text(
        "".join(json.dumps({"idx": i, "reply": r}) + "\n" for i, r in replies.items()), encoding="utf-8"
    )
    return path


def medhal_in_process(*args: str) -> subprocess.CompletedProcess:
    """`medhal ARGS` run through its `main` in this process (see `tests.running.medhal_main`)."""
    from tests.running import medhal_main

    return medhal_main(*args)


DEMO_ROWS = (
    Path(__file__).parents[2]
    / "environments"
    / "medfact_bench"
    / "medfact_bench"
    / "demo"
    / "medfact_demo.jsonl"
)
"""The six demo rows shipped with the environment (written by us)."""


def score_demo(replies: list[str], out: Path, *args: str) -> Path:
    """`medhal score medfact-bench` (in this process) of the demo rows answered with
    `replies` in idx order: the run directory `out` (traces and report)."""
    predictions = write_predictions(out.parent / f"{out.name}-predictions.jsonl", dict(enumerate(replies)))
    proc = medhal_in_process(
        "score",
        "medfact-bench",
        "--predictions",
        str(predictions),
        "-o",
        str(out),
        "--dataset-path",
        str(DEMO_ROWS),
        *args,
    )
    assert proc.returncode == 0, proc.stderr
    return out


def scripted_rollouts(out: Path, replies: list[str], rollouts: int) -> list[dict]:
    """`eval medfact-bench -r rollouts` on the demo rows against a scripted endpoint that
    answers `replies` in turn, over and over; the saved trace rows."""
    import itertools

    from tests.conftest import run_eval
    from tests.scripted_endpoint import ScriptedEndpoint

    answers = itertools.cycle(replies)
    with ScriptedEndpoint(lambda body, number: next(answers)) as endpoint:
        return run_eval(
            "medfact-bench",
            endpoint.base_url,
            out,
            "--taskset.dataset-path",
            str(DEMO_ROWS),
            "-r",
            str(rollouts),
        )
