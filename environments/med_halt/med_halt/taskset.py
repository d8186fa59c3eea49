"""Med-HALT: reasoning and memory hallucination tests for medical LLMs (Pal et al., 2023).

Protocol. Each of the seven test sets is one Hub configuration; every row becomes one
single-turn task whose user message is the authors' few-shot prompt for that set (pinned
prompt assets, default version v0 with 2 shots drawn with a seed) followed by the row as
`Input: <dict>\\nOutput: `. The reply's answer dict is parsed and graded by the set's rule
(see `scoring`); the reward is +1 for a right answer and -0.25 otherwise, format errors
included, so guessing is penalised as in the paper. Tasks load set by set in a fixed
order, rows in file order (idx = position).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import verifiers.v1 as vf
from pydantic import field_validator, model_validator

from medhal.assets import Asset
from medhal.datasets import LOCAL_FORMATS, DatasetError, HubDataset, LoadedRows, load_rows
from medhal.options import one_of
from medhal.task import BenchmarkData

from med_halt.prompts import PROMPT_VERSIONS, SHOT_MIX, Preamble, PromptFiles, build_preamble
from med_halt.rows import SPLIT_TYPES, to_item
from med_halt.scoring import FAKE_RULES, IR_RULES, Grade, grade, rules
from med_halt.sets import FAKE, MEMORY, SETS, SUBSETS

ENV_ID = "med-halt"
DATASET_ID = "openlifescienceai/Med-HALT"
DATASET_REVISION = "d1e8d04295742df7abc485062344fe328e141395"
"""Head of the dataset's main branch as shown on the Hub's web pages (commit d1e8d04,
"updated Readme", the 7th commit). Not yet confirmed by a download from this project:
see the README."""
DATASET_SPLIT = "train"
"""Each configuration's only split; it holds the whole test set."""

PROMPTS_COMMIT = "3dfe1e4efa4f565a610e90328500b14c16c1e81c"
PROMPTS_URL = f"https://raw.githubusercontent.com/medhalt/medhalt/{PROMPTS_COMMIT}/medhalt/prompts"
_PROMPT_SHA256 = {
    "reasoning_FCT": (
        "7cca99c89d84bd4ec34c4e651d9e8d62d8588bd2092e5c0bbcdb4eaa845a4bcc",
        "e4d1a0160948676732abfe7ac2bfd6711aff29dabd3a3a53bb37a015c0c6a319",
    ),
    "Reasoning_Nota": (
        "2d770ab4385e92913c67617c9b2f3feccd4c26c84f20774af7bdefd754c33194",
        "de26a1a556c26417cd54bb550dd272d4e5bd10d325b27b6173584e07970e6b13",
    ),
    "reasoning_Fake": (
        "974d135adae8b6578c4705cc209283ba8d4ee7c1e62e282e042aa9c15a72ca67",
        "e69519550966fa57c17b898b9cd65341a389d0d37f1f423b1a795a45c2df6b7d",
    ),
    "IR_pmid2title": (
        "095055e8f66b1d5a8e56f004b22a544f620525ecfc3d1777f36c2c080e776d6e",
        "781fdd4b59c97722be8e0a8f3deb3c05702ef3a05ab044eb7694689b7f9cda57",
    ),
    "IR_pubmedlink2title": (
        "b3f089cd5335508442dd0d2d53c9a86d3dc36f97e35461a340c7a19d27f1c535",
        "83984ab01adcd91671e83489e0086839edf2387f0c025fbcba53587384b19099",
    ),
    "IR_title2pubmedlink": (
        "833eac91ee128a777e360c2f94522189d9f139a5a8e6853abea2278ed70685e3",
        "b5c9b3164d5fe76f1219f166b7da3d66e010858b0d80fa899bcd3e012cb94ae4",
    ),
    "IR_abstract2pubmedlink": (
        "5695ade37ae2d324ccafb1f25040bc189dff9e9ffdc36da9943c662a6ecf58f8",
        "de73bda2366d8437ffa86e39f5ea0d617915086cff9d21af34cb4a70ee6b98f8",
    ),
}
"""Prompt folder -> sha256 of (prompts.json, shots.json) at PROMPTS_COMMIT."""


def _asset(prompt_dir: str, file: str, sha256: str) -> Asset:
    return Asset(f"medhalt/prompts/{prompt_dir}/{file}", f"{PROMPTS_URL}/{prompt_dir}/{file}", sha256)


