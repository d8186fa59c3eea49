"""MedFact-Bench: medical claim verification against a retrieved article.

Protocol (Med-V1 paper): zero-shot; the dataset's one system prompt is sent unchanged and
the row's `user_prompt` as the user turn; the reply's first `<score>` (-2..2) is mapped to
SUPPORT / NEI / CONTRADICT and compared with the gold label. The primary figure is the
macro accuracy over the five components.
"""

from __future__ import annotations

from collections import Counter

import verifiers.v1 as vf
from pydantic import field_validator

from medhal.datasets import DatasetError, HubDataset, load_rows, require_columns
from medhal.options import one_of
from medhal.task import BenchmarkData

from medfact_bench.scoring import LABELS, parse_reply, strict_format

ENV_ID = "medfact-bench"
DATASET = HubDataset(id="ncbi/MedFact-Bench", revision="249028caf7ad5a3e63331269a606f4b2696693ed")
COLUMNS = ("dataset", "claim", "source", "label", "system_prompt", "user_prompt")
COMPONENTS = {"scifact": 340, "healthver": 903, "medaesqa": 9106, "pubmedqa-fact": 500, "bioasq-fact": 3425}
FULL_SIZE = sum(COMPONENTS.values())  # 14,274
EVAL_SPLIT = "test"


class MedFactData(BenchmarkData):
    dataset: str
    """Component: scifact, healthver, medaesqa, pubmedqa-fact or bioasq-fact."""
    claim: str
    label: str
    """Gold label: SUPPORT, NEI or CONTRADICT."""


class MedFactTask(vf.Task[MedFactData]):
    @vf.reward(weight=1.0)
    async def accuracy(self, task: MedFactData, trace: vf.Trace) -> float:
        parsed = parse_reply(trace.last_reply)
        trace.info["parsed_score"] = parsed.score
        trace.info["pred_label"] = parsed.label
        return float(parsed.label == task.label)

    @vf.metric
    async def parseable_score(self, trace: vf.Trace) -> float:
        return float(parse_reply(trace.last_reply).score is not None)

    @vf.metric
    async def strict_format(self, trace: vf.Trace) -> float:
        return float(strict_format(trace.last_reply))


class MedFactConfig(vf.TasksetConfig):
    subset: str = "all"
    """`all`, or one component: scifact, healthver, medaesqa, pubmedqa-fact, bioasq-fact."""
    split: str = EVAL_SPLIT
    """Evaluation only: the dataset's single split holds test items, so `test` is the only value."""
    dataset_path: str | None = None
    """Local parquet/jsonl/csv file in the Hugging Face schema, instead of the Hub."""
    revision: str | None = None
    """Hub revision; defaults to the pinned one."""

    @field_validator("subset")
    @classmethod
    def _known_subset(cls, value: str) -> str:
        return one_of("subset", value, ("all", *COMPONENTS))

    @field_validator("split")
    @classmethod
    def _evaluation_only(cls, value: str) -> str:
        if value != EVAL_SPLIT:
            raise ValueError(
                f"split {value!r}: MedFact-Bench is an evaluation-only benchmark; its single "
                f"Hub split holds test items and there is no training split (use split={EVAL_SPLIT!r})"
            )
        return value


def validate_rows(rows: list[dict], origin: str) -> str:
    """Check columns, labels, components and the single system prompt; return the prompt."""
    require_columns(rows, COLUMNS, origin)
    for number, row in enumerate(rows, start=1):
        for column in COLUMNS:
            value = row[column]
            if not isinstance(value, str) or (column != "system_prompt" and not value.strip()):
                raise DatasetError(f"{origin}: row {number} field {column!r} is empty or not a string")
        if row["label"] not in LABELS:
            raise DatasetError(f"{origin}: row {number} field 'label' is {row['label']!r}, not one of {LABELS}")
        if row["dataset"] not in COMPONENTS:
            raise DatasetError(
                f"{origin}: row {number} field 'dataset' is {row['dataset']!r}, not one of {list(COMPONENTS)}"
            )
    prompts = Counter(row["system_prompt"] for row in rows)
    if len(prompts) != 1:
        raise DatasetError(f"{origin}: expected exactly one distinct system_prompt, found {len(prompts)}")
    return next(iter(prompts))


class MedFactTaskset(vf.Taskset[MedFactTask, MedFactConfig]):
    def load(self) -> list[MedFactTask]:
        cfg = self.config
        loaded = load_rows(DATASET, cfg.dataset_path, cfg.revision)
        system_prompt = validate_rows(loaded.rows, loaded.origin)
        provenance = {**loaded.provenance, "subset": cfg.subset, "prompt": "dataset system_prompt (verbatim)"}
        tasks = []
        for number, row in enumerate(loaded.rows):
            if cfg.subset != "all" and row["dataset"] != cfg.subset:
                continue
            data = MedFactData(
                idx=len(tasks),
                benchmark=ENV_ID,
                source_id=f"{row['dataset']}:{number}",
                provenance=provenance,
                prompt=row["user_prompt"],
                system_prompt=system_prompt,
                dataset=row["dataset"],
                claim=row["claim"],
                label=row["label"],
            )
            tasks.append(MedFactTask(data, cfg.task))
        return tasks
