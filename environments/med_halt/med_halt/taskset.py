"""Med-HALT's tasks: options, the data each task carries, scoring and loading.

Each of the seven test sets is one Hub configuration; every row becomes one single-turn
task whose user message is the authors' few-shot prompt for that set (pinned prompt
assets, default version v0 with 2 shots drawn with a seed) followed by the row as
`Input: <dict>\\nOutput: `. The reply is read under every convention and graded by the
set's rule (see `scoring`); the reward is +1 for a right answer and 0 otherwise (the
paper's -0.25 for a wrong answer or a format error with `task.wrong_reward = -0.25`; its
points are always the `paper_points` metric, which the reports score). Tasks load set
by set in a fixed order, rows in file order (idx = position).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import verifiers.v1 as vf
from pydantic import Field, model_validator

from med_halt.benchmark import (
    DATASET,
    DEFAULT_NUM_SHOTS,
    DEFAULT_PROMPT_VERSION,
    DEFAULT_SHOT_SEED,
    DEMO_DIR,
    DEMO_PROMPT_FILES,
    ENV_ID,
    EVAL_FINGERPRINTS,
    FAKE,
    MEMORY,
    PAPER_POINTS_WRONG,
    PROMPT_FILES,
    SETS,
    SUBSETS,
    TRAINABLE,
    TRAINING_SPLIT_TYPES,
)
from med_halt.prompts import Preamble, build_preamble
from med_halt.rows import item_text, to_item
from med_halt.scoring import FAKE_RULES, IR_RULES, gold_reply, rules, score, wrong_reply
from medhal.kit.datasets import LOCAL_FORMATS, DatasetError, HubDataset, LoadedRows, load_rows
from medhal.kit.outcomes import CORRECT, PARSED
from medhal.kit.reasoning import truncation_info
from medhal.kit.roles import load_fingerprints, refuse_evaluation_items
from medhal.kit.task import BenchmarkConfig, BenchmarkData, RecordsSelection, validate_task

PAPER_POINTS = "paper_points"
"""Metric: the item's points under eq. 1 of the paper (+1 right, -0.25 otherwise) under the
run's reading, whatever the reward options (`binary_reward`, `task.wrong_reward`) pay."""

SubsetName = Literal[
    "reasoning_FCT",
    "reasoning_nota",
    "reasoning_fake",
    "IR_pmid2title",
    "IR_pubmedlink2title",
    "IR_title2pubmedlink",
    "IR_abstract2pubmedlink",
    "reasoning",
    "memory",
    "all",
]


class MedHaltData(BenchmarkData):
    test_set: str
    """Hub configuration of the item, e.g. `reasoning_FCT`."""
    family: str
    """`reasoning` or `memory`."""
    source_question: str
    """Cluster key shared by items built from the same source question or paper."""
    gold: str
    """The right answer: `correct_answer`, the requested title or link ("Unknown" for a
    fake paper), or "I do not know" for a fake question."""
    rule: str
    """Scoring rule: `exact` (FCT, NOTA), a fake_scoring or an ir_matching value."""
    split_type: str = ""
    """train/val/test/dev for reasoning items (the source exam's split); "" for IR."""
    source_dataset: str = ""
    """The exam collection a reasoning question comes from (medmcqa, headqa_en, ...)."""
    proposed_answer: str = ""
    """FCT: the answer put to the model for review."""
    verdict_gold: str = ""
    """FCT: `yes` when the proposed answer is right, else `no`."""
    decline_options: tuple[str, ...] = ()
    """Fake: the row's options that say "I do not know"."""
    choices: dict[str, str] = Field(default_factory=dict)
    """Reasoning sets: the options the model chooses from, by index ('0': 'Vitamin A', ...):
    the `medhal` reading resolves an answer given by index or as an option's bare text."""
    paper_exists: bool | None = None
    """IR: whether the paper is real."""


