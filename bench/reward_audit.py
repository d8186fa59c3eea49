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
- **negated**: the gold answer stated, then retracted (with or without naming it again).
- **retracted**: another answer stated, then retracted ("<other>\nNo, that's wrong."): no answer.
- **conditional**: two answers under two conditions, no choice made: no answer.
- **hedge** also covers "<a> but could be <b>" and "<a> or possibly <b>" in either order, and
  Med-HALT IR's double answer (the existence flag "No" beside a real title or link).
- **constant** also covers Med-HALT's set-wise constant: always the option at the position that
  holds the gold most often in the set (learnt from the set, not from the item).
- **surface cue** (MedHallu): a verdict from the shown answer's wording and length alone, no
  medical knowledge; a property of the benchmark, stated beside chance.
- **published prior** (MedFact-Bench): what always SUPPORT earns on the complete benchmark's
  published class shares (SUPPORT 70.9%); stated from the figures, not scored here.
- **errored**: a rollout that failed before its reply was scored; verifiers records no reward, so
  it earns 0. It must never earn more than **a wrong answer** (shown as a baseline).

- **chance**: the mean reward of an answer drawn uniformly per item from the answers the task
  offers, in the prompt's format, computed through the same scoring: MedHallu the two verdicts
  (abstention is not a guess); MedFact-Bench the three labels (scores 2, 0, -2); Med-HALT's
  multiple-choice sets each of the item's options (1/n_options); the IR sets "Unknown" or
  another item's real title/link, with probability 1/2 each (no random title names the paper).
- **oracle**: the gold answer in the prompt's format (each environment's `gold_reply`, the reply
  `validate` checks): a calibrated oracle is certain, so it never abstains; the ceiling.

The invariant under the default reward (`medhal`): no hedge, conditional, retraction, option
list, echo or empty reply is read as an answer, no retracted gold is read as the gold, none of
them, nor an abstention, earns more than chance, and an errored rollout earns no more than a
wrong answer. Constant answers (and the surface cue, the published prior) are well-formed single
answers, so one that beats chance does so through the benchmark's own answer distribution
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
import re
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
CONDITIONAL, RETRACTED, SURFACE, ERRORED, PUBLISHED = (
    "conditional",
    "retracted",
    "surface cue",
    "errored",
    "published prior",
)
NOT_AN_ANSWER = (HEDGE, ALL_OPTIONS, EMPTY, ECHO, CONDITIONAL, RETRACTED)
"""Kinds a careful human does not read as an answer: never read as one, never above chance."""
DATA_KINDS = (CONSTANT, SURFACE, PUBLISHED)
"""Well-formed single answers chosen without reading the item's evidence: beating chance
is a property of the benchmark's data (`intrinsic`), stated beside chance."""


@dataclass(frozen=True)
class Policy:
    name: str
    """As shown in the table, with the reply's shape."""
    kind: str
    reply: Callable[[Any], str | None]
    """The reply for one task (its `TaskData`); None for an errored rollout (no reply)."""
    applies: Callable[[Any], bool] = lambda data: True
    """Whether the policy means something for an item: a list of every option is one answer
    on an item that offers a single option (a malformed upstream row), so it is not scored there."""


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


RETRACTION = "\nNo, that's wrong."


def ordered(data: Any, right: str, other: str) -> tuple[str, str]:
    """The right answer and another, in an order drawn per item (`right_first`): a reading
    that takes either one is caught on half the items."""
    return (right, other) if right_first(data) else (other, right)


def conditional(first: str, second: str) -> str:
    return f"If the cited evidence holds, {first}; if it does not, {second}."


def errored_rollout() -> Policy:
    """A rollout that failed before its reply was scored (a provider error, a context
    overflow): verifiers records no reward, so the trace's reward is their empty sum, 0."""
    return Policy("errored rollout (no reply scored)", ERRORED, lambda d: None)


def echo(data: Any) -> str:
    """Everything the model was shown, in order."""
    prompt = data.prompt if isinstance(data.prompt, str) else "\n".join(m.content for m in data.prompt)
    return f"{data.system_prompt}\n\n{prompt}" if data.system_prompt else prompt


# ------------------------------------------------------------------------------ MedHallu

