"""What a Card-Check reply earns: its reading against the gold label, under every convention;
the run's convention decides `correct` and the reward."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from card_check.replies import NO, YES, read_all
from medhal.kit.outcomes import CORRECT, PARSED, READINGS, correct_key, parsed_key


class Gradable(Protocol):
    label: str
    parser: str


@dataclass(frozen=True)
class Scored:
    metrics: dict[str, float]
    info: dict[str, Any]


def score(item: Gradable, reply: str | None) -> Scored:
    """Read `reply` under every convention and grade each reading: one pass per trace."""
    readings = read_all(reply)
    metrics: dict[str, float] = {}
    for name, reading in readings.items():
        metrics[correct_key(name)] = float(reading == item.label)
        metrics[parsed_key(name)] = float(reading is not None)
    metrics[CORRECT] = metrics[correct_key(item.parser)]
    metrics[PARSED] = metrics[parsed_key(item.parser)]
    return Scored(metrics, {READINGS: readings, "pred_label": readings[item.parser]})


def gold_reply(item: Gradable) -> str:
    """The reply a perfect model gives, in exactly the format the prompt asks for."""
    return f"Answer: {item.label}"


def wrong_reply(item: Gradable) -> str:
    return f"Answer: {NO if item.label == YES else YES}"