class MedHaltTaskConfig(vf.TaskConfig):
    wrong_reward: float = Field(0.0, ge=-1.0, le=0.0)
    """Reward for a wrong answer or a format error, between -1 and 0; -0.25 pays the paper's
    eq. 1 (report scores always use it: the `paper_points` metric). The default is 0, not the
    paper's -0.25: a rollout that fails before it is scored gets no reward from verifiers (the
    empty sum, 0), and a wrong answer must never earn less than failing; rewards of 0 and 1
    are also what prime-rl's pass@k needs. Under group-normalised advantages (GRPO) the two
    rewards teach the same: +1/-0.25 is an affine map of +1/0. Another value beside the
    taskset's `binary_reward` is refused."""
    invalid_reward: float | None = Field(None, ge=-1.0, le=0.0)
    """Reward for a format error alone (no answer read under the run's convention), between
    -1 and 0; unset (the default): `wrong_reward`, as eq. 1 of the paper counts a format
    error wrong. An RL knob: below `wrong_reward`, a reply out of format (a hedge, every
    option listed) is worse than an honest mistake."""


class MedHaltTask(vf.Task[MedHaltData, vf.State, MedHaltTaskConfig]):
    @vf.metric
    async def outcomes(self, task: MedHaltData, trace: vf.Trace) -> dict[str, float]:
        """Reads the reply once, under every convention, and grades each reading:
        `correct`/`parsed` (the run's convention), the same per convention, the FCT verdict
        and every rule of the set. The answers read go on `trace.info`."""
        scored = score(task, trace.last_reply)
        trace.info.update({**scored.info, **truncation_info(trace)})
        return {**scored.metrics, PAPER_POINTS: 1.0 if scored.metrics[CORRECT] else PAPER_POINTS_WRONG}

    @vf.reward(weight=1.0)
    async def points(self, trace: vf.Trace) -> float:
        """+1 for a right answer, `wrong_reward` (0; the paper's -0.25 as an option) for a
        wrong one and, when set, `invalid_reward` for a format error; under `binary_reward`
        1 or 0."""
        if trace.metrics[CORRECT]:
            return 1.0
        if self.data.binary_reward:
            return 0.0
        if not trace.metrics[PARSED] and self.config.invalid_reward is not None:
            return float(self.config.invalid_reward)
        return float(self.config.wrong_reward)

    async def validate(self, runtime: object = None) -> bool:
        """The answer dict a perfect model writes earns +1 and is read under every
        convention; a wrong one earns the wrong-answer reward (0 under `binary_reward`)."""
        worst = 0.0 if self.data.binary_reward else self.config.wrong_reward
        return await validate_task(self, gold_reply(self.data), wrong_reply(self.data), 1.0, worst)


