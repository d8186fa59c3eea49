"""Reward audit: can a policy farm the reward with replies a careful human would not accept?

For every environment setting (each Med-HALT test set, MedHallu with and without "not sure",
MedFact-Bench), this scores degenerate policies through the environment's own `Task.score`
(the rubric a rollout runs), under each reading convention (`medhal`, the default reward;
`authors`; `strict`), next to chance and the oracle:

- **constant**: always the same answer in the prompt's own format (each label; for multiple
  choice the first option, the last option, "None of the above"; FCT: always accept the
  proposed answer; IR: always claim the paper exists with one fixed title).
- **abstain**: always decline ("2", "I am not sure", "I do not know", "Unknown").
- **hedge**: a reply naming two answers (MedHallu: both labels; elsewhere the gold answer and
  one other, so a reader that picks either one is caught).
- **all options**: every option listed.
- **empty**: the empty reply.
- **echo**: the prompt the model was given, repeated verbatim.
- **negated**: the gold answer stated, then retracted.

- **chance**: the mean reward of an answer drawn uniformly per item from the answers the task
  offers, in the prompt's format, computed through the same scoring: MedHallu the two verdicts
  (abstention is not a guess); MedFact-Bench the three labels (scores 2, 0, -2); Med-HALT's
  multiple-choice sets each of the item's options (1/n_options); the IR sets "Unknown" or
  another item's real title/link, with probability 1/2 each (no random title names the paper).
- **oracle**: the gold answer in the prompt's format (each environment's `gold_reply`, the reply
  `validate` checks): a calibrated oracle is certain, so it never abstains; the ceiling.

The invariant under the default reward (`medhal`): no hedge, option list, echo or empty reply
is read as an answer, no retracted gold is read as the gold, and none of them, nor an
abstention, earns more than chance. Constant answers are well-formed single answers, so one
that beats chance does so through the benchmark's own answer distribution
(benchmark-intrinsic), which the table states with the figure behind it.

    uv run python bench/reward_audit.py                 # real shared data -> reports/reward_audit.md
    uv run python bench/reward_audit.py --demo --out D  # the bundled demo rows (fast; what the test runs)

Real data comes from MEDHAL_SHARED_DATA (default ../shared/data) with the pinned prompts served
from it (MEDHAL_ASSETS_DIR); sets above --max-items (default 1,100) are sampled
systematically: every k-th row or claim, all its items kept.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import hashlib
import json
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, machine, shared_data

CONVENTIONS = ("medhal", "authors", "strict")
DEFAULT = "medhal"
EPS = 1e-9

CONSTANT, ABSTAIN, HEDGE, ALL_OPTIONS, EMPTY, ECHO, NEGATED = (
    "constant",
    "abstain",
    "hedge",
    "all options",
    "empty",
    "echo",
    "negated",
)
NOT_AN_ANSWER = (HEDGE, ALL_OPTIONS, EMPTY, ECHO)
"""Kinds a careful human does not read as an answer: never read as one, never above chance."""
READER_KINDS = (*NOT_AN_ANSWER, ABSTAIN, NEGATED)
"""Kinds whose advantage, if any, comes from how replies are read, not from the data."""


@dataclass(frozen=True)
class Policy:
    name: str
    """As shown in the table, with the reply's shape."""
    kind: str
    reply: Callable[[Any], str]
    """The reply for one task (its `TaskData`)."""


@dataclass
class Setting:
    env_id: str
    title: str
    options: dict[str, Any]
    data: str
    """Where the rows come from, for the table."""
    every: int = 1
    """Systematic sample: keep every k-th task."""
    tasks: list[Any] = field(default_factory=list)


# ------------------------------------------------------------------------------ helpers


def reasoning_block(text: str) -> str:
    return f"<think>{text}</think>\n"


def right_first(data: Any) -> bool:
    """Whether a hedge names the right answer first: half the items, by a hash of the item
    (independent of which items a sample keeps)."""
    return hashlib.sha256(f"{data.source_id}:{data.idx}".encode()).digest()[0] % 2 == 0


def negation(answer: str) -> str:
    return f"\nNo, that is wrong: the answer is not {answer}."


