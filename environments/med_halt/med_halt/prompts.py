"""The authors' few-shot prompts, assembled from their pinned prompt files.

The prompt text is the authors' and is not in this repository: each set's `prompts.json`
(versions v0, v1, v2: an instruction and an output-format line) and `shots.json` (five
or six worked examples, each marked `default` or `task_specific`) are pinned assets read
at run time. A prompt is laid out as the authors' code lays it out:

    <instruction>\\n<output format>\\n
    Examples: \\n                                   (only with shots)
    Input : <shot input>\\nOutput: <shot output>Stop Here\\n\\n   (per shot)
    Input: <item>\\nOutput:

with dicts rendered by Python's `str`, exactly as upstream. Shots mix default and
task-specific examples as the authors do (1 = 1 default; 2 = 1+1; 3 = 2+1; 4 = 2+2;
5 = 3+2, defaults first). Upstream draws them unseeded, once per set; here the draw is
seeded by (`shot_seed`, set), so a run is reproducible and each set gets its own draw.
Every item of a set shares the set's shots, as upstream.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from med_halt.benchmark import PromptFiles
from medhal.kit.assets import Asset, AssetError, BundledFile

SHOT_MIX: dict[int, tuple[int, int]] = {0: (0, 0), 1: (1, 0), 2: (1, 1), 3: (2, 1), 4: (2, 2), 5: (3, 2)}
"""Number of shots -> (default shots, task-specific shots)."""
DEFAULT_SHOT = "default"


@dataclass(frozen=True)
class Preamble:
    """Everything before the item: instruction, output format and the drawn shots."""

    text: str
    shot_ids: tuple[int, ...]
    """Positions of the drawn shots in the set's shots.json list, in prompt order."""

    def render(self, model_input: dict[str, Any]) -> str:
        return f"{self.text}Input: {model_input}\nOutput: "


def _json(asset: Asset | BundledFile) -> Any:
    try:
        return json.loads(asset.data)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise AssetError(f"asset {asset.name!r} is not valid JSON ({e})") from e


def read_version(asset: Asset | BundledFile, version: str) -> tuple[str, str]:
    """(instruction, output format) of one prompt version."""
    data = _json(asset)
    entries = data.get("prompts") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise AssetError(f"asset {asset.name!r}: field 'prompts' is missing or not a list")
    for entry in entries:
        if isinstance(entry, dict) and entry.get("id") == version:
            instruction, output_format = entry.get("prompt"), entry.get("output_format")
            if not isinstance(instruction, str) or not isinstance(output_format, str):
                raise AssetError(
                    f"asset {asset.name!r}: version {version!r} lacks 'prompt' or 'output_format' text"
                )
            return instruction, output_format
    raise AssetError(f"asset {asset.name!r} has no prompt version {version!r}")


def read_shots(asset: Asset | BundledFile) -> list[dict[str, Any]]:
    data = _json(asset)
    groups = data.get("shots") if isinstance(data, dict) else None
    if not isinstance(groups, list) or not groups or not isinstance(groups[0], list):
        raise AssetError(f"asset {asset.name!r}: field 'shots' is not a list holding one list of shots")
    shots = groups[0]
    for number, shot in enumerate(shots):
        if not isinstance(shot, dict) or not {"input", "Output", "prompt_type"} <= shot.keys():
            raise AssetError(f"asset {asset.name!r}: shot {number} lacks 'input', 'Output' or 'prompt_type'")
    return shots


def draw_shots(
    shots: list[dict[str, Any]], num_shots: int, seed: int, set_name: str, where: str
) -> tuple[int, ...]:
    """Seeded draw of shot positions: the defaults first, then the task-specific ones."""
    n_default, n_task = SHOT_MIX[num_shots]
    default = [i for i, s in enumerate(shots) if s["prompt_type"] == DEFAULT_SHOT]
    task = [i for i, s in enumerate(shots) if s["prompt_type"] != DEFAULT_SHOT]
    if len(default) < n_default or len(task) < n_task:
        raise AssetError(
            f"asset {where!r} has {len(default)} default and {len(task)} task-specific shots; "
            f"{num_shots} shots need {n_default} and {n_task}"
        )
    rng = random.Random(f"{seed}:{set_name}")
    return tuple(rng.sample(default, n_default) + rng.sample(task, n_task))


def build_preamble(files: PromptFiles, version: str, num_shots: int, seed: int, set_name: str) -> Preamble:
    instruction, output_format = read_version(files.prompts, version)
    text = f"{instruction}\n{output_format}\n"
    if num_shots == 0:
        return Preamble(text, ())
    shots = read_shots(files.shots)
    ids = draw_shots(shots, num_shots, seed, set_name, files.shots.name)
    examples = "".join(f"Input : {shots[i]['input']}\nOutput: {shots[i]['Output']}Stop Here\n\n" for i in ids)
    return Preamble(f"{text}Examples: \n{examples}", ids)
