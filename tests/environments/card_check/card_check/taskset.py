"""Card-Check's tasks: options, the data each task carries, scoring and loading.

Protocol: zero-shot; our system prompt, the card and the statement as the user turn; the
reply's reading (`yes` / `no`) is compared with the gold label.
"""

from __future__ import annotations

import verifiers.v1 as vf
from pydantic import Field, model_validator

from card_check.benchmark import COLUMNS, DEFAULT_INVALID_REWARD, ENV_ID, ROWS, SYSTEM_PROMPT
from card_check.prompts import user_prompt
from card_check.rows import validate_rows
from card_check.scoring import gold_reply, score, wrong_reply
from medhal.kit.datasets import load_rows
from medhal.kit.outcomes import CORRECT, PARSED
from medhal.kit.task import BenchmarkConfig, BenchmarkData, RecordsSelection, validate_task


class CardData(BenchmarkData):
    card: str
    statement: str
    label: str
    """Gold label: yes (the card supports the statement) or no."""
    invalid_reward: float = DEFAULT_INVALID_REWARD
    """Reward for a reply without a reading (the `invalid_reward` option)."""


class CardTask(vf.Task[CardData]):
    @vf.metric
    async def outcomes(self, task: CardData, trace: vf.Trace) -> dict[str, float]:
        """Reads the reply once, under every convention; the readings go on `trace.info`."""
        scored = score(task, trace.last_reply)
        trace.info.update(scored.info)
        return scored.metrics

    @vf.reward(weight=1.0)
    async def accuracy(self, trace: vf.Trace) -> float:
        """1 for the gold label, 0 for the other, `invalid_reward` for no reading; under
        `binary_reward`, 1 for the gold label and 0 otherwise."""
        if trace.metrics[PARSED] or self.data.binary_reward:
            return trace.metrics[CORRECT]
        return self.data.invalid_reward

    async def validate(self, runtime: object = None) -> bool:
        return await validate_task(self, gold_reply(self.data), wrong_reply(self.data), 1.0, 0.0)


class CardConfig(BenchmarkConfig):
    REWARD_OPTIONS = ("invalid_reward",)

    invalid_reward: float = Field(DEFAULT_INVALID_REWARD, ge=-1.0, le=0.0)
    """Reward for a reply without a reading, in [-1, 0]; 0 (the default) scores it as wrong."""
    dataset_path: str | None = None
    """A local jsonl/json/csv/parquet file of cards instead of the six that ship."""

    @model_validator(mode="after")
    def _evaluation_only(self) -> CardConfig:
        if self.role == "train":
            raise ValueError("role 'train': Card-Check is evaluation-only (six cards, all test items)")
        return self


class CardTaskset(RecordsSelection, vf.Taskset[CardTask, CardConfig]):
    def load(self) -> list[CardTask]:
        cfg = self.config
        loaded = load_rows(None, cfg.dataset_path or ROWS, columns=COLUMNS)
        validate_rows(loaded.rows, loaded.origin)
        provenance = cfg.provenance(
            ENV_ID, {**loaded.provenance, "prompt": "card_check.benchmark.SYSTEM_PROMPT"}
        )
        tasks = []
        for number, row in enumerate(loaded.rows):
            data = CardData(
                idx=number,
                benchmark=ENV_ID,
                source_id=row["id"],
                parser=cfg.parser,
                provenance=provenance,
                prompt=user_prompt(row),
                system_prompt=SYSTEM_PROMPT,
                card=row["card"],
                statement=row["statement"],
                label=row["label"],
                invalid_reward=cfg.invalid_reward,
                binary_reward=cfg.binary_reward,
            )
            tasks.append(CardTask(data, cfg.task))
        return tasks
