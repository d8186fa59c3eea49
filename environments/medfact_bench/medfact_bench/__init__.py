"""MedFact-Bench as a verifiers v1 environment (`uv run eval medfact-bench`)."""

from pathlib import Path

from medhal.harness import SingleTurnHarness

from medfact_bench.report import REPORT
from medfact_bench.taskset import MedFactConfig, MedFactData, MedFactTask, MedFactTaskset

DEMO_OPTIONS = {"dataset_path": str(Path(__file__).parent / "demo" / "medfact_demo.jsonl")}
"""Taskset options for `medhal demo`: six rows written by us (see demo/README.md)."""

__all__ = ["MedFactTaskset", "SingleTurnHarness", "MedFactTask", "MedFactData", "MedFactConfig", "REPORT", "DEMO_OPTIONS", "load_environment"]


def load_environment(**kwargs):
    """The classic v0 environment (for `vf-eval` and the Hub's scan), sharing prompts and scoring."""
    from medhal.v0 import legacy_environment

    return legacy_environment(MedFactTaskset, "medfact-bench", **kwargs)