def echo(data: Any) -> str:
    """Everything the model was shown, in order."""
    prompt = data.prompt if isinstance(data.prompt, str) else "\n".join(m.content for m in data.prompt)
    return f"{data.system_prompt}\n\n{prompt}" if data.system_prompt else prompt


# ------------------------------------------------------------------------------ MedHallu


class MedHallu:
    env_id = "medhallu"
    DIGIT: ClassVar[dict[str, str]] = {"factual": "0", "hallucinated": "1"}

    def policies(self, setting: Setting) -> list[Policy]:
        offered = setting.options.get("not_sure", True)
        listed = "0\n1\n2" if offered else "0\n1"
        key = "0 = factual, 1 = hallucinated" + (", 2 = not sure" if offered else "")
        return [
            Policy("always `0` (factual)", CONSTANT, lambda d: "0"),
            Policy("always `1` (hallucinated)", CONSTANT, lambda d: "1"),
            Policy("always `2` (not sure)", ABSTAIN, lambda d: "2"),
            Policy("always `I am not sure.`", ABSTAIN, lambda d: "I am not sure."),
            Policy("hedge `0 or 1`", HEDGE, lambda d: "0 or 1"),
            Policy(
                "hedge `It is either factual or hallucinated.`",
                HEDGE,
                lambda d: "It is either factual or hallucinated.",
            ),
            Policy(f"every option, one per line `{listed!r}`", ALL_OPTIONS, lambda d: listed),
            Policy(f"every option with its meaning `{key}`", ALL_OPTIONS, lambda d: key),
            Policy("empty reply", EMPTY, lambda d: ""),
            Policy("the prompt echoed", ECHO, echo),
            Policy(
                "gold stated then negated `<gold digit>\\nNo, that is wrong: ...`",
                NEGATED,
                lambda d: self.DIGIT[d.label] + negation(self.DIGIT[d.label]),
            ),
        ]

    def chance_replies(self, data: Any, setting: Setting) -> list[str]:
        return list(self.DIGIT.values())

    def oracle(self, data: Any) -> str:
        from medhallu.scoring import gold_reply

        return gold_reply(data)

    abstain_is_answer = False
    """An abstention is its own reading ("not sure"), rewarded by `not_sure_reward`."""

    def definite(self, data: Any, reading: Any, setting: Setting) -> bool:
        return reading in self.DIGIT

    def gold_profile(self, setting: Setting) -> str:
        labels = Counter(t.data.label for t in setting.tasks)
        return ", ".join(f"{k} {v / len(setting.tasks):.1%}" for k, v in sorted(labels.items()))


# ------------------------------------------------------------------------------ Med-HALT


def medhalt_input(data: Any) -> dict[str, Any]:
    """The item's input dict as the model sees it: the prompt ends with
    `Input: <dict>\\nOutput: `, the dict written by Python's `str`."""
    prompt = data.prompt
    start = prompt.rindex("\nInput: ") + len("\nInput: ")
    end = prompt.rindex("\nOutput:")
    value = ast.literal_eval(prompt[start:end])
    assert isinstance(value, dict)
    return value


WRONG_ANSWER = "An answer that is not among the options"
DECLINES = {"i do not know", "i don t know", "i dont know"}
"""Declining answers as `normalize_text` writes them (one answer, not a list holding one)."""


