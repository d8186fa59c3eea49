"""MedHallu as a verifiers v1 environment (`uv run eval medhallu`).

Exports resolve on first use (`medhal.kit.lazy`), so reading a report or the declaration
never imports verifiers.
"""

from medhal.kit.lazy import lazy_exports

__all__ = [
    "DEMO_OPTIONS",
    "REPORT",
    "MedHalluConfig",
    "MedHalluData",
    "MedHalluTask",
    "MedHalluTaskset",
    "SingleTurnHarness",
    "load_environment",
]

__getattr__ = lazy_exports(
    __name__,
    {
        "MedHalluTaskset": "medhallu.taskset",
        "MedHalluTask": "medhallu.taskset",
        "MedHalluData": "medhallu.taskset",
        "MedHalluConfig": "medhallu.taskset",
        "SingleTurnHarness": "medhal.kit.harness",
        "REPORT": "medhallu.report",
        "DEMO_OPTIONS": "medhallu.benchmark",
    },
)


def load_environment(**kwargs):
    """The classic v0 environment (for `vf-eval` and the Hub's scan), sharing prompts and scoring."""
    from medhal.kit.v0 import legacy_environment
    from medhallu.taskset import MedHalluTaskset

    return legacy_environment(MedHalluTaskset, "medhallu", **kwargs)
