"""Shared helpers for the MedHallu tests: the authors' real script (from shared data), a
script of the authors' shape holding our own text, rows we write, and loading/scoring.

The authors' detection script is in shared data under its asset name, so
`MEDHAL_ASSETS_DIR=<shared data>` (the `assets_dir` fixture of tests/conftest.py) serves
the pinned prompt with its real bytes. `prompt_script(INVENTED)` writes a script of the
same shape with our own words: tests of the extractor on text we control use it, and ONE
test supplies it as the asset through the `MEDHAL_ASSET_SHA256` hash override
(`install_prompt_asset`).

Nothing here imports or runs the authors' script: it is read as text only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medhal.kit.assets import sha256_file
from medhallu.benchmark import DEMO_OPTIONS, DEMO_ROWS, PROMPT_ASSET

PINNED_SHA256 = "88af15d177ba59084743e820fddf5240eafa59c384bf7d8a0a36e4fcfce74a20"
"""The authors' script's sha256, written out (shared data README; `benchmark.PROMPT_ASSET`
must pin the same)."""

INVENTED = {
    "system_prompt": (
        "\nYou check short answers to clinical questions.\n"
        "Reply '0' if the answer is supported and '1' if it is made up and `2` if you cannot tell. "
        "If in doubt pick `2` rather than guessing. Reply with the digit only.\n"
    ),
    "create_prompt": (
        "\nQ: {question}\nA: {option1}\nDigit '0' or '1' and `2` if you cannot tell.\n"
        "If in doubt pick `2` rather than guessing.\nDigit:\n"
    ),
    "create_prompt_withknowledge": (
        "\nContext: {knowledge}\nQ: {question}\nA: {option1}\nDigit '0' or '1' and `2` if you cannot tell.\n"
        "If in doubt pick `2` rather than guessing.\nDigit:\n"
    ),
}
"""Our own prompt text, with the authors' variable names and placeholders."""


def authors_script(shared_data: Path) -> Path:
    """The authors' detection script in shared data (read as text, never imported)."""
    return shared_data / PROMPT_ASSET.name


def official_strings(shared_data: Path) -> dict[str, str]:
    """The authors' three prompt strings from the shared JSON copy (an independent copy of
    what the extractor must read out of the script)."""
    raw = json.loads((shared_data / "medhallu" / "official_detection_notsure_prompt.json").read_text())
    return {k: raw[k] for k in INVENTED}


def prompt_script(strings: dict[str, str]) -> str:
    """A Python source of the authors' script's shape holding `strings`; running it would
    raise SystemExit, so a test can tell that the extractor never runs it."""
    for key, text in strings.items():
        assert '"""' not in text and "\\" not in text, f"{key} cannot be written into a triple-quoted string"
    return (
        "import random\n\n"
        f'system_prompt = """{strings["system_prompt"]}"""\n\n'
        "def create_prompt(question, option1):\n"
        f'    prompt = f"""{strings["create_prompt"]}"""\n'
        "    return prompt\n\n"
        "def create_prompt_withknowledge(question, option1, knowledge):\n"
        f'    prompt = f"""{strings["create_prompt_withknowledge"]}"""\n'
        "    return prompt\n\n"
        "def main():\n    raise SystemExit('must never run')\n\nmain()\n"
    )


def install_prompt_asset(root: Path, source: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Write `source` as the asset under `root` and accept its hash through
    `MEDHAL_ASSET_SHA256`; return the environment variables that make a run (in this
    process or a child) read it."""
    path = root / PROMPT_ASSET.name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    env = {
        "MEDHAL_ASSETS_DIR": str(root),
        "MEDHAL_ASSET_SHA256": json.dumps({PROMPT_ASSET.name: sha256_file(path)}),
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


# ------------------------------------------------------------------------------ rows


def our_row(number: int, difficulty: str, category: str = "Incomplete Information") -> dict:
    """A row in the pqa_labeled schema, written by us (not MedHallu data)."""
    return {
        "Question": f"Does treatment {number} shorten recovery after minor surgery?",
        "Knowledge": [
            f"Patients in study {number} were randomised to the treatment or to usual care.",
            "Recovery was measured in days.",
        ],
        "Ground Truth": f"Yes. Recovery was {number + 2} days shorter with the treatment than without it.",
        "Difficulty Level": difficulty,
        "Hallucinated Answer": f"No. Treatment {number} slowed recovery: it blocks collagen synthesis.",
        "Category of Hallucination": category,
    }


def demo_rows_path() -> Path:
    return DEMO_ROWS


def demo_options() -> dict:
    return dict(DEMO_OPTIONS)


def load(**options) -> list:
    """Tasks of a MedHallu taskset with these options, in load order."""
    from medhallu.taskset import MedHalluConfig, MedHalluTaskset

    return MedHalluTaskset(MedHalluConfig(id="medhallu", **options)).load()


def select(num_tasks: int | None = None, shuffle: bool = False, **options) -> list:
    """Tasks as a run selects them (with `selection` stamped on each)."""
    from medhallu.taskset import MedHalluConfig, MedHalluTaskset

    return MedHalluTaskset(MedHalluConfig(id="medhallu", **options)).select(num_tasks, shuffle)


def labeled_rows(shared_data: Path) -> Path:
    """The 1,000 real pqa_labeled rows in shared data."""
    return shared_data / "medhallu" / "pqa_labeled.jsonl"