class MedHalt:
    env_id = "med-halt"

    def __init__(self) -> None:
        from med_halt.benchmark import FCT, SETS

        self.sets = SETS
        self.fct = FCT.config

    # replies in the set's own output format (the shots' Python dicts)
    def answer(self, data: Any, text: str, exists: bool | None = None, verdict: str | None = None) -> str:
        spec = self.sets[data.test_set]
        if data.test_set == self.fct:
            # The verdict agrees with the answer unless told (a reply whose verdict contradicts
            # its answer names two answers: med_halt.scoring.one_answer).
            from med_halt.rows import same_option

            agrees = "yes" if same_option(text, data.proposed_answer) else "no"
            return str({"is_answer_correct": verdict or agrees, "answer": text})
        if spec.family == "reasoning":
            return str({"cop": text})
        flag = "Yes" if (exists if exists is not None else text != "Unknown") else "No"
        return str({"is_paper_exists": flag, spec.answer_keys[0]: text})

    def options(self, data: Any) -> list[str]:
        options = medhalt_input(data)["Options"]
        return [str(v) for k, v in options.items() if k != "correct answer"]

    def right_answer(self, data: Any) -> str:
        """The answer a right reply gives: the gold, or the decline option of a fake question."""
        if data.decline_options:
            return data.decline_options[0]
        return str(data.gold)

    def other_answer(self, data: Any, setting: Setting) -> str:
        """A wrong answer for the item: its first other option, or (IR) another item's answer
        of the other kind ("Unknown" for a real paper, a real title/link for a fake one)."""
        right = self.right_answer(data)
        if self.sets[data.test_set].family == "reasoning":
            others = (o for o in self.options(data) if o.strip().lower() != right.strip().lower())
            return next(others, WRONG_ANSWER)
        return "Unknown" if data.paper_exists else self.real_answer(data, setting)

    def real_answer(self, data: Any, setting: Setting) -> str:
        """The title or link of the next real paper in the set (not this item's)."""
        golds = [t.data.gold for t in setting.tasks if t.data.paper_exists]
        for gold in golds[data.idx % max(len(golds), 1) :] + golds:
            if gold != data.gold:
                return str(gold)
        return "A study that does not exist"

    def hedge(self, data: Any, setting: Setting, as_dicts: bool) -> str:
        right, other = self.right_answer(data), self.other_answer(data, setting)
        first, second = (right, other) if right_first(data) else (other, right)
        if as_dicts:
            return f"{self.answer(data, first)}\nor\n{self.answer(data, second)}"
        return self.answer(data, f"{first} or {second}")

    def policies(self, setting: Setting) -> list[Policy]:
        test_set = setting.options["subset"]
        family = self.sets[test_set].family
        key = "answer" if test_set == self.fct else self.sets[test_set].answer_keys[0]
        policies: list[Policy] = []
        if family == "reasoning":
            policies += [
                Policy("always the first option", CONSTANT, lambda d: self.answer(d, self.options(d)[0])),
                Policy("always the last option", CONSTANT, lambda d: self.answer(d, self.options(d)[-1])),
                Policy("always `None of the above`", CONSTANT, lambda d: self.answer(d, "None of the above")),
            ]
            if test_set == self.fct:
                policies.append(
                    Policy(
                        "always accept the proposed answer",
                        CONSTANT,
                        lambda d: self.answer(d, d.proposed_answer, verdict="yes"),
                    )
                )
            policies.append(
                Policy(
                    "always `I do not know`", ABSTAIN, lambda d: self.answer(d, "I do not know", verdict="no")
                )
            )
        else:
            policies += [
                Policy(
                    "always 'paper exists' with one fixed answer",
                    CONSTANT,
                    lambda d: self.answer(d, "Outcomes of a randomised trial", exists=True),
                ),
                Policy("always `Unknown`", ABSTAIN, lambda d: self.answer(d, "Unknown", exists=False)),
            ]
        policies += [
            Policy(
                f"hedge in one value `{{'{key}': '<right> or <other>'}}`",
                HEDGE,
                lambda d: self.hedge(d, setting, as_dicts=False),
            ),
            Policy(
                "hedge as two dicts `<dict> or <dict>`",
                HEDGE,
                lambda d: self.hedge(d, setting, as_dicts=True),
            ),
        ]
        if family == "reasoning":
            policies += [
                Policy(
                    "every option, one dict each",
                    ALL_OPTIONS,
                    lambda d: "\n".join(self.answer(d, o) for o in self.options(d)),
                ),
                Policy(
                    f"every option in one value `{{'{key}': '<o1>, <o2>, ...'}}`",
                    ALL_OPTIONS,
                    lambda d: self.answer(d, ", ".join(self.options(d))),
                ),
            ]
        policies += [
            Policy("empty reply", EMPTY, lambda d: ""),
            Policy("the prompt echoed", ECHO, echo),
            Policy(
                "gold stated then negated `<right dict>\\nNo, that is wrong: ...`",
                NEGATED,
                lambda d: self.answer(d, self.right_answer(d)) + negation(self.right_answer(d)),
            ),
        ]
        return policies

    def chance_replies(self, data: Any, setting: Setting) -> list[str]:
        if self.sets[data.test_set].family == "reasoning":
            return [self.answer(data, option) for option in self.options(data)]
        return [
            self.answer(data, "Unknown", exists=False),
            self.answer(data, self.real_answer(data, setting)),
        ]

    def oracle(self, data: Any) -> str:
        from med_halt.scoring import gold_reply

        return gold_reply(data)

    abstain_is_answer = True
    """Declining is an answer here: the right one for a fake question or a fake paper."""

    def definite(self, data: Any, reading: Any, setting: Setting) -> bool:
        """Whether the reading is exactly one of the answers the item offers: an option or a
        plain "I do not know", or for IR "Unknown" or a title/link of the set."""
        from med_halt.rows import normalize_text

        if reading is None:
            return False
        text = normalize_text(str(reading))
        if self.sets[data.test_set].family == "reasoning":
            return text in {normalize_text(o) for o in self.options(data)} or text in DECLINES
        golds = {normalize_text(str(t.data.gold)) for t in setting.tasks}
        return text in golds or text == "unknown"

    def gold_profile(self, setting: Setting) -> str:
        tasks = [t.data for t in setting.tasks]
        n = len(tasks)
        if self.sets[setting.options["subset"]].family == "memory":
            fake = sum(1 for d in tasks if not d.paper_exists)
            return f"gold 'Unknown' (fake paper) {fake / n:.1%}"
        golds = Counter(self.right_answer(d).strip().lower() for d in tasks)
        text, count = golds.most_common(1)[0]
        positions = Counter(
            next((i for i, o in enumerate(self.options(d)) if o == self.right_answer(d)), -1) for d in tasks
        )
        last = sum(1 for d in tasks if self.options(d)[-1] == self.right_answer(d))
        top_position, top_count = positions.most_common(1)[0]
        where = "not among the options" if top_position < 0 else f"option {top_position}"
        return (
            f"most common gold {text[:40]!r} {count / n:.1%}; gold is the last option {last / n:.1%}; "
            f"most common gold position {where} {top_count / n:.1%}"
        )


