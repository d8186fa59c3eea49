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
    "load_environment",
]


def load_environment(**kwargs):
    """The classic v0 environment (for `vf-eval` and the Hub's scan), sharing prompts and scoring."""
    from medhal.v0 import legacy_environment

    return legacy_environment(MedHaltTaskset, "med-halt", **kwargs)