class MedHaltConfig(BenchmarkConfig):
    REWARD_OPTIONS = ("task.wrong_reward", "task.invalid_reward")

    subset: SubsetName = "all"
    """A test set, `reasoning`, `memory` or `all`."""
    split_type: Literal["all", "train", "val", "test", "dev"] = "all"
    """Keep reasoning rows of one source split; `all` keeps every row, as the paper's
    full-set sizes do. IR rows have no split. A training role (`role = train`) needs train,
    val or dev: the test rows are the evaluation side. (A row filter, not the run's role,
    which is `role`.)"""
    prompt_version: Literal["v0", "v1", "v2"] = DEFAULT_PROMPT_VERSION
    """The authors' prompt version."""
    num_shots: int = Field(DEFAULT_NUM_SHOTS, ge=0, le=5)
    """Few-shot examples, 0 to 5."""
    shot_seed: int = DEFAULT_SHOT_SEED
    """Seed of the shot draw (each set draws with (seed, set name))."""
    fake_scoring: Literal["decline", "keywords"] = FAKE_RULES[0]
    """Fake questions: `decline` (declining is right) or `keywords` (the authors' rule)."""
    ir_matching: Literal["normalized", "exact"] = IR_RULES[1]
    """IR sets: `normalized` (link forms, title punctuation) or `exact` (the authors' rule)."""
    prompts: Literal["pinned", "demo"] = "pinned"
    """`pinned`: the authors' prompt files. `demo`: prompts written by medhal, for the demo
    rows only (a demo on a machine that cannot fetch the pinned files)."""
    dataset_path: str | None = None
    """A local file in the set's schema (one set), or a directory holding `<config>.<ext>`
    per selected set (csv, jsonl, json or parquet); default: the pinned Hub dataset."""
    revision: str | None = None
    """Hub revision; defaults to the pinned one."""
    task: MedHaltTaskConfig = MedHaltTaskConfig()

    @model_validator(mode="after")
    def _split_needs_reasoning_only(self) -> MedHaltConfig:
        memory = [c for c in SUBSETS[self.subset] if SETS[c].family == MEMORY]
        if self.split_type != "all" and memory:
            raise ValueError(
                f"split_type {self.split_type!r} filters reasoning rows, but subset {self.subset!r} "
                f"includes IR sets, which have no split ({', '.join(memory)}); use split_type 'all' "
                "or a reasoning subset"
            )
        return self

    @model_validator(mode="after")
    def _training_on_trainable_rows_only(self) -> MedHaltConfig:
        if self.role != "train":
            return self
        held = [name for name in SUBSETS[self.subset] if name not in TRAINABLE]
        if held:
            raise ValueError(
                f"role 'train' with subset {self.subset!r}: {', '.join(held)} "
                f"{'is an evaluation-only set' if len(held) == 1 else 'are evaluation-only sets'} "
                f"(see the README's train/eval table); train on subset {TRAINABLE[0]!r}"
            )
        if self.split_type not in TRAINING_SPLIT_TYPES:
            raise ValueError(
                f"role 'train' with split_type {self.split_type!r}: the test rows are the evaluation "
                f"side; use split_type {' or '.join(map(repr, TRAINING_SPLIT_TYPES))}"
            )
        return self

    @model_validator(mode="after")
    def _demo_prompts_with_demo_rows_only(self) -> MedHaltConfig:
        if self.prompts == "demo" and (
            self.dataset_path is None or Path(self.dataset_path).resolve() != DEMO_DIR.resolve()
        ):
            raise ValueError(
                "prompts 'demo' is for the bundled demo rows only (dataset_path = the demo folder)"
            )
        return self

    @property
    def sets(self) -> tuple[str, ...]:
        return SUBSETS[self.subset]

    def rule(self, test_set: str) -> str:
        allowed = rules(test_set)
        if allowed == FAKE_RULES:
            return self.fake_scoring
        if allowed == IR_RULES:
            return self.ir_matching
        return allowed[0]


def set_sources(dataset_path: str | None, sets: tuple[str, ...]) -> dict[str, Path | None]:
    """Where each set's rows come from: None (the Hub) or a local file."""
    if dataset_path is None:
        return dict.fromkeys(sets)
    path = Path(dataset_path).expanduser()
    if path.is_file():
        if len(sets) > 1:
            raise DatasetError(
                f"dataset_path {str(path)!r} is a file, but the subset selects {len(sets)} sets; "
                f"give a directory holding <config>.<ext> for each of {', '.join(sets)}"
            )
        return {sets[0]: path}
    if not path.is_dir():
        raise DatasetError(f"dataset_path {str(path)!r} does not exist")
    sources: dict[str, Path | None] = {}
    for name in sets:
        found = [path / f"{name}{ext}" for ext in LOCAL_FORMATS if (path / f"{name}{ext}").is_file()]
        if not found:
            raise DatasetError(
                f"dataset_path {str(path)!r}: no file for set {name!r}; expected "
                f"{path / name}.<ext> with <ext> one of {', '.join(e.lstrip('.') for e in LOCAL_FORMATS)}"
            )
        if len(found) > 1:
            raise DatasetError(
                f"dataset_path {str(path)!r}: several files for set {name!r}: {', '.join(map(str, found))}"
            )
        sources[name] = found[0]
    return sources


def load_set(name: str, source: Path | None, revision: str | None) -> LoadedRows:
    hub = HubDataset(DATASET.id, DATASET.revision, config=name, split=DATASET.split)
    return load_rows(hub, source, revision)


