"""MedFact-Bench's tasks: options, the data each task carries, scoring and loading.

Protocol (Med-V1 paper): zero-shot; the dataset's one system prompt is sent unchanged and
the row's `user_prompt` as the user turn; the reply's score (-2..2) is mapped to
SUPPORT / NEI / CONTRADICT and compared with the gold label. The primary figure is the
macro accuracy over the five components (see `report`).
"""

from __future__ import annotations

from typing import Literal

import verifiers.v1 as vf
from pydantic import Field, model_validator

from medfact_bench.benchmark import COLUMNS, DATASET, DEFAULT_INVALID_REWARD, ENV_ID, PROMPT
from medfact_bench.prompts import system_prompt
from medfact_bench.rows import validate_rows
from medfact_bench.scoring import gold_reply, score, wrong_reply
from medhal.kit.datasets import load_rows, require_rows
from medhal.kit.outcomes import CORRECT, PARSED
from medhal.kit.reasoning import truncation_info
from medhal.kit.task import BenchmarkConfig, BenchmarkData, RecordsSelection, validate_task

Component = Literal["all", "scifact", "healthver", "medaesqa", "pubmedqa-fact", "bioasq-fact"]


class MedFactData(BenchmarkData):
    dataset: str
    """Component: scifact, healthver, medaesqa, pubmedqa-fact or bioasq-fact."""
    claim: str
    label: str
    """Gold label: SUPPORT, NEI or CONTRADICT."""
    invalid_reward: float = DEFAULT_INVALID_REWARD
    """Reward for a reply without a readable score (the `invalid_reward` option)."""


class MedFactTask(vf.Task[MedFactData]):
    @vf.metric
    async def outcomes(self, task: MedFactData, trace: vf.Trace) -> dict[str, float]:
        """Reads the reply once, under every convention: `correct`/`parsed` for the run's
        convention and per convention; the labels and scores read go on `trace.info`."""
        scored = score(task, trace.last_reply)
        trace.info.update({**scored.info, **truncation_info(trace)})
        return scored.metrics

    @vf.reward(weight=1.0)
    async def accuracy(self, trace: vf.Trace) -> float:
        """1 for the gold label, 0 for another label, `invalid_reward` (default 0) for a reply
        without a readable score; under `binary_reward`, 1 for the gold label and 0 otherwise."""
        if trace.metrics[PARSED] or self.data.binary_reward:
            return trace.metrics[CORRECT]
        return self.data.invalid_reward

    async def validate(self, runtime: object = None) -> bool:
        """The gold score in the exact format asked for earns 1 under every convention; a
        score of another label earns 0."""
        return await validate_task(self, gold_reply(self.data), wrong_reply(self.data), 1.0, 0.0)


class MedFactConfig(BenchmarkConfig):
    REWARD_OPTIONS = ("invalid_reward",)

    subset: Component = "all"
    """`all`, or one component."""
    split: Literal["test"] = "test"
    """Evaluation only: the dataset's single split holds test items; there is no training split."""
    invalid_reward: float = Field(DEFAULT_INVALID_REWARD, ge=-1.0, le=0.0)
    """Reward for a reply without a readable score (INVALID under the run's convention), in
    [-1, 0]; 0 (the default) scores it as a wrong label. An RL knob: below 0, a reply out of
    format is worse than a wrong label (Med-V1's own RL reward checks the format too)."""
    dataset_path: str | None = None
    """Local parquet/jsonl/json/csv file in the Hugging Face schema, instead of the Hub."""
    revision: str | None = None
    """Hub revision; defaults to the pinned one."""

    @model_validator(mode="after")
    def _evaluation_only(self) -> MedFactConfig:
        if self.role == "train":
            raise ValueError(
                "role 'train': MedFact-Bench is evaluation-only (its one split holds test items; "
                "Med-V1 trains on MedFact-Synth, which this project does not package)"
            )
        return self


class MedFactTaskset(RecordsSelection, vf.Taskset[MedFactTask, MedFactConfig]):
    def load(self) -> list[MedFactTask]:
        cfg = self.config
        loaded = load_rows(DATASET, cfg.dataset_path, cfg.revision, columns=COLUMNS)
        validate_rows(loaded.rows, loaded.origin)
        prompt = system_prompt(loaded.rows, loaded.origin)
        provenance = cfg.provenance(ENV_ID, {**loaded.provenance, "prompt": PROMPT})
        tasks = []
        for number, row in enumerate(loaded.rows):
            if cfg.subset != "all" and row["dataset"] != cfg.subset:
                continue
            data = MedFactData(
                idx=len(tasks),
                benchmark=ENV_ID,
                source_id=f"{row['dataset']}:{number}",
                parser=cfg.parser,
                provenance=provenance,
                prompt=row["user_prompt"],
                system_prompt=prompt,
                dataset=row["dataset"],
                claim=row["claim"],
                label=row["label"],
                invalid_reward=cfg.invalid_reward,
                binary_reward=cfg.binary_reward,
            )
            tasks.append(MedFactTask(data, cfg.task))
        return require_rows(tasks, loaded.origin, f"of component {cfg.subset!r}")
