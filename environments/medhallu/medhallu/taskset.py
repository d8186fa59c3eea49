"""MedHallu: is this answer to a PubMedQA question hallucinated?

Protocol (Pandit et al., 2025, and the authors' detection script): every dataset row
holds a question, its ground-truth answer and a generated hallucinated answer; each
answer becomes a detection item (gold `factual` / `hallucinated`). The model sees the
authors' prompt, with or without the row's PubMedQA contexts as world knowledge and with
or without the "not sure" option, and answers 0 / 1 / 2. The headline figure is F1 with
`hallucinated` as the positive class, per difficulty.
"""

from __future__ import annotations

import hashlib
from typing import Literal

import verifiers.v1 as vf
from pydantic import field_validator, model_validator

from medhal.assets import Asset
from medhal.datasets import DatasetError, HubDataset, load_rows, require_columns
from medhal.options import one_of
from medhal.task import BenchmarkData

from medhallu.prompts import DetectionPrompts, extract_prompts, remove_not_sure, user_message
from medhallu.scoring import FACTUAL, HALLUCINATED, parse_reply, reward

ENV_ID = "medhallu"
DATASET_ID = "UTAustin-AIHealth/MedHallu"
REVISION = "515060458a945c633debc6fd5baac7764416b724"
SPLIT = "train"
CONFIGS = {"pqa_labeled": 1000, "pqa_artificial": 9000}
"""Hub configs and their row counts."""
CONFIG_ROLE = {"pqa_labeled": "eval", "pqa_artificial": "train"}
"""pqa_labeled is the evaluation set; pqa_artificial is the training pool for RL."""
FULL_SIZE = 2 * CONFIGS["pqa_labeled"]
"""Items in a complete evaluation run: both answers of every pqa_labeled row."""
COLUMNS = ("Question", "Knowledge", "Ground Truth", "Difficulty Level", "Hallucinated Answer", "Category of Hallucination")
DIFFICULTIES = ("easy", "medium", "hard")

UPSTREAM_COMMIT = "3c49c8ba80e47720333e508821967167ba048d49"
PROMPT_ASSET = Asset(
    name="medhallu/Detection/detection_vllm_notsurecase.py",
    url=f"https://raw.githubusercontent.com/MedHallu/MedHalu/{UPSTREAM_COMMIT}/Detection/detection_vllm_notsurecase.py",
    # UNVERIFIED: computed offline from an indexed copy of the file (13,706 characters whose
    # prompt strings match the authors'), not from bytes downloaded from GitHub. A mismatch
    # fails loudly on first download; see README "Prompt asset".
    sha256="88af15d177ba59084743e820fddf5240eafa59c384bf7d8a0a36e4fcfce74a20",
)

DEFAULT_CONFIG = "pqa_labeled"
DEFAULT_PAIRING = "both"
DEFAULT_SEED = 0
DEFAULT_KNOWLEDGE = False
DEFAULT_NOT_SURE = True
DEFAULT_NOT_SURE_REWARD = 0.0


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


class MedHalluTask(vf.Task[MedHalluData]):
    @vf.reward(weight=1.0)
    async def detection(self, task: MedHalluData, trace: vf.Trace) -> float:
        verdict = parse_reply(trace.last_reply, task.not_sure_offered)
        trace.info["verdict"] = verdict.code
        trace.info["pred_label"] = verdict.label
        return reward(verdict, task.label, task.not_sure_reward)

    @vf.metric
    async def correct(self, task: MedHalluData, trace: vf.Trace) -> float:
        return float(parse_reply(trace.last_reply, task.not_sure_offered).label == task.label)

    @vf.metric
    async def parsed(self, task: MedHalluData, trace: vf.Trace) -> float:
        """1 for any verdict, an abstention included; 0 for an INVALID reply."""
        return float(parse_reply(trace.last_reply, task.not_sure_offered).code is not None)

    @vf.metric
    async def not_sure(self, task: MedHalluData, trace: vf.Trace) -> float:
        return float(parse_reply(trace.last_reply, task.not_sure_offered).abstained)