PROMPT_FILES: dict[str, PromptFiles] = {
    spec.config: PromptFiles(
        _asset(spec.prompt_dir, "prompts.json", _PROMPT_SHA256[spec.prompt_dir][0]),
        _asset(spec.prompt_dir, "shots.json", _PROMPT_SHA256[spec.prompt_dir][1]),
    )
    for spec in SETS.values()
}
"""Test set -> its pinned prompt assets."""

DEFAULT_PROMPT_VERSION = "v0"
DEFAULT_NUM_SHOTS = 2
DEFAULT_SHOT_SEED = 0
WRONG_REWARD = -0.25
"""Eq. 1 of the paper: a wrong answer costs a quarter point."""


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
    paper_exists: bool | None = None
    """IR: whether the paper is real."""


class MedHaltTaskConfig(vf.TaskConfig):
    wrong_reward: float = WRONG_REWARD
    """Reward for a wrong answer or a format error (RL knob; report scores always use -0.25)."""

    @field_validator("wrong_reward")
    @classmethod
    def _not_positive(cls, value: float) -> float:
        if not -1.0 <= value <= 0.0:
            raise ValueError(f"wrong_reward {value} must be between -1 and 0 (a right answer earns +1)")
        return value


class MedHaltTask(vf.Task[MedHaltData, vf.State, MedHaltTaskConfig]):
    def _grade(self, task: MedHaltData, trace: vf.Trace) -> Grade:
        return grade(
            task.test_set,
            trace.last_reply,
            task.gold,
            task.rule,
            verdict_gold=task.verdict_gold,
            decline_options=task.decline_options,
            paper_exists=task.paper_exists,
        )

    @vf.metric
    async def correct(self, task: MedHaltData, trace: vf.Trace) -> float:
        """1 when the answer is right under the run's rule. Also records on `trace.info` the
        extracted answer, how the reply was read, and the outcome under every rule of the set."""
        graded = self._grade(task, trace)
        trace.info.update({"answer": graded.answer, "parse_method": graded.method, **graded.outcomes})
        return float(graded.correct)

    @vf.metric
    async def parsed(self, task: MedHaltData, trace: vf.Trace) -> float:
        """1 when the reply held the set's answer field (0: a format error)."""
        return float(self._grade(task, trace).parsed)

    @vf.reward(weight=1.0)
    async def points(self, task: MedHaltData, trace: vf.Trace) -> float:
        return 1.0 if self._grade(task, trace).correct else self.config.wrong_reward


class MedHaltConfig(vf.TasksetConfig):
    subset: str = "all"
    """A test set (reasoning_FCT, reasoning_nota, reasoning_fake, IR_pmid2title,
    IR_pubmedlink2title, IR_title2pubmedlink, IR_abstract2pubmedlink), `reasoning`,
    `memory` or `all`."""
    split_type: str = "all"
    """Keep reasoning rows of one source split (train, val, test, dev); `all` keeps every
    row, as the paper's full-set sizes do. IR rows have no split."""
    prompt_version: str = DEFAULT_PROMPT_VERSION
    """The authors' prompt version: v0, v1 or v2."""
    num_shots: int = DEFAULT_NUM_SHOTS
    """0 to 5 few-shot examples."""
    shot_seed: int = DEFAULT_SHOT_SEED
    """Seed of the shot draw (each set draws with (seed, set name))."""
    fake_scoring: str = FAKE_RULES[0]
    """Fake questions: `decline` (declining is right) or `keywords` (the authors' rule)."""
    ir_matching: str = IR_RULES[1]
    """IR sets: `normalized` (link forms, title punctuation) or `exact` (the authors' rule)."""
    dataset_path: str | None = None
    """A local file in the set's schema (one set), or a directory holding `<config>.<ext>`
    per selected set (csv, jsonl, json or parquet); default: the pinned Hub dataset."""
    revision: str | None = None
    """Hub revision; defaults to the pinned one."""
    task: MedHaltTaskConfig = MedHaltTaskConfig()

    @field_validator("subset")
    @classmethod
    def _known_subset(cls, value: str) -> str:
        return one_of("subset", value, tuple(SUBSETS))

    @field_validator("split_type")
    @classmethod
    def _known_split(cls, value: str) -> str:
        return one_of("split_type", value, ("all", *SPLIT_TYPES))

    @field_validator("prompt_version")
    @classmethod
    def _known_version(cls, value: str) -> str:
        return one_of("prompt_version", value, PROMPT_VERSIONS)

    @field_validator("num_shots")
    @classmethod
    def _shot_count(cls, value: int) -> int:
        if value not in SHOT_MIX:
            raise ValueError(f"num_shots {value} is not between 0 and {max(SHOT_MIX)}")
        return value

    @field_validator("fake_scoring")
    @classmethod
    def _fake_rule(cls, value: str) -> str:
        return one_of("fake_scoring", value, FAKE_RULES)

    @field_validator("ir_matching")
    @classmethod
    def _ir_rule(cls, value: str) -> str:
        return one_of("ir_matching", value, IR_RULES)

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
            raise DatasetError(f"dataset_path {str(path)!r}: several files for set {name!r}: {', '.join(map(str, found))}")
        sources[name] = found[0]
    return sources


