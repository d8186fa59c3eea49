"""MedFact-Bench as a verifiers v1 environment (`uv run eval medfact-bench`)."""

from medhal.harness import SingleTurnHarness

from medfact_bench.report import REPORT
from medfact_bench.taskset import MedFactConfig, MedFactData, MedFactTask, MedFactTaskset

__all__ = ["MedFactTaskset", "SingleTurnHarness", "MedFactTask", "MedFactData", "MedFactConfig", "REPORT"]
