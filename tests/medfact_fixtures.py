"""Hand-made MedFact-Bench rows in the Hugging Face schema (our own text, not upstream rows).

The system prompt is read from the shared data when available (it is upstream text and
not committed); otherwise a stand-in of ours is used, since scoring never reads it."""

from __future__ import annotations

import os
from pathlib import Path

COMPONENTS = ["scifact", "healthver", "medaesqa", "pubmedqa-fact", "bioasq-fact"]
LABELS = ["SUPPORT", "NEI", "CONTRADICT"]


def system_prompt() -> str:
    shared = os.environ.get("MEDHAL_SHARED_DATA")
    if shared and (Path(shared) / "medfact/system_prompt.txt").is_file():
        return (Path(shared) / "medfact/system_prompt.txt").read_text(encoding="utf-8")
    return "Rate how strongly the article supports the claim from -2 to 2.\n<think>...</think>\n<score>...</score>"


def rows(n: int = 20) -> list[dict]:
    sp = system_prompt()
    return [
        {
            "dataset": COMPONENTS[i % 5],
            "claim": f"Drug {i} lowers blood pressure.",
            "source": f"Trial {i} found an effect of size {i}.",
            "label": LABELS[i % 3],
            "system_prompt": sp,
            # The upstream layout, led by a marker scripted endpoints can recognise the item by.
            "user_prompt": f"[item {i}]\nArticle:\nTrial {i} found an effect of size {i}.\n\nClaim:\nDrug {i} lowers blood pressure.",
        }
        for i in range(n)
    ]

