"""MedHallu (Pandit et al., 2025): what this environment is, declared in one place.

The dataset and its pinned revision, the authors' detection script (the pinned prompt
asset), the configs and their roles, and the defaults. Light on purpose: reports and the
CLI import it without importing verifiers.
"""

from __future__ import annotations

from pathlib import Path

from medhal.kit.assets import Asset, BundledFile
from medhal.kit.datasets import HubDataset
from medhal.kit.fetch import HubSplit, Needs
from medhal.kit.published import load as load_published

ENV_ID = "medhallu"
DATASET = HubDataset(id="UTAustin-AIHealth/MedHallu", revision="515060458a945c633debc6fd5baac7764416b724")
"""One split, `train`, per config."""
CONFIGS = {"pqa_labeled": 1000, "pqa_artificial": 9000}
"""Hub configs and their row counts."""
CONFIG_ROLE = {"pqa_labeled": "eval", "pqa_artificial": "train"}
"""pqa_labeled is the evaluation set; pqa_artificial is the training pool for RL."""
EVALUATION_SETS = {"pqa_labeled": "medhallu/pqa_labeled"}
"""The evaluation sets whose items' fingerprints ship with the environment, each with the
stem of its file in a data directory (`medhal fetch -o DIR`: `DIR/medhallu/pqa_labeled.*`)."""
EVAL_FINGERPRINTS = Path(__file__).parent / "eval_fingerprints.json"
"""Fingerprints of the evaluation sets' items (`medhal.kit.roles`), written by
`scripts/eval_fingerprints.py` from the real files: a training load holding any is refused."""
FULL_SIZE = 2 * CONFIGS["pqa_labeled"]
"""Items in a complete evaluation run: both answers of every pqa_labeled row."""
COLUMNS = (
    "Question",
    "Knowledge",
    "Ground Truth",
    "Difficulty Level",
    "Hallucinated Answer",
    "Category of Hallucination",
)
DIFFICULTIES = ("easy", "medium", "hard")

PROMPT_COMMIT = "3c49c8ba80e47720333e508821967167ba048d49"
PROMPT_ASSET = Asset(
    name="medhallu/Detection/detection_vllm_notsurecase.py",
    url=f"https://raw.githubusercontent.com/MedHallu/MedHalu/{PROMPT_COMMIT}/Detection/detection_vllm_notsurecase.py",
    sha256="88af15d177ba59084743e820fddf5240eafa59c384bf7d8a0a36e4fcfce74a20",
)
"""The authors' detection script: its prompt strings are read out of it (never run)."""

FETCH = {
    config: Needs(
        data=(
            HubSplit(HubDataset(DATASET.id, DATASET.revision, config, DATASET.split), f"medhallu/{config}"),
        ),
        assets=(PROMPT_ASSET,),
    )
    for config in CONFIGS
}
"""What `medhal fetch` downloads per setting (a Hub config): its split, stored as
`<dir>/medhallu/<config>.<ext>` (`--taskset.dataset-path`), and the authors' script
(`MEDHAL_ASSETS_DIR=<dir>`)."""

DEFAULT_CONFIG = "pqa_labeled"
DEFAULT_PAIRING = "both"
DEFAULT_SEED = 0
DEFAULT_KNOWLEDGE = False
DEFAULT_NOT_SURE = True
DEFAULT_NOT_SURE_REWARD = 0.0
DEFAULT_INVALID_REWARD = 0.0

DEMO_DIR = Path(__file__).parent / "demo"
DEMO_ROWS = DEMO_DIR / "pqa_labeled.jsonl"
DEMO_OPTIONS = {"dataset_path": str(DEMO_ROWS), "config": "pqa_labeled"}
"""Taskset options for a demo run: three rows written by medhal (not MedHallu data)."""

DEMO_PROMPT = BundledFile(DEMO_DIR / "detection_prompt.py.txt", "medhallu/demo/detection_prompt.py.txt")
"""A prompt written by medhal in the shape of the authors' script, for demo runs on
machines that cannot fetch it (`prompts = demo`, allowed only with the demo rows)."""

PUBLISHED = load_published(Path(__file__).parent / "published.csv")
"""Per-model figures from Tables 2, 4 and 5 of arXiv:2502.14302v1 (Table 2 covers all
10,000 rows of both configs; see each row's source)."""
