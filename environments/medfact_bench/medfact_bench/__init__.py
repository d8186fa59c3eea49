"""MedFact-Bench as a verifiers v1 environment (`uv run eval medfact-bench`).

Exports resolve on first use (`medhal.kit.lazy`), so reading a report or the declaration
never imports verifiers.
"""

from medhal.kit.lazy import lazy_exports

__all__ = [
    "DEMO_OPTIONS",
    "REPORT",
    "MedFactConfig",
    "MedFactData",
    "MedFactTask",
    "MedFactTaskset",
    "SingleTurnHarness",
    "load_environment",
]

__getattr__ = lazy_exports(
    __name__,
    {
        "MedFactTaskset": "medfact_bench.taskset",
        "MedFactTask": "medfact_bench.taskset",
        "MedFactData": "medfact_bench.taskset",
        "MedFactConfig": "medfact_bench.taskset",
        "SingleTurnHarness": "medhal.kit.harness",
        "REPORT": "medfact_bench.report",
        "DEMO_OPTIONS": "medfact_bench.benchmark",
    },
)


def load_environment(**kwargs):
    """The classic v0 environment (for `vf-eval` and the Hub's scan), sharing prompts and scoring."""
    from medfact_bench.taskset import MedFactTaskset
    from medhal.kit.v0 import legacy_environment

    return legacy_environment(MedFactTaskset, "medfact-bench", **kwargs)
