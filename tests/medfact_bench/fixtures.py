"""MedFact-Bench rows and predictions for tests, in the Hugging Face schema (dataset, claim,
source, label, system_prompt, user_prompt). Every row is our own text, never an upstream row.

The system prompt is read from the shared data when available (it is upstream text and
not committed); otherwise a stand-in of ours is used, since scoring never reads it.

The component names and labels are written out here (not imported from the package under
test), so a renamed component or label in the package fails the tests instead of moving
with them.
"""

from __future__ import annotations

import contextlib
import io
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
    """`medhal ARGS` run through its `main` in this process (argument parsing, error
    handling and exit code included): what the installed command does, without paying
    its start-up for every case."""
    from medhal.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
        else:
            code = 0
    return subprocess.CompletedProcess(["medhal", *args], code, out.getvalue(), err.getvalue())
