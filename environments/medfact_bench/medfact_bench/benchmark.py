"""MedFact-Bench (Med-V1 paper, 2026): what this environment is, declared in one place.

The dataset and its pinned revision, its components and their sizes, the prompt (the
dataset's own system prompt, sent verbatim: there is no prompt asset) and the defaults.
Light on purpose: reports and the CLI import it without importing verifiers.
"""

from __future__ import annotations

from pathlib import Path

from medhal.kit.datasets import HubDataset
from medhal.kit.fetch import HubSplit, Needs
from medhal.kit.published import load as load_published

ENV_ID = "medfact-bench"
DATASET = HubDataset(id="ncbi/MedFact-Bench", revision="249028caf7ad5a3e63331269a606f4b2696693ed")
"""One split, `train`, which holds only test items."""
COLUMNS = ("dataset", "claim", "source", "label", "system_prompt", "user_prompt")
COMPONENTS = {"scifact": 340, "healthver": 903, "medaesqa": 9106, "pubmedqa-fact": 500, "bioasq-fact": 3425}
"""Component -> rows; the macro accuracy averages over these five."""
FULL_SIZE = sum(COMPONENTS.values())  # 14,274
EVALUATION_SETS = {"all": "medfact/medfact_bench"}
"""The evaluation set (the whole benchmark: it is test-only) and the stem of its file in a
data directory (`medhal fetch -o DIR`); a training role is refused for it whatever the rows."""
EVAL_FINGERPRINTS = Path(__file__).parent / "eval_fingerprints.json"
"""Fingerprints of the evaluation set's items (`medhal.kit.roles`), written by
`scripts/eval_fingerprints.py` where the labelled rows are available."""
DEFAULT_INVALID_REWARD = 0.0
PROMPT = "the dataset's system_prompt column (one distinct value), verbatim; the row's user_prompt"

FETCH = {"all": Needs(data=(HubSplit(DATASET, "medfact/medfact_bench"),))}
"""What `medhal fetch` downloads: the one split, stored as `<dir>/medfact/medfact_bench.<ext>`
(`--taskset.dataset-path`); there is no prompt asset."""

DEMO_OPTIONS = {"dataset_path": str(Path(__file__).parent / "demo" / "medfact_demo.jsonl")}
"""Taskset options for `medhal demo`: six rows written by medhal (see demo/README.md)."""

PUBLISHED = load_published(Path(__file__).parent / "published.csv")
"""Zero-shot accuracies from the Med-V1 paper (Figure 3)."""
