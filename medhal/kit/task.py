"""What every medhal task carries, the options every environment shares, and scoring a
reply outside a rollout.

`BenchmarkData` adds to verifiers' `TaskData` the fields our reports and the offline
scorer rely on: the benchmark id (so a trace from another benchmark is caught), the
dataset's own id for the row, the reading convention that drives the reward, the run's
provenance (dataset revision or file sha256, prompt assets, shots and seeds, package
versions) and the task selection (how many tasks the run must have), so every trace says
where it came from and a report can tell a complete run from a partial one.

`BenchmarkConfig` holds the taskset options every environment shares (`parser`, `shard`,
`binary_reward`, `role`) and builds the provenance block, so an environment's config only adds its
own options.
`RecordsSelection` stamps the selection onto the tasks a run selects; it and the trace
a reply is scored on come from the verifiers line installed (`medhal.kit.lines`).

`reply_trace` builds the trace a single-turn rollout would have produced for a given
reply, so `medhal score`, the v0 environment and tests score with the very same
`Task.score` code as a live rollout.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import Any, ClassVar

import verifiers.v1 as vf
from pydantic import Field, ValidationError, field_validator, model_validator

from medhal.kit.lines import RecordsSelection, new_trace
from medhal.kit.outcomes import PARSED, Convention
from medhal.kit.provenance import code_versions
from medhal.kit.roles import Role, role_record
from medhal.kit.selection import selection_record
from medhal.kit.shards import parse_shard

__all__ = [
    "BenchmarkConfig",
    "BenchmarkData",
    "RecordsSelection",
    "check_replies",
    "prompt_messages",
    "reply_trace",
    "score_reply",
    "selection_record",
    "validate_task",
]

logger = logging.getLogger(__name__)


class BenchmarkData(vf.TaskData):
    benchmark: str
    """Environment id (e.g. the value of the environment's `ENV_ID`)."""
    source_id: str
    """The dataset's own identifier for the row this item comes from."""
    parser: Convention = "medhal"
    """The reading convention that decides `correct` and the reward (all three are recorded):
    the run's `parser` option, recorded on every trace as `task.data.parser` (see
    `BenchmarkConfig.parser` for why that name stays). Code that means the concept reads
    `convention`."""
    provenance: dict[str, Any] = Field(default_factory=dict)
    """Dataset id and revision or file sha256, asset hashes, prompt version, shots, seeds,
    options and package versions: identical on every task of one run."""
    selection: dict[str, Any] = Field(default_factory=dict)
    """How the run selected its tasks: `n_expected` (tasks in the run), `num_tasks` and
    `shuffle` as given to `select`, and `idx_sha256` of the selected idx list."""
    binary_reward: bool = False
    """The run's `binary_reward` option: the reward is 1 for a right answer and 0 otherwise.
    On the task's data (not only the config) so that a trainer's env server, which
    re-validates each task's data, pays the reward the run declared."""

    @property
    def convention(self) -> Convention:
        """The reading convention behind the reward (the `parser` field, by its concept's name)."""
        return self.parser


SOURCE_OPTIONS = ("prompts", "dataset_path", "revision")
"""Options that say where rows and prompts come from: recorded after the others."""


class BenchmarkConfig(vf.TasksetConfig):
    """Taskset options every medhal environment shares. An environment's config subclasses
    it and adds only its own options; its loader records the run's provenance with
    `provenance`."""

    parser: Convention = "medhal"
    """The reading convention behind the reward: medhal, authors or strict (all three are
    recorded on every trace). Everywhere else the code calls this a convention; the option
    keeps the name it was published with, because renaming it would break what users hold:
    `--taskset.parser` on command lines, `parser = ...` in eval and prime-rl configs, and
    `task.data.parser` in every trace already written (which `medhal report` reads)."""
    shard: str | None = None
    """`i/k`: run only every k-th selected task starting at the i-th (0-based), keeping each
    task's idx, so k eval processes against one server split a run with no overlap;
    `medhal report --merge` reports the k run directories as one run."""
    binary_reward: bool = False
    """The reward is 1 for a right answer and 0 for anything else (wrong, abstention,
    INVALID), in place of the environment's reward knobs. For trainers whose figures need
    0/1 rewards (prime-rl computes pass@k and pass^k only then). The report's figures never
    depend on the reward."""

    role: Role | None = None
    """The role the run gives its data: `eval` (an evaluation) or `train` (a training
    source). A training role is refused for the sets a benchmark keeps for evaluation and
    for rows that hold evaluation items (their fingerprints ship with the environment).
    Unset: an evaluation, and every trace says the role was not stated
    (`provenance.role`), so a trainer that forgets it leaves that mark on its rollouts."""

    REWARD_OPTIONS: ClassVar[tuple[str, ...]] = ()
    """The environment's reward knobs, as dotted option names (`invalid_reward`,
    `task.wrong_reward`): what `binary_reward` replaces. Each is either unset, at its
    default, or 0 under `binary_reward`; any other value asks for a reward that
    `binary_reward` does not pay, and the config is refused rather than one of the two
    being ignored."""

    @field_validator("shard")
    @classmethod
    def _shard_syntax(cls, shard: str | None) -> str | None:
        if shard is not None and parse_shard(shard) is None:
            raise ValueError(f"shard {shard!r} is not i/k with i below k (0/k .. k-1/k, e.g. 0/4 .. 3/4)")
        return shard

    @model_validator(mode="after")
    def _binary_reward_alone(self) -> BenchmarkConfig:
        if not self.binary_reward:
            return self
        for name in self.REWARD_OPTIONS:
            value, default = option_value(self, name)
            if value is not None and value not in (default, 0):
                keep = "unset" if default is None else f"at its default {default}"
                raise ValueError(
                    f"binary_reward pays 0 for every reply that is not right, but {name} is {value}: "
                    f"choose one (beside binary_reward, leave {name} {keep} or 0)"
                )
        return self

    def options(self) -> dict[str, Any]:
        """The options as every trace records them: the environment's own, the shared ones
        (`role`, `binary_reward`, the reading convention), then where rows and prompts come
        from. `shard` is left out: the shards of one run differ in it and must share one
        provenance (the selection records it), and so is verifiers 0.4's `system_prompt`
        override file (a taskset option of the run, not of the environment; a task's own
        `system_prompt` is on its data), so both lines record the same options."""
        dump = self.model_dump(mode="json", exclude={"id", "task", "shard", "system_prompt"})
        last = ["role", "binary_reward", "parser", *(name for name in SOURCE_OPTIONS if name in dump)]
        return {**{k: v for k, v in dump.items() if k not in last}, **{k: dump[k] for k in last}}

    def provenance(self, environment: str, record: Mapping[str, Any]) -> dict[str, Any]:
        """The provenance block of every task of a run: the environment's `record` (data
        source, prompts, shots), the reading convention, the options and the versions of
        the code (`environment` names its distribution)."""
        return {
            **record,
            "role": role_record(self.role),
            "parser": self.parser,
            "options": self.options(),
            "code": code_versions(environment),
        }


def option_value(config: vf.TasksetConfig, name: str) -> tuple[Any, Any]:
    """The value and the default of a dotted option (`task.wrong_reward`) of `config`."""
    *path, leaf = name.split(".")
    owner: Any = config
    for part in path:
        owner = getattr(owner, part)
    return getattr(owner, leaf), type(owner).model_fields[leaf].default


def prompt_messages(data: vf.TaskData) -> list[vf.Message]:
    messages: list[vf.Message] = []
    if data.system_prompt:
        messages.append(vf.SystemMessage(content=data.system_prompt))
    if isinstance(data.prompt, str):
        messages.append(vf.UserMessage(content=data.prompt))
    elif data.prompt is not None:
        messages.extend(data.prompt)
    return messages


def reply_trace(
    task: vf.Task, reply: str | None, reasoning: str | None = None, finish_reason: str | None = None
) -> vf.Trace:
    """The trace of a single-turn rollout of `task` answered with `reply` (None: no reply),
    with the `reasoning` returned beside it and the model call's `finish_reason` where a
    recorded rollout had them (`medhal rescore` keeps both; verifiers' own finish reasons
    only, another is left out)."""
    nodes = []
    for i, message in enumerate(prompt_messages(task.data)):
        nodes.append(vf.MessageNode(parent=i - 1 if i else None, message=message))
    if reply is not None:
        nodes.append(
            vf.MessageNode(
                parent=len(nodes) - 1 if nodes else None,
                message=vf.AssistantMessage(content=reply, reasoning_content=reasoning),
                sampled=True,
            )
        )
    trace = new_trace(task, nodes)
    if reply is not None and finish_reason is not None:
        with contextlib.suppress(ValidationError):  # a finish reason this verifiers does not name
            trace.calls.append(vf.ModelCall(node=len(nodes) - 1, finish_reason=finish_reason))
    return trace


async def score_reply(
    task: vf.Task, reply: str | None, reasoning: str | None = None, finish_reason: str | None = None
) -> vf.Trace:
    """The trace of a rollout of `task` that answered `reply` (None: no reply at all), with
    the reasoning and finish reason it came with (`reply_trace`), scored by the task's own
    scoring, as a live rollout is."""
    trace = reply_trace(task, reply, reasoning, finish_reason)
    await task.score(trace)
    trace.stop("agent_completed")
    return trace


async def check_replies(task: vf.Task, gold: str, wrong: str, best: float, worst: float) -> list[str]:
    """Why `task` is not valid (empty when it is): the reply a perfect model gives in the
    prompt's own format must earn the `best` reward and be readable under every reading
    convention, and a wrong reply must earn the `worst` (so a reward that always pays is
    caught). Both go through the task's own scoring, as a rollout's reply would."""
    problems = []
    for kind, reply, want in (("gold", gold, best), ("wrong", wrong, worst)):
        trace = await score_reply(task, reply)
        reward = trace.reward
        if reward != want:
            problems.append(f"the {kind} reply {reply[:200]!r} earns {reward}, not {want}")
        unread = sorted(k for k, v in trace.metrics.items() if k.startswith(f"{PARSED}_") and not v)
        if kind == "gold" and unread:
            problems.append(f"the gold reply is not read under {', '.join(unread)}")
    return problems


async def validate_task(task: vf.Task, gold: str | None, wrong: str, best: float, worst: float) -> bool:
    """`Task.validate` for a benchmark task: False, with the reason logged against the
    row's source id, when the task cannot be answered (`gold` is None: no gold reply can
    be written) or `check_replies` finds a problem."""
    data = task.data
    problems = (
        ["no gold reply can be written for it"]
        if gold is None
        else await check_replies(task, gold, wrong, best, worst)
    )
    for problem in problems:
        logger.warning("%s %s (idx %s) is invalid: %s", data.benchmark, data.source_id, data.idx, problem)
    return not problems
