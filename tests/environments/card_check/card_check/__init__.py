"""Card-Check, a benchmark made up for medhal's tests, as a verifiers v1 environment
(`uv run eval card-check`). Exports resolve on first use (`medhal.kit.lazy`)."""

from medhal.kit.lazy import lazy_exports

__all__ = [
    "DEMO_OPTIONS",
    "REPORT",
    "CardConfig",
    "CardData",
    "CardTask",
    "CardTaskset",
    "SingleTurnHarness",
    "load_environment",
]

__getattr__ = lazy_exports(
    __name__,
    {
        "CardTaskset": "card_check.taskset",
        "CardTask": "card_check.taskset",
        "CardData": "card_check.taskset",
        "CardConfig": "card_check.taskset",
        "SingleTurnHarness": "medhal.kit.harness",
        "REPORT": "card_check.report",
        "DEMO_OPTIONS": "card_check.benchmark",
    },
)


def load_environment(**kwargs):
    """The classic v0 environment (for `vf-eval`), sharing prompts and scoring."""
    from card_check.taskset import CardTaskset
    from medhal.kit.v0 import legacy_environment

    return legacy_environment(CardTaskset, "card-check", **kwargs)
