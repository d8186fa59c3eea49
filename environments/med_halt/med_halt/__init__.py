"""Med-HALT as a verifiers v1 environment (`uv run eval med-halt`).

Exports resolve on first use (`medhal.kit.lazy`), so reading a report or the declaration
never imports verifiers.
"""

from medhal.kit.lazy import lazy_exports

__all__ = [
    "DEMO_OPTIONS",
    "REPORT",
    "MedHaltConfig",
    "MedHaltData",
    "MedHaltTask",
    "MedHaltTaskConfig",
    "MedHaltTaskset",
    "SingleTurnHarness",
    "load_environment",
]

__getattr__ = lazy_exports(
    __name__,
    {
        "MedHaltTaskset": "med_halt.taskset",
        "MedHaltTask": "med_halt.taskset",
        "MedHaltData": "med_halt.taskset",
        "MedHaltConfig": "med_halt.taskset",
        "MedHaltTaskConfig": "med_halt.taskset",
        "SingleTurnHarness": "medhal.kit.harness",
        "REPORT": "med_halt.report",
        "DEMO_OPTIONS": "med_halt.benchmark",
    },
)


def load_environment(**kwargs):
    """The classic v0 environment (for `vf-eval` and the Hub's scan), sharing prompts and scoring."""
    from med_halt.taskset import MedHaltTaskset
    from medhal.kit.v0 import legacy_environment

    return legacy_environment(MedHaltTaskset, "med-halt", **kwargs)