class MedHaltTaskset(RecordsSelection, vf.Taskset[MedHaltTask, MedHaltConfig]):
    def load(self) -> Iterator[MedHaltTask]:
        """Checks options, data sources and prompt assets for every selected set at once,
        then loads the sets' rows lazily (`-n 10` reads only the first set)."""
        cfg = self.config
        sources = set_sources(cfg.dataset_path, cfg.sets)
        files = PROMPT_FILES if cfg.prompts == "pinned" else DEMO_PROMPT_FILES
        preambles = {
            name: build_preamble(files[name], cfg.prompt_version, cfg.num_shots, cfg.shot_seed, name)
            for name in cfg.sets
        }
        return self._tasks(sources, preambles)

    def _refuse_evaluation_items(self, name: str, loaded: LoadedRows) -> None:
        """A training load's rows (those its split_type keeps) against Med-HALT's evaluation
        fingerprints: one line naming the file and the count when any row is an evaluation item."""
        spec, wanted = SETS[name], self.config.split_type

        def kept() -> Iterator[list[tuple[str, str]]]:
            for number, row in enumerate(loaded.rows, start=1):
                model_input, fields = to_item(spec, row, f"{loaded.origin}: row {number}")
                if fields.get("split_type") == wanted:
                    yield [item_text(model_input, fields)]

        refuse_evaluation_items(load_fingerprints(EVAL_FINGERPRINTS), kept(), loaded.origin, "Med-HALT")

    def _tasks(
        self, sources: dict[str, Path | None], preambles: dict[str, Preamble]
    ) -> Iterator[MedHaltTask]:
        cfg = self.config
        idx = 0
        for name, source in sources.items():
            spec, preamble = SETS[name], preambles[name]
            loaded = load_set(name, source, cfg.revision)
            files = (PROMPT_FILES if cfg.prompts == "pinned" else DEMO_PROMPT_FILES)[name]
            assets = [files.prompts] + ([files.shots] if preamble.shot_ids else [])
            provenance = cfg.provenance(
                ENV_ID,
                {
                    **loaded.provenance,
                    "test_set": name,
                    "prompt_version": cfg.prompt_version,
                    "num_shots": cfg.num_shots,
                    "shot_seed": cfg.shot_seed,
                    "shot_ids": list(preamble.shot_ids),
                    "prompts": cfg.prompts,
                    "prompt_assets": [a.provenance() for a in assets],
                    "scoring_rule": cfg.rule(name),
                    "reward": {
                        **cfg.task.model_dump(mode="json", include={"wrong_reward", "invalid_reward"}),
                        "binary_reward": cfg.binary_reward,
                    },
                },
            )
            if cfg.role == "train":
                self._refuse_evaluation_items(name, loaded)
            kept = 0
            first_seen: dict[str, int] = {}
            for number, row in enumerate(loaded.rows, start=1):
                model_input, fields = to_item(spec, row, f"{loaded.origin}: row {number}")
                # Every upstream row has its own uuid: a repeated one means a corrupt file,
                # not a second item.
                source_id = fields["source_id"]
                if source_id in first_seen:
                    raise DatasetError(
                        f"{loaded.origin}: row {number} field 'id' repeats {source_id!r} "
                        f"(first at row {first_seen[source_id]})"
                    )
                first_seen[source_id] = number
                if cfg.split_type != "all" and fields.get("split_type") != cfg.split_type:
                    continue
                data = MedHaltData(
                    idx=idx,
                    benchmark=ENV_ID,
                    parser=cfg.parser,
                    provenance=provenance,
                    prompt=preamble.render(model_input),
                    test_set=name,
                    family=spec.family,
                    rule=cfg.rule(name),
                    binary_reward=cfg.binary_reward,
                    **fields,
                )
                yield MedHaltTask(data, cfg.task)
                idx += 1
                kept += 1
            if not kept:
                why = f" with split_type {cfg.split_type!r}" if cfg.split_type != "all" else ""
                hint = " (all fake questions are in the train split)" if name == FAKE.config and why else ""
                raise DatasetError(f"{loaded.origin}: set {name!r} has no rows{why}{hint}")