def load_set(name: str, source: Path | None, revision: str | None) -> LoadedRows:
    return load_rows(HubDataset(DATASET_ID, DATASET_REVISION, config=name, split=DATASET_SPLIT), source, revision)


class MedHaltTaskset(vf.Taskset[MedHaltTask, MedHaltConfig]):
    def load(self) -> Iterator[MedHaltTask]:
        """Checks options, data sources and prompt assets for every selected set at once,
        then loads the sets' rows lazily (`-n 10` reads only the first set)."""
        cfg = self.config
        sources = set_sources(cfg.dataset_path, cfg.sets)
        preambles = {
            name: build_preamble(PROMPT_FILES[name], cfg.prompt_version, cfg.num_shots, cfg.shot_seed, name)
            for name in cfg.sets
        }
        return self._tasks(sources, preambles)

    def _tasks(self, sources: dict[str, Path | None], preambles: dict[str, Preamble]) -> Iterator[MedHaltTask]:
        cfg = self.config
        idx = 0
        for name, source in sources.items():
            spec, preamble = SETS[name], preambles[name]
            loaded = load_set(name, source, cfg.revision)
            files = PROMPT_FILES[name]
            assets = [files.prompts] + ([files.shots] if preamble.shot_ids else [])
            provenance = {
                **loaded.provenance,
                "test_set": name,
                "prompt_version": cfg.prompt_version,
                "num_shots": cfg.num_shots,
                "shot_seed": cfg.shot_seed,
                "shot_ids": list(preamble.shot_ids),
                "prompt_assets": [a.provenance() for a in assets],
                "scoring_rule": cfg.rule(name),
                "split_type": cfg.split_type,
            }
            kept = 0
            first_seen: dict[str, int] = {}
            for number, row in enumerate(loaded.rows, start=1):
                item = to_item(spec, row, f"{loaded.origin}: row {number}")
                # Every upstream row has its own uuid: a repeated one means a corrupt file,
                # not a second item.
                if item.source_id in first_seen:
                    raise DatasetError(
                        f"{loaded.origin}: row {number} field 'id' repeats {item.source_id!r} "
                        f"(first at row {first_seen[item.source_id]})"
                    )
                first_seen[item.source_id] = number
                if cfg.split_type != "all" and item.split_type != cfg.split_type:
                    continue
                data = MedHaltData(
                    idx=idx,
                    benchmark=ENV_ID,
                    source_id=item.source_id,
                    provenance=provenance,
                    prompt=preamble.render(item.model_input),
                    test_set=name,
                    family=spec.family,
                    source_question=item.source_question,
                    gold=item.gold,
                    rule=cfg.rule(name),
                    split_type=item.split_type,
                    source_dataset=item.source_dataset,
                    proposed_answer=item.proposed_answer,
                    verdict_gold=item.verdict_gold,
                    decline_options=item.decline_options,
                    paper_exists=item.paper_exists,
                )
                yield MedHaltTask(data, cfg.task)
                idx += 1
                kept += 1
            if not kept:
                why = f" with split_type {cfg.split_type!r}" if cfg.split_type != "all" else ""
                hint = " (all fake questions are in the train split)" if name == FAKE.config and why else ""
                raise DatasetError(f"{loaded.origin}: set {name!r} has no rows{why}{hint}")