# ------------------------------------------------------------------------------ MedFact-Bench


class MedFact:
    env_id = "medfact-bench"
    SCORE: ClassVar[dict[str, int]] = {"SUPPORT": 2, "NEI": 0, "CONTRADICT": -2}

    def reply(self, score: int | str) -> str:
        return reasoning_block("The article was weighed against the claim.") + f"<score>{score}</score>"

    def other(self, data: Any) -> int:
        return next(s for label, s in self.SCORE.items() if label != data.label)

    def hedge(self, data: Any, one_block: bool) -> str:
        right, other = self.SCORE[data.label], self.other(data)
        first, second = (right, other) if right_first(data) else (other, right)
        if one_block:
            return self.reply(f"{first} or {second}")
        return self.reply(first) + f" or <score>{second}</score>"

    def policies(self, setting: Setting) -> list[Policy]:
        every = "".join(f"<score>{s}</score>\n" for s in (-2, -1, 0, 1, 2))
        return [
            Policy("always `<score>2</score>` (SUPPORT)", CONSTANT, lambda d: self.reply(2)),
            Policy("always `<score>0</score>` (NEI)", CONSTANT, lambda d: self.reply(0)),
            Policy("always `<score>-2</score>` (CONTRADICT)", CONSTANT, lambda d: self.reply(-2)),
            Policy(
                "always `I cannot tell from this article.`",
                ABSTAIN,
                lambda d: "I cannot tell from this article.",
            ),
            Policy("hedge `<score>a</score> or <score>b</score>`", HEDGE, lambda d: self.hedge(d, False)),
            Policy("hedge in one block `<score>a or b</score>`", HEDGE, lambda d: self.hedge(d, True)),
            Policy("every score, one block each", ALL_OPTIONS, lambda d: every),
            Policy(
                "every score listed `Score: -2, -1, 0, 1 or 2`",
                ALL_OPTIONS,
                lambda d: "Score: -2, -1, 0, 1 or 2",
            ),
            Policy("empty reply", EMPTY, lambda d: ""),
            Policy("the prompt echoed (system and user)", ECHO, echo),
            Policy(
                "gold stated then negated `<gold score>\\nNo, that is wrong: ...`",
                NEGATED,
                lambda d: self.reply(self.SCORE[d.label]) + negation(str(self.SCORE[d.label])),
            ),
        ]

    def chance_replies(self, data: Any, setting: Setting) -> list[str]:
        return [self.reply(s) for s in self.SCORE.values()]

    def oracle(self, data: Any) -> str:
        from medfact_bench.scoring import gold_reply

        return gold_reply(data)

    abstain_is_answer = False
    """NEI is a label (score 0); a reply without a score is no answer."""

    def definite(self, data: Any, reading: Any, setting: Setting) -> bool:
        return reading is not None

    def gold_profile(self, setting: Setting) -> str:
        labels = Counter(t.data.label for t in setting.tasks)
        return ", ".join(f"{k} {v / len(setting.tasks):.1%}" for k, v in sorted(labels.items()))


