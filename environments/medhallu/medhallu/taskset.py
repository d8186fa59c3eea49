"""MedHallu's tasks: options, the data each task carries, scoring and loading.

Protocol (Pandit et al., 2025, and the authors' detection script): every dataset row
gives a detection item per answer (see `rows`). The model sees the authors' prompt, with
or without the row's PubMedQA contexts as world knowledge and with or without the "not
sure" option, and answers 0 / 1 / 2. The headline figure is F1 with `hallucinated` as
the positive class, per difficulty (see `report`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import verifiers.v1 as vf
from pydantic import Field, model_validator

from medhal.kit.datasets import HubDataset, load_rows, require_rows
from medhal.kit.reasoning import truncation_info
from medhal.kit.roles import Role, load_fingerprints, refuse_evaluation_items
from medhal.kit.task import BenchmarkConfig, BenchmarkData, RecordsSelection, validate_task
from medhallu.benchmark import (
    COLUMNS,
    CONFIG_ROLE,
    DATASET,
    DEFAULT_CONFIG,
    DEFAULT_INVALID_REWARD,
    DEFAULT_KNOWLEDGE,
    DEFAULT_NOT_SURE,
    DEFAULT_NOT_SURE_REWARD,
    DEFAULT_PAIRING,
    DEFAULT_SEED,
    DEMO_PROMPT,
    DEMO_ROWS,
    ENV_ID,
    EVAL_FINGERPRINTS,
    PROMPT_ASSET,
)
from medhallu.prompts import DetectionPrompts, extract_prompts, remove_not_sure, user_message
from medhallu.replies import HALLUCINATED, Vocabulary
from medhallu.rows import item_labels, item_texts, validate_rows
from medhallu.scoring import gold_reply, score, wrong_reply


class MedHalluData(BenchmarkData):
    question: str
    answer: str
    """The answer shown to the model: the row's ground truth or its hallucinated answer."""
    label: str
    """Gold: `factual` (the ground truth) or `hallucinated`."""
    difficulty: str
    """The row's difficulty (easy/medium/hard); it describes the hallucinated answer, and
    the factual item of the row carries it too."""
    category: str
    """The row's hallucination category; carried by both items of the row likewise."""
    not_sure_offered: bool
    not_sure_reward: float
    answer_vocabulary: str = "digits"
    """The words the replies answer with, besides the prompt's digits, as the run declared
    them (`answer_vocabulary`); "digits" in traces written before the option existed."""
    invalid_reward: float = DEFAULT_INVALID_REWARD


class MedHalluTask(vf.Task[MedHalluData]):
    @vf.metric
    async def outcomes(self, task: MedHalluData, trace: vf.Trace) -> dict[str, float]:
        """Reads the reply once, under every convention: `correct`/`parsed` for the run's
        convention and per convention, `not_sure`, and the reward it earns; the verdicts
        read go on `trace.info`."""
        scored = score(task, trace.last_reply)
        trace.info.update({**scored.info, **truncation_info(trace)})
        return scored.metrics

    @vf.reward(weight=1.0)
    async def detection(self, trace: vf.Trace) -> float:
        return trace.metrics["detection_reward"]

    async def validate(self, runtime: object = None) -> bool:
        """The digit a perfect model answers earns 1 under every convention; the other
        digit earns 0."""
        return await validate_task(self, gold_reply(self.data), wrong_reply(self.data), 1.0, 0.0)


