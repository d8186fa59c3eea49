"""Stand-ins for the MedHallu prompt asset (the authors' script is not available offline).

`prompt_script` writes a Python file of the same shape as the authors' script: a module
string `system_prompt` and the two template functions building f-strings. Tests fill it
with our own invented text, or, at run time only, with the authors' strings from the
shared JSON copy (never committed). `install_prompt_asset` points the environment at such
a file through `MEDHAL_ASSETS_DIR`, with `MEDHAL_ASSET_SHA256` accepting its hash.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medhal.assets import sha256_file
from medhallu.taskset import PROMPT_ASSET

INVENTED = {
    "system_prompt": (
        "\nYou check short answers to clinical questions.\n"
        "Reply '0' if the answer is supported and '1' if it is made up and `2` if you cannot tell. "
        "If in doubt pick `2` rather than guessing. Reply with the digit only.\n"
    ),
    "create_prompt": "\nQ: {question}\nA: {option1}\nDigit '0' or '1' and `2` if you cannot tell.\nIf in doubt pick `2` rather than guessing.\nDigit:\n",
    "create_prompt_withknowledge": (
        "\nContext: {knowledge}\nQ: {question}\nA: {option1}\nDigit '0' or '1' and `2` if you cannot tell.\n"
        "If in doubt pick `2` rather than guessing.\nDigit:\n"
    ),
}
"""Our own prompt text, with the authors' variable names and placeholders."""


def official_strings(shared_data: Path) -> dict[str, str]:
    raw = json.loads((shared_data / "medhallu" / "official_detection_notsure_prompt.json").read_text())
    return {k: raw[k] for k in INVENTED}


def prompt_script(strings: dict[str, str]) -> str:
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
    """Write `source` as the asset under `root`; return the environment variables that make
    a run (in this process or a child) read it."""
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


@pytest.fixture
def official_asset(shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The authors' prompt strings (from shared data) in a script of the authors' shape."""
    env = install_prompt_asset(tmp_path / "assets", prompt_script(official_strings(shared_data)), monkeypatch)
    return env


@pytest.fixture
def invented_asset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    env = install_prompt_asset(tmp_path / "assets", prompt_script(INVENTED), monkeypatch)
    return env