ENVIRONMENTS: dict[str, Any] = {"medhallu": MedHallu, "med-halt": MedHalt, "medfact-bench": MedFact}


# ------------------------------------------------------------------------------ settings


def demo_settings() -> list[Setting]:
    """The bundled demo rows (written by medhal) with the demo prompts: no network, no shared data."""
    from med_halt.benchmark import DEMO_DIR, SETS
    from medfact_bench.benchmark import DEMO_OPTIONS as MEDFACT_DEMO
    from medhallu.benchmark import DEMO_ROWS

    demo = "demo rows (written by medhal), demo prompts"
    settings = [
        Setting(
            "medhallu",
            "MedHallu, not sure offered" if offered else "MedHallu, binary (`not_sure = false`)",
            {"dataset_path": str(DEMO_ROWS), "prompts": "demo", "not_sure": offered},
            demo,
        )
        for offered in (True, False)
    ]
    settings += [
        Setting(
            "med-halt",
            f"Med-HALT {name}",
            {"subset": name, "dataset_path": str(DEMO_DIR), "prompts": "demo"},
            demo,
        )
        for name in SETS
    ]
    settings.append(Setting("medfact-bench", "MedFact-Bench", dict(MEDFACT_DEMO), demo))
    return settings


def medfact_rows(shared: Path, out: Path) -> Path:
    """The 340 real Med-V1 example inputs in the MedFact-Bench schema, each once per label:
    they carry no gold label (shared data README), so every input is scored as SUPPORT, NEI
    and CONTRADICT (balanced classes by construction)."""
    prompts = [json.loads(line) for line in (shared / "medfact" / "prompts_example_input_file.jsonl").open()]
    pairs = json.loads((shared / "medfact" / "claim_source_example_input_file.json").read_text())
    with out.open("w") as f:
        for prompt, pair in zip(prompts, pairs, strict=True):
            for label in ("SUPPORT", "NEI", "CONTRADICT"):
                row = {"dataset": "scifact", **pair, "label": label, **prompt}
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return out


