"""Card-Check, a benchmark made up for medhal's tests: what this environment is, declared in one place.

Each row is a drug card written by us (a drug that does not exist, its class, adult dose and
one thing not to combine it with) and a statement about the card; the model answers whether
the card supports the statement, `Answer: yes` or `Answer: no`. It exists to show that an
environment is its folder: the contract's tests, the bench scripts, prime packaging and the
release check find it here with no line elsewhere naming it. Light on purpose: reports and
the CLI import it without importing verifiers.
"""

from __future__ import annotations

from pathlib import Path

from medhal.kit.published import load as load_published

ENV_ID = "card-check"
DATASET = None
"""No Hub dataset: the rows ship in the package (`demo/cards.jsonl`)."""
ROWS = Path(__file__).parent / "demo" / "cards.jsonl"
COLUMNS = ("id", "card", "statement", "label")
FULL_SIZE = 6
"""Items in a complete run: every card once."""
FETCH: dict[str, object] = {}
"""Nothing to download: `medhal fetch` has nothing to do for Card-Check."""
EVALUATION_SETS = {"cards": "card_check/cards"}
"""The one set (evaluation only), and the stem of its file in a data directory."""
EVAL_FINGERPRINTS = Path(__file__).parent / "eval_fingerprints.json"
"""None computed (the set is not in any data directory); a training role is refused anyway."""
DEFAULT_INVALID_REWARD = 0.0
SYSTEM_PROMPT = (
    "You check statements against drug cards. Reply with one line: `Answer: yes` if the card "
    "supports the statement, `Answer: no` if it does not."
)
"""The prompt, ours (the benchmark is ours): no prompt asset."""

DEMO_OPTIONS = {"dataset_path": str(ROWS)}
"""Taskset options for `medhal demo`: the six cards, which are the whole benchmark."""

PUBLISHED = load_published(Path(__file__).parent / "published.csv")
"""The constant-`yes` baseline, from the label counts (no paper: the benchmark is made up)."""
