"""The MedFact-Bench prompt: the dataset carries it. Every row holds the same system
prompt (sent unchanged, byte for byte) and its own user prompt (article and claim)."""

from __future__ import annotations

from collections import Counter

from medhal.kit.datasets import DatasetError


def system_prompt(rows: list[dict], origin: str) -> str:
    """The one system prompt of the dataset; several distinct ones are an error (the
    benchmark is defined with one)."""
    prompts = Counter(row["system_prompt"] for row in rows)
    if len(prompts) != 1:
        raise DatasetError(f"{origin}: expected exactly one distinct system_prompt, found {len(prompts)}")
    return next(iter(prompts))
