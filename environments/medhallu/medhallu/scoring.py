"""What a MedHallu verdict earns, and the replies a perfect and a wrong model give.

Every reply is read under each convention (`replies`); the run's convention decides
`correct` and the reward: 1 for the gold verdict, `not_sure_reward` (default 0) for an
abstention, 0 for a wrong verdict, `invalid_reward` (default 0) for an INVALID reply; under
`binary_reward`, 1 for the gold verdict and 0 for anything else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from medhal.kit.outcomes import CORRECT, PARSED, READINGS, correct_key, parsed_key
from medhallu.replies import FACTUAL, NOT_SURE, VOCABULARIES, Vocabulary, read_all

NOT_SURE_METRIC = "not_sure"
"""1.0 when the run's reading is an abstention."""


class Gradable(Protocol):
    label: str
    parser: str
    not_sure_offered: bool
    not_sure_reward: float
    answer_vocabulary: str
    invalid_reward: float
    binary_reward: bool


@dataclass(frozen=True)
class Scored:
    metrics: dict[str, float]
    info: dict[str, Any]


def reward(
    label: str | None, gold: str, not_sure_reward: float, invalid_reward: float = 0.0, binary: bool = False
) -> float:
    """1 for the gold verdict, `not_sure_reward` for an abstention, `invalid_reward` for a
    reply read as no verdict at all, 0 for the wrong verdict; `binary`: 1 for the gold
    verdict, 0 for anything else."""
    if binary:
        return float(label == gold)
    if label == NOT_SURE:
        return not_sure_reward
    if label is None:
        return invalid_reward
    return float(label == gold)


def vocabulary(name: str) -> Vocabulary:
    """A recorded answer vocabulary, checked (a task's data may come from a trace file)."""
    if name not in VOCABULARIES:
        raise ValueError(f"answer_vocabulary {name!r} is not one of {', '.join(VOCABULARIES)}")
    return name  # type: ignore[return-value]


def score(item: Gradable, reply: str | None) -> Scored:
    """Read `reply` under every convention and grade each reading: one pass per trace."""
    labels = read_all(reply, item.not_sure_offered, vocabulary(item.answer_vocabulary))
    metrics: dict[str, float] = {}
    for name, label in labels.items():
        metrics[correct_key(name)] = float(label == item.label)
        metrics[parsed_key(name)] = float(label is not None)
    own = labels[item.parser]
    metrics[CORRECT] = metrics[correct_key(item.parser)]
    metrics[PARSED] = metrics[parsed_key(item.parser)]
    metrics[NOT_SURE_METRIC] = float(own == NOT_SURE)
    metrics["detection_reward"] = reward(
        own, item.label, item.not_sure_reward, item.invalid_reward, item.binary_reward
    )
    info = {READINGS: labels, "pred_label": own}
    return Scored(metrics, info)


def gold_reply(item: Gradable) -> str:
    """The bare digit the prompt asks for."""
    return "0" if item.label == FACTUAL else "1"


def wrong_reply(item: Gradable) -> str:
    return "1" if item.label == FACTUAL else "0"