SURFACE_HEDGES = re.compile(
    r"\b(?:may|might|could|suggests?|suggested|possibl\w*|likely|appears?|seems?)\b", re.I
)
SURFACE_STRONG = re.compile(r"\bsignificant(?:ly)?\b", re.I)
SURFACE_WORDS = 25
SURFACE_CUE_NAME = (
    "surface cue, no medical knowledge: the shown answer hedges (`may`, `suggest`, ...) -> `0`; says "
    f"`significant` -> `1`; else {SURFACE_WORDS} words or more -> `0`, shorter -> `1`"
)


def surface_cue(answer: str) -> str:
    """A verdict from the shown answer's wording and length alone (no question, no
    knowledge): MedHallu's generated hallucinations are shorter and more assertive than the
    PubMedQA answers they replace. The rule was written after looking at pqa_labeled, so
    its score is an upper estimate of what such a cue gives; it is a property of the
    benchmark, not of a reader."""
    if SURFACE_HEDGES.search(answer):
        return "0"
    if SURFACE_STRONG.search(answer):
        return "1"
    return "0" if len(answer.split()) >= SURFACE_WORDS else "1"


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
            Policy(
                "gold stated then retracted `<gold digit>\\nNo, that's wrong.`",
                NEGATED,
                lambda d: self.DIGIT[d.label] + RETRACTION,
            ),
            Policy(
                "other digit stated then retracted `<other digit>\\nNo, that's wrong.`",
                RETRACTED,
                lambda d: self.other(d) + RETRACTION,
            ),
            Policy(
                "hedge `<a> but could be <b>` (either order)",
                HEDGE,
                lambda d: "{} but could be {}".format(*self.both(d)),
            ),
            Policy(
                "hedge `<a> or possibly <b>` (either order)",
                HEDGE,
                lambda d: "{} or possibly {}".format(*self.both(d)),
            ),
            Policy(
                "conditional `If ..., <a>; if it does not, <b>.`",
                CONDITIONAL,
                lambda d: conditional(*self.both(d)),
            ),
            Policy(SURFACE_CUE_NAME, SURFACE, lambda d: surface_cue(d.answer)),
            errored_rollout(),
        ]

    def other(self, data: Any) -> str:
        return self.DIGIT["hallucinated" if data.label == "factual" else "factual"]

    def both(self, data: Any) -> tuple[str, str]:
        return ordered(data, self.DIGIT[data.label], self.other(data))

    def wrong(self, data: Any) -> str:
        from medhallu.scoring import wrong_reply

        return wrong_reply(data)

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

    def several_options(self, data: Any) -> bool:
        """Whether the item offers two options or more (one fake-question row holds its whole
        option list in a single option)."""
        return len(set(self.options(data))) >= 2

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

    def answer_policies(self, test_set: str) -> list[Policy]:
        """Constant answers and the abstention, in the set's own format."""
        if self.sets[test_set].family != "reasoning":
            return [
                Policy(
                    "always 'paper exists' with one fixed answer",
                    CONSTANT,
                    lambda d: self.answer(d, "Outcomes of a randomised trial", exists=True),
                ),
                Policy("always `Unknown`", ABSTAIN, lambda d: self.answer(d, "Unknown", exists=False)),
            ]
        policies = [
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
            Policy("always `I do not know`", ABSTAIN, lambda d: self.answer(d, "I do not know", verdict="no"))
        )
        return policies

    def policies(self, setting: Setting) -> list[Policy]:
        test_set = setting.options["subset"]
        family = self.sets[test_set].family
        key = "answer" if test_set == self.fct else self.sets[test_set].answer_keys[0]
        policies = self.answer_policies(test_set)
        policies += self.hedges(setting, key)
        if family == "reasoning":
            policies += self.option_lists(key)
        policies += self.commitment_policies(setting)
        if family == "reasoning":
            policies.insert(3, self.common_position_policy(setting))
        else:
            policies.insert(2, self.double_answer_policy(setting))
        return policies

    def hedges(self, setting: Setting, key: str) -> list[Policy]:
        return [
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

    def option_lists(self, key: str) -> list[Policy]:
        return [
            Policy(
                "every option, one dict each",
                ALL_OPTIONS,
                lambda d: "\n".join(self.answer(d, o) for o in self.options(d)),
                self.several_options,
            ),
            Policy(
                f"every option in one value `{{'{key}': '<o1>, <o2>, ...'}}`",
                ALL_OPTIONS,
                lambda d: self.answer(d, ", ".join(self.options(d))),
                self.several_options,
            ),
        ]

    def commitment_policies(self, setting: Setting) -> list[Policy]:
        """Empty, echoed, negated, retracted and conditional replies, and a failed rollout."""
        return [
            Policy("empty reply", EMPTY, lambda d: ""),
            Policy("the prompt echoed", ECHO, echo),
            Policy(
                "gold stated then negated `<right dict>\\nNo, that is wrong: ...`",
                NEGATED,
                lambda d: self.answer(d, self.right_answer(d)) + negation(self.right_answer(d)),
            ),
            Policy(
                "other answer stated then retracted `<other dict>\\nNo, that's wrong.`",
                RETRACTED,
                lambda d: self.answer(d, self.other_answer(d, setting)) + RETRACTION,
            ),
            Policy(
                "conditional `If ..., <dict a>; if it does not, <dict b>.`",
                CONDITIONAL,
                lambda d: conditional(
                    *(
                        self.answer(d, x)
                        for x in ordered(d, self.right_answer(d), self.other_answer(d, setting))
                    )
                ),
            ),
            errored_rollout(),
        ]

    def common_position_policy(self, setting: Setting) -> Policy:
        position = self.common_position(setting)
        return Policy(
            f"always the option at the set's most common gold position ({position})",
            CONSTANT,
            lambda d: self.answer(d, self.options(d)[min(position, len(self.options(d)) - 1)]),
        )

    def double_answer_policy(self, setting: Setting) -> Policy:
        return Policy(
            "double answer `{'is_paper_exists': 'No', '<field>': <a real title or link>}`",
            HEDGE,
            lambda d: self.answer(
                d, str(d.gold) if d.paper_exists else self.real_answer(d, setting), exists=False
            ),
        )

    def common_position(self, setting: Setting) -> int:
        """The option position that holds the gold most often in this set (a constant a policy
        can learn from the set without reading any item)."""
        positions = Counter(
            next((i for i, o in enumerate(self.options(t.data)) if o == self.right_answer(t.data)), 0)
            for t in setting.tasks
        )
        return positions.most_common(1)[0][0] if positions else 0

    def wrong(self, data: Any) -> str:
        from med_halt.scoring import wrong_reply

        return wrong_reply(data)

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

PUBLISHED_PRIOR = {"SUPPORT": 10_118 / 14_274, "NEI": 2_988 / 14_274, "CONTRADICT": 1_168 / 14_274}
"""MedFact-Bench's gold label shares over all 14,274 items, from the independent replication's
confusion matrix (shared/reference/published_figures.md)."""


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
            Policy(
                "gold stated then retracted `<gold score>\\nNo, that's wrong.`",
                NEGATED,
                lambda d: self.reply(self.SCORE[d.label]) + RETRACTION,
            ),
            Policy(
                "another score stated then retracted `<other score>\\nNo, that's wrong.`",
                RETRACTED,
                lambda d: self.reply(self.other(d)) + RETRACTION,
            ),
            Policy(
                "hedge `<score>a</score> but it could be b` (either order)",
                HEDGE,
                lambda d: f"{self.reply(self.both(d)[0])} but it could be {self.both(d)[1]}.",
            ),
            Policy(
                "conditional `If ..., <score>a</score>; if it does not, <score>b</score>.`",
                CONDITIONAL,
                lambda d: (
                    reasoning_block("The article was weighed against the claim.")
                    + conditional(*(f"<score>{s}</score>" for s in self.both(d)))
                ),
            ),
            errored_rollout(),
        ]

    def both(self, data: Any) -> tuple[int, int]:
        right, other = self.SCORE[data.label], self.other(data)
        return (right, other) if right_first(data) else (other, right)

    def wrong(self, data: Any) -> str:
        from medfact_bench.scoring import wrong_reply

        return wrong_reply(data)

    def published(self, setting: Setting) -> list[dict[str, Any]]:
        """What the constant SUPPORT earns on the complete benchmark's own class prior, as
        published (shared/reference/published_figures.md: the replication's gold counts,
        SUPPORT 10,118 of 14,274 = 70.9%): the 340 offline inputs carry no labels, so it is
        stated from the figures, not scored here. A property of the data, beside chance."""
        share = PUBLISHED_PRIOR["SUPPORT"]
        return [
            {
                "policy": "always `<score>2</score>` (SUPPORT) on the published class prior",
                "kind": PUBLISHED,
                "reward": dict.fromkeys(CONVENTIONS, share),
                "answered": dict.fromkeys(CONVENTIONS, 1.0),
                "correct": dict.fromkeys(CONVENTIONS, share),
                "right_unread": dict.fromkeys(CONVENTIONS, 0.0),
                "status": "intrinsic",
                "cause": (
                    "beats chance (1/3) through the answer distribution: gold SUPPORT 70.9%, NEI 20.9%, "
                    "CONTRADICT 8.2% over the complete benchmark (published figures; not scored here)"
                ),
            }
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


# ------------------------------------------------------------------------------ any other


class FromContract:
    """The audit of an environment without an adapter of its own, from what every environment
    provides (`medhal.kit.contract`): each item's gold and wrong reply (`scoring.gold_reply`,
    `wrong_reply`), read by its own readers. Chance is the mean of those two (a fair guess
    between two answers; for a benchmark of more answers it is above the uniform guess, so the
    audit is stricter, not looser); constants are the first item's gold and wrong replies."""

    abstain_is_answer = False

    def __init__(self, env_id: str) -> None:
        from importlib import import_module

        from medhal.reports.registry import package

        self.scoring = import_module(f"{package(env_id)}.scoring")

    def policies(self, setting: Setting) -> list[Policy]:
        first = setting.tasks[0].data
        gold, wrong = self.scoring.gold_reply, self.scoring.wrong_reply
        return [
            Policy("always the first item's gold reply", CONSTANT, lambda d: gold(first)),
            Policy("always the first item's wrong reply", CONSTANT, lambda d: wrong(first)),
            Policy("always `I do not know.`", ABSTAIN, lambda d: "I do not know."),
            Policy(
                "hedge `<gold> or <wrong>`",
                HEDGE,
                lambda d: "{} or {}".format(*ordered(d, gold(d), wrong(d))),
            ),
            Policy("gold and wrong, one per line", ALL_OPTIONS, lambda d: f"{gold(d)}\n{wrong(d)}"),
            Policy("empty reply", EMPTY, lambda d: ""),
            Policy("the prompt echoed", ECHO, echo),
            Policy(
                "gold stated then negated `<gold>\\nNo, that is wrong: ...`",
                NEGATED,
                lambda d: gold(d) + negation(self.gold_reading(d)),
            ),
            Policy(
                "wrong stated then retracted `<wrong>\\nNo, that's wrong.`",
                RETRACTED,
                lambda d: wrong(d) + RETRACTION,
            ),
            Policy(
                "conditional `If ..., <a>; if it does not, <b>.`",
                CONDITIONAL,
                lambda d: conditional(*ordered(d, gold(d), wrong(d))),
            ),
            errored_rollout(),
        ]

    def gold_reading(self, data: Any) -> str:
        """What the gold reply reads as under the default convention (its answer)."""
        return str(self.scoring.score(data, self.scoring.gold_reply(data)).info["readings"][DEFAULT])

    def chance_replies(self, data: Any, setting: Setting) -> list[str]:
        return [self.scoring.gold_reply(data), self.scoring.wrong_reply(data)]

    def oracle(self, data: Any) -> str:
        return str(self.scoring.gold_reply(data))

    def wrong(self, data: Any) -> str:
        return str(self.scoring.wrong_reply(data))

    def definite(self, data: Any, reading: Any, setting: Setting) -> bool:
        return reading is not None

    def gold_profile(self, setting: Setting) -> str:
        readings = Counter(self.gold_reading(t.data) for t in setting.tasks)
        return ", ".join(f"{k} {v / len(setting.tasks):.1%}" for k, v in sorted(readings.items()))


ENVIRONMENTS: dict[str, Any] = {"medhallu": MedHallu, "med-halt": MedHalt, "medfact-bench": MedFact}
"""The environments with an audit of their own (their answer formats' degenerate replies);
any other installed environment is audited `FromContract`."""


def adapter_of(env_id: str) -> Any:
    adapter = ENVIRONMENTS.get(env_id)
    return adapter() if adapter is not None else FromContract(env_id)


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
    return settings + other_settings(demo)


def other_settings(data: str) -> list[Setting]:
    """Every other installed environment on its demo rows (with its demo prompts where it has
    them): the test environments too, when staged."""
    from medhal.kit.lines import taskset_config_type
    from medhal.reports.registry import benchmark_module, installed

    settings = []
    for env_id in installed():
        if env_id in ENVIRONMENTS:
            continue
        options = dict(benchmark_module(env_id).DEMO_OPTIONS)
        if "prompts" in taskset_config_type(env_id).model_fields:
            options["prompts"] = "demo"
        settings.append(Setting(env_id, env_id, options, data))
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
    return settings + other_settings("its demo rows (no real data known here)")


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


def errored_trace(task: Any) -> Any:
    """The trace of a rollout that failed before its reply was scored, as verifiers leaves
    it: the error captured, no metric, no reward (its reward is the empty sum, 0)."""
    from medhal.kit.task import reply_trace

    trace = reply_trace(task, None)
    trace.capture_error(RuntimeError("the provider returned an error"))
    return trace


async def score_replies(
    setting: Setting, replies: Callable[[Any], list[str | None]], adapter: Any
) -> Outcome:
    """Mean reward of the replies over tasks (several replies per task: their mean, as for
    chance), scoring each through the task's own `Task.score` with the task's reading
    convention set to each convention in turn."""
    from medhal.kit.task import score_reply

    total = dict.fromkeys(CONVENTIONS, 0.0)
    answered = dict.fromkeys(CONVENTIONS, 0.0)
    correct = dict.fromkeys(CONVENTIONS, 0.0)
    right_unread = dict.fromkeys(CONVENTIONS, 0.0)
    n = 0
    for task in setting.tasks:
        texts = replies(task.data)
        if not texts:
            continue  # the policy does not apply to the item (`Policy.applies`)
        n += 1
        for convention in CONVENTIONS:
            own = type(task)(task.data.model_copy(update={"parser": convention}), task.config)
            for text in texts:
                trace = await score_reply(own, text) if text is not None else errored_trace(own)
                readings = trace.info.get("readings", {})
                one = adapter.definite(task.data, readings.get(convention), setting)
                right = trace.metrics.get("correct", 0.0)
                total[convention] += sum(trace.rewards.values()) / len(texts)
                answered[convention] += float(one) / len(texts)
                correct[convention] += right / len(texts)
                right_unread[convention] += float(right and not one) / len(texts)
    n = max(n, 1)
    return Outcome(*({c: v / n for c, v in d.items()} for d in (total, answered, correct, right_unread)))


def verdict(
    policy: Policy, outcome: Outcome, chance: float, profile: str, abstain_is_answer: bool, wrong: float
) -> tuple[str, str]:
    """(status, cause) under the default reward: `ok`; `intrinsic` (a constant, well-formed
    answer beats chance through the data); `reader` (a reply naming several answers or none is
    read as one of them, a retracted gold as the gold); `scoring` (the scoring rule accepts as
    right a reading that is not one of the answers); a `reader` or `scoring` reply may also beat
    chance."""
    above = outcome.mean[DEFAULT] > chance + EPS
    if policy.kind == ERRORED:
        if outcome.mean[DEFAULT] > wrong + EPS:
            return "scoring", (
                f"an errored rollout earns {number(outcome.mean[DEFAULT])}, more than a wrong answer's "
                f"{number(wrong)}: a policy gains by failing"
            )
        return "ok", ""
    if policy.kind == SURFACE:
        why = "beats chance through the shown answers' wording and length alone (no medical knowledge)"
        return ("intrinsic", why) if above else ("ok", "")
    if policy.kind in DATA_KINDS or (policy.kind == ABSTAIN and abstain_is_answer):
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
    adapter = adapter_of(setting.env_id)
    chance = await score_replies(setting, lambda d: adapter.chance_replies(d, setting), adapter)
    oracle = await score_replies(setting, lambda d: [adapter.oracle(d)], adapter)
    wrong = await score_replies(setting, lambda d: [adapter.wrong(d)], adapter)
    profile = adapter.gold_profile(setting)
    rows = []
    for policy in adapter.policies(setting):
        outcome = await score_replies(
            setting, lambda d, p=policy: [p.reply(d)] if p.applies(d) else [], adapter
        )
        status, cause = verdict(
            policy, outcome, chance.mean[DEFAULT], profile, adapter.abstain_is_answer, wrong.mean[DEFAULT]
        )
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
    rows += adapter.published(setting) if hasattr(adapter, "published") else []
    return {
        "environment": setting.env_id,
        "setting": setting.title,
        "options": {k: v for k, v in setting.options.items() if k != "dataset_path"},
        "data": setting.data,
        "items": len(setting.tasks),
        "gold": profile,
        "chance": chance.mean,
        "oracle": oracle.mean,
        "wrong": wrong.mean,
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
            *(
                f"| **{name}** | baseline | {' | '.join(number(r[key][c]) for c in CONVENTIONS)} | | |"
                for name, key in (("chance", "chance"), ("oracle", "oracle"), ("a wrong answer", "wrong"))
            ),
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