class MedHalluConfig(vf.TasksetConfig):
    config: str = DEFAULT_CONFIG
    """Hub config: `pqa_labeled` (1,000 rows, the evaluation set) or `pqa_artificial`
    (9,000 rows, the training pool)."""
    split: Literal["eval", "train"] | None = None
    """The role the run gives the data; must agree with `config` (pqa_labeled = eval,
    pqa_artificial = train). Unset: taken from `config` and recorded."""
    pairing: Literal["both", "one"] = DEFAULT_PAIRING
    """`both`: two items per row (factual, then hallucinated). `one`: one item per row,
    chosen by a seeded draw from the row's own text (independent of row order)."""
    seed: int = DEFAULT_SEED
    """Seed of the `pairing = one` draw."""
    knowledge: bool = DEFAULT_KNOWLEDGE
    """Show the row's PubMedQA contexts as world knowledge."""
    not_sure: bool = DEFAULT_NOT_SURE
    """Offer `2` (not sure): the authors' text as published; false derives the binary variant."""
    not_sure_reward: float = DEFAULT_NOT_SURE_REWARD
    """Reward for an abstention (a right verdict earns 1, a wrong or INVALID one 0)."""
    difficulty: str = "all"
    """`all`, or only the rows of one difficulty: easy, medium, hard."""
    dataset_path: str | None = None
    """Local parquet/jsonl file in the Hugging Face schema of `config`, instead of the Hub."""
    revision: str | None = None
    """Hub revision; defaults to the pinned one."""

    @field_validator("config")
    @classmethod
    def _known_config(cls, value: str) -> str:
        return one_of("config", value, CONFIGS)

    @field_validator("difficulty")
    @classmethod
    def _known_difficulty(cls, value: str) -> str:
        return one_of("difficulty", value, ("all", *DIFFICULTIES))

    @field_validator("not_sure_reward")
    @classmethod
    def _reward_in_range(cls, value: float) -> float:
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"not_sure_reward {value} must lie in [0, 1] (a right verdict earns 1)")
        return value

    @model_validator(mode="after")
    def _split_matches_config(self) -> MedHalluConfig:
        role = CONFIG_ROLE[self.config]
        if self.split is not None and self.split != role:
            other = next(c for c, r in CONFIG_ROLE.items() if r == self.split)
            raise ValueError(
                f"split {self.split!r} with config {self.config!r}: {self.config} is MedHallu's "
                f"{role} set, and using it for {self.split} would mix training and evaluation "
                f"data; use config={other!r} for split={self.split!r}"
            )
        if self.not_sure_reward and not self.not_sure:
            raise ValueError("not_sure_reward is set but not_sure is false: no abstention can be rewarded")
        return self


def validate_rows(rows: list[dict], origin: str) -> None:
    require_columns(rows, COLUMNS, origin)
    for number, row in enumerate(rows, start=1):
        for column in COLUMNS:
            value = row[column]
            if column == "Knowledge":
                if not isinstance(value, list) or not value or not all(isinstance(c, str) for c in value):
                    raise DatasetError(f"{origin}: row {number} field 'Knowledge' must be a non-empty list of strings")
            elif not isinstance(value, str) or not value.strip():
                raise DatasetError(f"{origin}: row {number} field {column!r} is empty or not a string")
        if row["Difficulty Level"] not in DIFFICULTIES:
            raise DatasetError(
                f"{origin}: row {number} field 'Difficulty Level' is {row['Difficulty Level']!r}, not one of {DIFFICULTIES}"
            )


def draws_hallucinated(row: dict, seed: int) -> bool:
    """The `pairing = one` draw: a hash of the seed and the row's own text, so the same
    row gets the same item whatever its position."""
    key = "\x1f".join([str(seed), row["Question"], row["Ground Truth"], row["Hallucinated Answer"]])
    return hashlib.sha256(key.encode("utf-8")).digest()[0] & 1 == 1


def load_prompts(not_sure: bool) -> DetectionPrompts:
    prompts = extract_prompts(PROMPT_ASSET.text(), PROMPT_ASSET.name)
    return prompts if not_sure else remove_not_sure(prompts)


class MedHalluTaskset(vf.Taskset[MedHalluTask, MedHalluConfig]):
    def load(self) -> list[MedHalluTask]:
        cfg = self.config
        hub = HubDataset(id=DATASET_ID, revision=REVISION, config=cfg.config, split=SPLIT)
        loaded = load_rows(hub, cfg.dataset_path, cfg.revision)
        validate_rows(loaded.rows, loaded.origin)
        prompts = load_prompts(cfg.not_sure)
        provenance = {
            **loaded.provenance,
            "split": CONFIG_ROLE[cfg.config],
            "pairing": cfg.pairing,
            **({"seed": cfg.seed} if cfg.pairing == "one" else {}),
            "difficulty": cfg.difficulty,
            "prompt": {
                "variant": "official (not sure offered)" if cfg.not_sure else "derived: not-sure sentences removed",
                "knowledge": cfg.knowledge,
                "layout": "one user turn: system prompt + ' ' + user template",
                "asset": PROMPT_ASSET.provenance(),
            },
            "not_sure_reward": cfg.not_sure_reward,
        }
        tasks = []
        for number, row in enumerate(loaded.rows):
            if cfg.difficulty != "all" and row["Difficulty Level"] != cfg.difficulty:
                continue
            labels = (FACTUAL, HALLUCINATED)
            if cfg.pairing == "one":
                labels = (HALLUCINATED,) if draws_hallucinated(row, cfg.seed) else (FACTUAL,)
            for label in labels:
                answer = row["Hallucinated Answer"] if label == HALLUCINATED else row["Ground Truth"]
                knowledge = row["Knowledge"] if cfg.knowledge else None
                data = MedHalluData(
                    idx=len(tasks),
                    benchmark=ENV_ID,
                    source_id=f"{cfg.config}:{number}",
                    provenance=provenance,
                    prompt=user_message(prompts, row["Question"], answer, knowledge),
                    question=row["Question"],
                    answer=answer,
                    label=label,
                    difficulty=row["Difficulty Level"],
                    category=row["Category of Hallucination"],
                    not_sure_offered=cfg.not_sure,
                    not_sure_reward=cfg.not_sure_reward,
                )
                tasks.append(MedHalluTask(data, cfg.task))
        return tasks