class MedHalluConfig(BenchmarkConfig):
    REWARD_OPTIONS = ("not_sure_reward", "invalid_reward")

    config: Literal["pqa_labeled", "pqa_artificial"] = DEFAULT_CONFIG
    """Hub config: `pqa_labeled` (1,000 rows, the evaluation set: a training role is
    refused) or `pqa_artificial` (9,000 rows, the training pool; a training load of it is
    checked against pqa_labeled's fingerprints)."""
    split: Role | None = None
    """The old name of `role` (the role the run gives the data), kept because configs
    written for earlier versions set it (prime-rl `[[orchestrator.*]]` tables, prime's
    `env_args`, `--taskset.split`): renaming it would break them. It sets `role`; giving
    both with different values is refused."""
    pairing: Literal["both", "one"] = DEFAULT_PAIRING
    """`both`: two items per row (factual, then hallucinated). `one`: one item per row,
    chosen by a seeded draw from the row's own text (independent of row order)."""
    seed: int = DEFAULT_SEED
    """Seed of the `pairing = one` draw."""
    knowledge: bool = DEFAULT_KNOWLEDGE
    """Show the row's PubMedQA contexts as world knowledge."""
    not_sure: bool = DEFAULT_NOT_SURE
    """Offer `2` (not sure): the authors' text as published; false derives the binary variant."""
    not_sure_reward: float = Field(DEFAULT_NOT_SURE_REWARD, ge=0.0, le=1.0)
    """Reward for an abstention, in [0, 1] (a right verdict earns 1, a wrong one 0)."""
    invalid_reward: float = Field(DEFAULT_INVALID_REWARD, ge=-1.0, le=0.0)
    """Reward for a reply read as no verdict (INVALID under the run's convention), in
    [-1, 0]; 0 (the default) scores it as a wrong verdict. An RL knob: below 0, an
    unreadable reply is worse than a wrong guess, so the format is learnt first and a reply
    that hedges or lists every answer never ties with an honest mistake."""
    difficulty: Literal["all", "easy", "medium", "hard"] = "all"
    """`all`, or only the rows of one difficulty."""
    answer_vocabulary: Vocabulary = "digits"
    """The words the replies answer with, for the `medhal` reading: `digits` (the prompt's
    0 / 1 / 2) or `halueval` (also HaluEval's `#Your Judgement#: Yes` = hallucinated, `No`
    = factual, for replies made with HaluEval-style prompts). Declared, never guessed; the
    `authors` and `strict` readings know only the digits."""
    prompts: Literal["pinned", "demo"] = "pinned"
    """`pinned`: the authors' prompt. `demo`: a prompt written by medhal, for the demo rows
    only (a demo on a machine that cannot fetch the pinned script)."""
    dataset_path: str | None = None
    """Local parquet/jsonl/json/csv file in the Hugging Face schema of `config`, instead of the Hub."""
    revision: str | None = None
    """Hub revision; defaults to the pinned one."""

    @model_validator(mode="before")
    @classmethod
    def _split_is_role(cls, data: object) -> object:
        if isinstance(data, dict) and data.get("split") is not None:
            if data.get("role") is not None and data["role"] != data["split"]:
                raise ValueError(
                    f"role {data['role']!r} and split {data['split']!r}: split is the old name of role; "
                    "give one"
                )
            return {**data, "role": data["split"]}
        return data

    @model_validator(mode="after")
    def _role_matches_config(self) -> MedHalluConfig:
        role = CONFIG_ROLE[self.config]
        if self.role is not None and self.role != role:
            other = next(c for c, r in CONFIG_ROLE.items() if r == self.role)
            raise ValueError(
                f"role {self.role!r} with config {self.config!r}: {self.config} is MedHallu's "
                f"{role} set, and using it for {self.role} would mix training and evaluation "
                f"data; use config={other!r} for role={self.role!r}"
            )
        if self.not_sure_reward and not self.not_sure:
            raise ValueError("not_sure_reward is set but not_sure is false: no abstention can be rewarded")
        if self.prompts == "demo" and (
            self.dataset_path is None or Path(self.dataset_path).resolve() != DEMO_ROWS.resolve()
        ):
            raise ValueError(
                "prompts 'demo' is for the bundled demo rows only (dataset_path = the demo file)"
            )
        return self


def load_prompts(not_sure: bool, source: str = "pinned") -> DetectionPrompts:
    asset = PROMPT_ASSET if source == "pinned" else DEMO_PROMPT
    prompts = extract_prompts(asset.text(), asset.name)
    return prompts if not_sure else remove_not_sure(prompts)


class MedHalluTaskset(RecordsSelection, vf.Taskset[MedHalluTask, MedHalluConfig]):
    def load(self) -> list[MedHalluTask]:
        cfg = self.config
        hub = HubDataset(id=DATASET.id, revision=DATASET.revision, config=cfg.config, split=DATASET.split)
        loaded = load_rows(hub, cfg.dataset_path, cfg.revision, columns=COLUMNS)
        validate_rows(loaded.rows, loaded.origin)
        if cfg.role == "train":
            fingerprints = load_fingerprints(EVAL_FINGERPRINTS)
            rows = (item_texts(row) for row in loaded.rows)
            refuse_evaluation_items(fingerprints, rows, loaded.origin, "MedHallu")
        prompts = load_prompts(cfg.not_sure, cfg.prompts)
        provenance = cfg.provenance(
            ENV_ID,
            {
                **loaded.provenance,
                "prompt": {
                    "variant": "official (not sure offered)"
                    if cfg.not_sure
                    else "derived: not-sure sentences removed",
                    "knowledge": cfg.knowledge,
                    "layout": "one user turn: system prompt + ' ' + user template",
                    "asset": (PROMPT_ASSET if cfg.prompts == "pinned" else DEMO_PROMPT).provenance(),
                },
            },
        )
        tasks = []
        for number, row in enumerate(loaded.rows):
            if cfg.difficulty != "all" and row["Difficulty Level"] != cfg.difficulty:
                continue
            for label in item_labels(row, cfg.pairing, cfg.seed):
                answer = row["Hallucinated Answer"] if label == HALLUCINATED else row["Ground Truth"]
                knowledge = row["Knowledge"] if cfg.knowledge else None
                data = MedHalluData(
                    idx=len(tasks),
                    benchmark=ENV_ID,
                    source_id=f"{cfg.config}:{number}",
                    parser=cfg.parser,
                    provenance=provenance,
                    prompt=user_message(prompts, row["Question"], answer, knowledge),
                    question=row["Question"],
                    answer=answer,
                    label=label,
                    difficulty=row["Difficulty Level"],
                    category=row["Category of Hallucination"],
                    not_sure_offered=cfg.not_sure,
                    not_sure_reward=cfg.not_sure_reward,
                    answer_vocabulary=cfg.answer_vocabulary,
                    invalid_reward=cfg.invalid_reward,
                    binary_reward=cfg.binary_reward,
                )
                tasks.append(MedHalluTask(data, cfg.task))
        return require_rows(tasks, loaded.origin, f"of difficulty {cfg.difficulty!r}")
