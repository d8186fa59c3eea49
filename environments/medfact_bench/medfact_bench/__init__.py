"""MedFact-Bench as a verifiers v1 environment (`uv run eval medfact-bench`)."""

from medhal.harness import SingleTurnHarness

from medfact_bench.report import REPORT
from medfact_bench.taskset import MedFactConfig, MedFactData, MedFactTask, MedFactTaskset

__all__ = ["MedFactTaskset", "SingleTurnHarness", "MedFactTask", "MedFactData", "MedFactConfig", "REPORT", "load_environment"]


def load_environment(**kwargs):
    """The classic v0 environment (for `vf-eval` and the Hub's scan), sharing prompts and scoring."""
    from medhal.v0 import legacy_environment

    return legacy_environment(MedFactTaskset, "medfact-bench", **kwargs)
