"""Med-HALT as a verifiers v1 environment (`uv run eval med-halt`)."""

from medhal.harness import SingleTurnHarness

from med_halt.demo import DEMO_OPTIONS
from med_halt.report import REPORT
from med_halt.taskset import MedHaltConfig, MedHaltData, MedHaltTask, MedHaltTaskConfig, MedHaltTaskset

__all__ = [
    "MedHaltTaskset",
    "SingleTurnHarness",
    "MedHaltTask",
    "MedHaltData",
    "MedHaltConfig",
    "MedHaltTaskConfig",
    "REPORT",
    "DEMO_OPTIONS",
]
