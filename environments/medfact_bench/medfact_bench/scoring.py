"""What a MedFact-Bench reply earns: the label of its score against the gold label.

Every reply is read under each convention (`replies`); the run's convention decides
`correct` and the reward (1 for the gold label, 0 otherwise, INVALID included).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from medfact_bench.replies import READERS, label_of
from medhal.kit.outcomes import CORRECT, PARSED, READINGS, correct_key, parsed_key

GOLD_SCORE = {"SUPPORT": 2, "NEI": 0, "CONTRADICT": -2}
"""The score a perfect model gives for each label (the strongest on its side)."""
WRONG_SCORE = {"SUPPORT": -2, "NEI": 2, "CONTRADICT": 2}


class Gradable(Protocol):
    label: str
    parser: str


@dataclass(frozen=True)
class Scored:
    metrics: dict[str, float]
    info: dict[str, Any]


def score(item: Gradable, reply: str | None) -> Scored:
    """Read `reply` under every convention and grade each reading: one pass per trace."""
    scores = {name: reader(reply) for name, reader in READERS.items()}
    labels = {name: label_of(value) for name, value in scores.items()}
    metrics: dict[str, float] = {}
    for name, label in labels.items():
        metrics[correct_key(name)] = float(label == item.label)
        metrics[parsed_key(name)] = float(label is not None)
    metrics[CORRECT] = metrics[correct_key(item.parser)]
    metrics[PARSED] = metrics[parsed_key(item.parser)]
    info = {
        READINGS: labels,
        "scores": scores,
        "parsed_score": scores[item.parser],
        "pred_label": labels[item.parser],
    }
    return Scored(metrics, info)


def _reply(score_value: int) -> str:
    return f"<think>The article was weighed against the claim.</think>\n<score>{score_value}</score>"


def gold_reply(item: Gradable) -> str:
    """The reply a perfect model gives, in exactly the format the prompt asks for."""
    return _reply(GOLD_SCORE[item.label])


def wrong_reply(item: Gradable) -> str:
    return _reply(WRONG_SCORE[item.label])