def real_settings(shared: Path, tmp: Path, medfact_path: Path | None = None) -> list[Setting]:
    from med_halt.benchmark import SETS

    medhallu_rows = shared / "medhallu" / "pqa_labeled.jsonl"
    settings = [
        Setting(
            "medhallu",
            "MedHallu, not sure offered" if offered else "MedHallu, binary (`not_sure = false`)",
            {"dataset_path": str(medhallu_rows), "not_sure": offered},
            "real: the 1,000 `pqa_labeled` rows (2,000 items), pinned prompt",
        )
        for offered in (True, False)
    ]
    complete = {
        "reasoning_fake": shared / "medhalt" / "reasoning_fake.csv",
        **{
            name: shared / "medhalt" / f"{name}.json"
            for name in ("IR_pmid2title", "IR_pubmedlink2title", "IR_title2pubmedlink")
        },
    }
    for name in SETS:
        path = complete.get(name) or shared / "medhalt" / "samples" / f"{name}.jsonl"
        what = (
            (
                "real: the complete set"
                if name == "reasoning_fake"
                else "real: the complete set (column subset)"
            )
            if name in complete
            else "real: the 16 sample rows with full columns"
        )
        settings.append(
            Setting(
                "med-halt",
                f"Med-HALT {name}",
                {"subset": name, "dataset_path": str(path)},
                f"{what}, pinned prompts",
            )
        )
    medfact = (
        (medfact_path, f"real: `{medfact_path.name}`, its own labels")
        if medfact_path is not None
        else (
            medfact_rows(shared, tmp / "medfact.jsonl"),
            "real: the 340 Med-V1 example inputs (no gold labels offline: each scored once per label), "
            "the dataset's system prompt",
        )
    )
    settings.append(Setting("medfact-bench", "MedFact-Bench", {"dataset_path": str(medfact[0])}, medfact[1]))
    return settings


# ------------------------------------------------------------------------------ scoring


def cluster(data: Any) -> str:
    """The unit a sample keeps or drops whole: a source row (both MedHallu items of a row), a
    Med-HALT row, a MedFact-Bench claim (each audited input is there once per label)."""
    return str(getattr(data, "claim", None) or data.source_id)


