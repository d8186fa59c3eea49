"""MedHallu as a verifiers v1 environment (`uv run eval medhallu`)."""

from pathlib import Path

from medhal.harness import SingleTurnHarness

from medhallu.report import REPORT
from medhallu.taskset import MedHalluConfig, MedHalluData, MedHalluTask, MedHalluTaskset

DEMO_OPTIONS = {"dataset_path": str(Path(__file__).parent / "demo" / "pqa_labeled.jsonl"), "config": "pqa_labeled"}
"""Taskset options for a small demo run: three rows written by medhal (not MedHallu data)."""

__all__ = [
    "MedHalluTaskset",
    "SingleTurnHarness",
    "MedHalluTask",
    "MedHalluData",
    "MedHalluConfig",
    "REPORT",
    "DEMO_OPTIONS",
    "load_environment",
]


def load_environment(**kwargs):
    """The classic v0 environment (for `vf-eval` and the Hub's scan), sharing prompts and scoring."""
    from medhal.v0 import legacy_environment

    return legacy_environment(MedHalluTaskset, "medhallu", **kwargs)