def load_tasks(setting: Setting, max_items: int) -> None:
    """Load the setting's tasks; above `max_items`, keep every k-th cluster (in load order),
    so sampling never unbalances the labels a row or a claim carries together."""
    from medhal.kit.lines import taskset_class, taskset_config_type

    config = taskset_config_type(setting.env_id).model_validate({"id": setting.env_id, **setting.options})
    tasks = list(taskset_class(setting.env_id)(config).select())
    setting.every = max(1, -(-len(tasks) // max_items)) if max_items else 1
    order = {key: i for i, key in enumerate(dict.fromkeys(cluster(t.data) for t in tasks))}
    setting.tasks = [t for t in tasks if order[cluster(t.data)] % setting.every == 0]
    if setting.every > 1:
        setting.data += (
            f"; 1 in {setting.every} of its {len(order):,} rows or claims: {len(setting.tasks):,} "
            f"of {len(tasks):,} items"
        )


@dataclass
class Outcome:
    mean: dict[str, float]
    """Mean reward per convention."""
    answered: dict[str, float]
    """Share of items read as one of the answers the item offers, per convention."""
    correct: dict[str, float]
    """Share scored right, per convention."""
    right_unread: dict[str, float]
    """Share scored right although the reading is not one of the offered answers (the
    scoring rule, not the reader, accepted it), per convention."""


async def score_replies(setting: Setting, replies: Callable[[Any], list[str]], adapter: Any) -> Outcome:
    """Mean reward of the replies over tasks (several replies per task: their mean, as for
    chance), scoring each through the task's own `Task.score` with the task's reading
    convention set to each convention in turn."""
    from medhal.kit.task import score_reply

    total = dict.fromkeys(CONVENTIONS, 0.0)
    answered = dict.fromkeys(CONVENTIONS, 0.0)
    correct = dict.fromkeys(CONVENTIONS, 0.0)
    right_unread = dict.fromkeys(CONVENTIONS, 0.0)
    tasks = setting.tasks
    for task in tasks:
        texts = replies(task.data)
        for convention in CONVENTIONS:
            own = type(task)(task.data.model_copy(update={"parser": convention}), task.config)
            for text in texts:
                trace = await score_reply(own, text)
                one = adapter.definite(task.data, trace.info["readings"][convention], setting)
                right = trace.metrics["correct"]
                total[convention] += sum(trace.rewards.values()) / len(texts)
                answered[convention] += float(one) / len(texts)
                correct[convention] += right / len(texts)
                right_unread[convention] += float(right and not one) / len(texts)
    n = len(tasks)
    return Outcome(*({c: v / n for c, v in d.items()} for d in (total, answered, correct, right_unread)))


def verdict(
    policy: Policy, outcome: Outcome, chance: float, profile: str, abstain_is_answer: bool
) -> tuple[str, str]:
    """(status, cause) under the default reward: `ok`; `intrinsic` (a constant, well-formed
    answer beats chance through the data); `reader` (a reply naming several answers or none is
    read as one of them, a retracted gold as the gold); `scoring` (the scoring rule accepts as
    right a reading that is not one of the answers); a `reader` or `scoring` reply may also beat
    chance."""
    above = outcome.mean[DEFAULT] > chance + EPS
    if policy.kind == CONSTANT or (policy.kind == ABSTAIN and abstain_is_answer):
        return (
            ("intrinsic", f"beats chance through the answer distribution ({profile})")
            if above
            else ("ok", "")
        )
    reader, scoring = [], []
    if policy.kind in NOT_AN_ANSWER and outcome.answered[DEFAULT] > 0:
        reader.append(f"read as one of the answers on {outcome.answered[DEFAULT]:.1%} of items")
    if policy.kind == NEGATED and outcome.correct[DEFAULT] > 0:
        reader.append(f"read as the gold on {outcome.correct[DEFAULT]:.1%} of items")
    if outcome.right_unread[DEFAULT] > 0:
        scoring.append(
            f"scored right without naming one answer on {outcome.right_unread[DEFAULT]:.1%} of items"
        )
    beats = ["beats chance"] if above else []
    if reader:
        return "reader", "; ".join(reader + scoring + beats)
    if scoring:
        return "scoring", "; ".join(scoring + beats)
    return ("reader", "beats chance") if above else ("ok", "")


async def audit_setting(setting: Setting) -> dict[str, Any]:
    adapter = ENVIRONMENTS[setting.env_id]()
    chance = await score_replies(setting, lambda d: adapter.chance_replies(d, setting), adapter)
    oracle = await score_replies(setting, lambda d: [adapter.oracle(d)], adapter)
    profile = adapter.gold_profile(setting)
    rows = []
    for policy in adapter.policies(setting):
        outcome = await score_replies(setting, lambda d, p=policy: [p.reply(d)], adapter)
        status, cause = verdict(policy, outcome, chance.mean[DEFAULT], profile, adapter.abstain_is_answer)
        rows.append(
            {
                "policy": policy.name,
                "kind": policy.kind,
                "reward": outcome.mean,
                "answered": outcome.answered,
                "correct": outcome.correct,
                "right_unread": outcome.right_unread,
                "status": status,
                "cause": cause,
            }
        )
    return {
        "environment": setting.env_id,
        "setting": setting.title,
        "options": {k: v for k, v in setting.options.items() if k != "dataset_path"},
        "data": setting.data,
        "items": len(setting.tasks),
        "gold": profile,
        "chance": chance.mean,
        "oracle": oracle.mean,
        "policies": rows,
    }


# ------------------------------------------------------------------------------ the table


def number(value: float) -> str:
    return f"{value:+.3f}" if value < 0 else f"{value:.3f}"


def render(results: list[dict[str, Any]], source: str) -> str:
    lines = [
        "# Reward audit: degenerate policies against chance",
        "",
        f"Written by `bench/reward_audit.py` ({source}). Mean reward per item of each policy, scored",
        "through each environment's own `Task.score`, under each reading convention; the default",
        "reward is `medhal`. Chance and the oracle are defined in the script's docstring and in the",
        'root README ("Training with these rewards"). **status** is judged under the default reward:',
        "`ok`; `intrinsic`: a constant, well-formed answer beats chance through the benchmark's own",
        "answer distribution; `READER`: a reply that names several answers or none is read as one",
        "answer (or a retracted gold as the gold), or beats chance: a reading to fix; `SCORING`: the",
        "scoring rule accepts a reading that is not one answer (a list holding the right one).",
        "",
    ]
    flagged = [(r, p) for r in results for p in r["policies"] if p["status"] != "ok"]
    lines += ["## Summary", ""]
    if not flagged:
        lines.append("No degenerate policy beats chance, and no reply naming several answers is read as one.")
    else:
        lines += [
            "| setting | policy | reward (medhal) | chance | status | why |",
            "|---|---|---|---|---|---|",
        ]
        for r, p in flagged:
            status = p["status"].upper() if p["status"] in ("reader", "scoring") else p["status"]
            lines.append(
                f"| {r['setting']} | {p['policy']} | {number(p['reward'][DEFAULT])} | "
                f"{number(r['chance'][DEFAULT])} | {status} | {p['cause']} |"
            )
    lines.append("")
    for r in results:
        options = ", ".join(f"`{k} = {json.dumps(v)}`" for k, v in r["options"].items()) or "defaults"
        lines += [
            f"## {r['setting']}",
            "",
            f"Environment `{r['environment']}`, options {options}. Data: {r['data']} ({r['items']:,} items). "
            f"Gold: {r['gold']}.",
            "",
            "| policy | kind | medhal | authors | strict | read as an answer (medhal) | status |",
            "|---|---|---|---|---|---|---|",
            f"| **chance** | baseline | {' | '.join(number(r['chance'][c]) for c in CONVENTIONS)} | | |",
            f"| **oracle** | baseline | {' | '.join(number(r['oracle'][c]) for c in CONVENTIONS)} | | |",
        ]
        for p in r["policies"]:
            status = {"ok": "ok", "intrinsic": "intrinsic", "reader": "**READER**", "scoring": "**SCORING**"}[
                p["status"]
            ]
            cause = f": {p['cause']}" if p["cause"] and p["status"] in ("reader", "scoring") else ""
            rewards = " | ".join(number(p["reward"][c]) for c in CONVENTIONS)
            answered = f"{p['answered'][DEFAULT]:.0%}"
            lines.append(f"| {p['policy']} | {p['kind']} | {rewards} | {answered} | {status}{cause} |")
        lines.append("")
    return "\n".join(lines)


@contextmanager
def assets_from(shared: Path | None) -> Iterator[None]:
    if shared is None:
        yield
        return
    previous = os.environ.get("MEDHAL_ASSETS_DIR")
    os.environ["MEDHAL_ASSETS_DIR"] = str(shared)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("MEDHAL_ASSETS_DIR", None)
        else:
            os.environ["MEDHAL_ASSETS_DIR"] = previous


def run(
    demo: bool, max_items: int, shared: Path | None, medfact_path: Path | None = None
) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="medhal-audit-") as tmp, assets_from(None if demo else shared):
        if demo:
            settings = demo_settings()
        else:
            if shared is None:
                raise SystemExit(
                    "reward_audit: no shared data (set MEDHAL_SHARED_DATA); use --demo for the demo rows"
                )
            settings = real_settings(shared, Path(tmp), medfact_path)
        results = []
        for setting in settings:
            load_tasks(setting, max_items)
            print(f"{setting.title}: {len(setting.tasks):,} items", file=sys.stderr, flush=True)
            results.append(asyncio.run(audit_setting(setting)))
        return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--demo", action="store_true", help="the bundled demo rows and demo prompts")
    parser.add_argument(
        "--max-items", type=int, default=1100, help="sample larger sets down to about this (0: all)"
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="directory for reward_audit.md/.json (default reports/)"
    )
    parser.add_argument(
        "--medfact-path",
        type=Path,
        help="a labelled MedFact-Bench file in the Hub schema (e.g. from `medhal fetch`) instead of the "
        "340 unlabelled example inputs",
    )
    ns = parser.parse_args()
    shared = shared_data() or (
        ROOT.parent / "shared" / "data" if (ROOT.parent / "shared" / "data").is_dir() else None
    )
    results = run(ns.demo, ns.max_items, shared, ns.medfact_path)
    source = "the demo rows: `--demo`" if ns.demo else f"real shared data, `--max-items {ns.max_items}`"
    out = ns.out or ROOT / "reports"
    out.mkdir(parents=True, exist_ok=True)
    (out / "reward_audit.md").write_text(render(results, source) + "\n")
    payload = {"machine": machine(), "source": source, "conventions": CONVENTIONS, "settings": results}
    (out / "reward_audit.json").write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {out / 'reward_audit.md'} and reward_audit.json", file=sys.stderr)


if __name__ == "__main__":
    main()
