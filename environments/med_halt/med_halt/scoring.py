"""What counts as a right answer in each Med-HALT set, under every reading convention.

A reply is read (see `replies`) and its answer compared with the gold by the set's rule.
A reply without the answer is a format error: counted wrong by the paper score and left
out of the code score, as upstream leaves it out. Our rules (for the `medhal` and
`strict` readings) compare after stripping surrounding whitespace:

- FCT: the answer equals `correct_answer` under Med-HALT's equality rule
  (`rows.option_key`: case, runs of spaces, surrounding marks and final punctuation do
  not count). The yes/no verdict (`is_answer_correct`) is scored too, against whether the
  proposed answer was right; upstream ignores it.
- NOTA: the chosen option (`cop`) equals `correct_answer` under the same rule.
- Fake: `decline` (default) - the chosen option, as a whole, says "I do not know" (or
  "I don't know", "unknown", or either in another language: "No lo sé", "不知道") or is
  one of the row's options that say so; a value naming "I do not know" beside an option
  is not a decline; `keywords` - the authors' rule, any of their
  keywords appears in the chosen option (it also accepts "none of the above" and "all of
  the above").
- IR: `exact` - the answer equals the gold ignoring case, as upstream (a fake paper's
  gold is "Unknown"); `normalized` - the two PubMed link forms name the same paper,
  titles are compared ignoring case, punctuation and whitespace, and for a fake paper an
  "Unknown"-like answer (in any language: "Desconocido", "未知") or a negative
  `is_paper_exists` flag is right.

One answer (`one_answer`, our rules only). A reply whose fields contradict each other
says two things, and is not paid for either: it is a format error (no answer).
- IR: the existence flag `is_paper_exists` and the field must agree. A negative flag
  ("No", "Unknown") beside a title or link, or a positive one ("Yes") beside "Unknown",
  would otherwise be right on a fake paper by the flag and on a real one by the field.
- FCT: the verdict must agree with the answer. "yes" (the proposed answer is right)
  beside an answer that is not the proposed one, or "no" beside the proposed answer,
  names two different answers. A verdict that is not a yes/no word is not compared.

The `authors` convention is the authors' pipeline end to end: their reading and their
comparisons (`eval_full.py`: lower-cased equality without stripping, the keyword rule
for fake questions, exact IR matching), whatever the run's rule options say.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from med_halt.benchmark import FAKE, FCT, LINK_SETS, NOTA, SETS, TITLE_SETS
from med_halt.replies import Reading, read_all
from med_halt.rows import UNKNOWN, normalize_text, option_key, pubmed_id, same_option, same_text
from medhal.kit.outcomes import CONVENTIONS, CORRECT, PARSED, READINGS, correct_key, parsed_key
from medhal.kit.vocabulary import fold, terms

FAKE_RULES = ("decline", "keywords")
IR_RULES = ("exact", "normalized")
VERDICT_KEY = "is_answer_correct"
EXISTS_KEY = "is_paper_exists"

FAKE_KEYWORDS = (
    "i do not know",
    "conceding defeat",
    "admit",
    "none of the above",
    "acknowled",
    "irrelevant",
    "fiction",
    "all of the above",
    "nonsensical",
    "no correct",
    "absurd",
    "defy",
    'i don"t know.',
    "defies",
)
"""The authors' keyword rule for the fake set (their `don"t` typo included)."""

VERDICT_CORRECT = "verdict_correct"
"""Outcome key of the FCT yes/no verdict."""
ITEM_OUTCOMES = (VERDICT_CORRECT, "fake_decline", "fake_keywords", "ir_exact", "ir_normalized")
"""Outcomes recorded besides correctness: the FCT verdict and every rule of a set."""

_DECLINE_ANSWERS = {
    "unknown",
    "not found",
    "none",
    "n a",
    "na",
    "not available",
    "does not exist",
    "not known",
}
_NEGATIVE_FLAGS = {"unknown", "no", "false", "not found", "does not exist", "not exists"}
_POSITIVE_FLAGS = {"yes", "true", "exists", "found"}
_DECLINE_PHRASE = re.compile(r"(?:[a-j] )?(?:i )?(?:do not|don t|dont) know(?: the answer)?")
"""A whole answer that declines ("I do not know", "i don't know.", "I dont know the answer",
"E. I do not know"), in `normalize_text`'s form."""
_VERDICTS = {
    "yes": "yes",
    "true": "yes",
    "correct": "yes",
    "no": "no",
    "false": "no",
    "incorrect": "no",
    "wrong": "no",
}


class Gradable(Protocol):
    """What grading needs of a task (`MedHaltData` has it)."""

    test_set: str
    gold: str
    rule: str
    parser: str
    verdict_gold: str
    proposed_answer: str
    decline_options: tuple[str, ...]
    paper_exists: bool | None
    choices: dict[str, str]


def verdict(value: Any) -> str | None:
    """A yes/no verdict in any of the spellings models use, else None."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return _VERDICTS.get(normalize_text(str(value)))


_UNKNOWN_WORDS = frozenset(terms("unknown"))
""""I do not know" and "unknown" in each language of `medhal.kit.vocabulary` ("No lo sé",
"Je ne sais pas", "不知道", "不明", ...), as `fold` writes them."""


def _says_unknown(answer: Any) -> bool:
    """The whole answer is "I do not know" or "unknown", in any language."""
    return fold(str(answer)).strip(" \t\r\n.!*_`'\"") in _UNKNOWN_WORDS


def declines(answer: Any, decline_options: tuple[str, ...]) -> bool:
    """The `decline` rule: the whole answer declines (in any language), or is one of the
    row's declining options (`same_option`); "Moonlight tonic or I do not know" is not a
    decline."""
    key = option_key(answer)
    return (
        _DECLINE_PHRASE.fullmatch(normalize_text(str(answer))) is not None
        or _says_unknown(answer)
        or any(key == option_key(option) for option in decline_options)
    )


def unknown_like(answer: Any) -> bool:
    """An IR answer saying there is no such paper ("Unknown", "Not found", "N/A", "I do
    not know", and "unknown" or "I do not know" in any language)."""
    text = normalize_text(str(answer))
    return text in _DECLINE_ANSWERS or _DECLINE_PHRASE.fullmatch(text) is not None or _says_unknown(answer)


def existence_flag(value: Any) -> bool | None:
    """An `is_paper_exists` value as a claim: True (exists), False (does not, or not
    known), None (no flag, or words that are neither)."""
    if isinstance(value, bool):
        return value
    text = normalize_text(str(value)) if value is not None else ""
    return True if text in _POSITIVE_FLAGS else False if text in _NEGATIVE_FLAGS else None


def keyword_decline(answer: Any) -> bool:
    text = str(answer).lower()
    return any(term in text for term in FAKE_KEYWORDS)


def ir_normalized(answer: Any, gold: str, exists: bool, flag: Any, title: bool) -> bool:
    if not exists:
        return unknown_like(answer) or existence_flag(flag) is False
    if title:
        return normalize_text(str(answer)) == normalize_text(gold)
    gold_pmid = pubmed_id(gold)
    return (gold_pmid is not None and pubmed_id(answer) == gold_pmid) or same_text(answer, gold)


def rules(test_set: str) -> tuple[str, ...]:
    """The scoring rules a set can be graded by (the first is the default)."""
    if test_set == FAKE.config:
        return FAKE_RULES
    if test_set in TITLE_SETS or test_set in LINK_SETS:
        return IR_RULES
    return ("exact",)


def rule_key(test_set: str, rule: str) -> str:
    """The outcome key of a rule: `fake_decline`, `ir_exact`, ..."""
    return f"{'fake' if test_set == FAKE.config else 'ir'}_{rule}"


def rule_keys(test_set: str) -> tuple[str, ...]:
    """Outcome keys recorded for a set's alternative rules (none for FCT and NOTA)."""
    alternatives = rules(test_set)
    return tuple(rule_key(test_set, r) for r in alternatives) if len(alternatives) > 1 else ()


@dataclass(frozen=True)
class Grade:
    correct: bool
    """Right under the rule the run uses (False for a format error)."""
    outcomes: dict[str, float]
    """0/1 outcome under every rule of the set (`ir_exact`, `fake_keywords`, ...) and the
    FCT verdict (`verdict_correct`)."""


def contradiction(item: Gradable, reading: Reading) -> str | None:
    """Why the reading's fields name two different answers (see the module docstring,
    "One answer"), else None."""
    if reading.answer is None:
        return None
    if item.test_set == FCT.config and item.proposed_answer.strip():
        said = verdict(reading.get((VERDICT_KEY,)))
        if said is not None and (said == "yes") != same_option(reading.answer, item.proposed_answer):
            return f"the verdict {VERDICT_KEY!r} and the answer disagree"
    if item.test_set in TITLE_SETS or item.test_set in LINK_SETS:
        flag = existence_flag(reading.get((EXISTS_KEY,)))
        if flag is not None and flag is unknown_like(reading.answer):
            return f"the flag {EXISTS_KEY!r} and the answer disagree"
    return None


def one_answer(item: Gradable, reading: Reading) -> Reading:
    """The reading, or no answer (its fields kept) when they contradict each other."""
    if contradiction(item, reading) is None:
        return reading
    return Reading(reading.fields, None, None, reading.method)


def grade(item: Gradable, reading: Reading) -> Grade:
    """Our rules: the reading's answer against the gold, under the item's rule (a reading
    whose fields contradict each other has no answer: `one_answer`)."""
    reading = one_answer(item, reading)
    outcomes: dict[str, float] = {}
    if item.test_set == FCT.config:
        given = reading.get((VERDICT_KEY,))
        outcomes[VERDICT_CORRECT] = float(given is not None and verdict(given) == item.verdict_gold)
    answer = reading.answer
    if answer is None:
        outcomes.update(dict.fromkeys(rule_keys(item.test_set), 0.0))
        return Grade(False, outcomes)
    if item.test_set in (FCT.config, NOTA.config):
        return Grade(same_option(answer, item.gold), outcomes)
    if item.test_set == FAKE.config:
        outcomes["fake_decline"] = float(declines(answer, item.decline_options))
        outcomes["fake_keywords"] = float(keyword_decline(answer))
    else:
        exists = item.paper_exists if item.paper_exists is not None else not same_text(item.gold, UNKNOWN)
        outcomes["ir_exact"] = float(same_text(answer, item.gold))
        outcomes["ir_normalized"] = float(
            ir_normalized(answer, item.gold, exists, reading.get((EXISTS_KEY,)), item.test_set in TITLE_SETS)
        )
    return Grade(bool(outcomes[rule_key(item.test_set, item.rule)]), outcomes)


def authors_correct(item: Gradable, reading: Reading) -> bool:
    """The authors' comparisons (`eval_full.py` @ 3dfe1e4): `str(pred).lower() ==
    str(gold).lower()` without stripping (lines 20-21) for FCT, NOTA and IR; the keyword
    rule for fake questions (lines 137-142)."""
    if reading.answer is None:
        return False
    if item.test_set == FAKE.config:
        return keyword_decline(reading.answer)
    return str(reading.answer).lower() == str(item.gold).lower()


@dataclass(frozen=True)
class Scored:
    metrics: dict[str, float]
    """`correct` / `parsed` under the run's convention, the same per convention
    (`correct_medhal`, `parsed_authors`, ...), and the item outcomes of the run's reading."""
    info: dict[str, Any]
    """The answer read under each convention, and how the run's reading was made."""


def outcome_key(outcome: str, convention: str) -> str:
    """The metric of one rule outcome under one reading: `ir_exact_strict`, ..."""
    return f"{outcome}_{convention}"


def set_outcomes(test_set: str) -> tuple[str, ...]:
    """The outcomes an item of `test_set` records besides correctness: the FCT verdict, or
    every rule of the fake set or of an IR set; none for NOTA."""
    return ((VERDICT_CORRECT,) if test_set == FCT.config else ()) + rule_keys(test_set)


def score(item: Gradable, reply: str | None) -> Scored:
    """Read `reply` under every convention and grade each reading: one pass per trace.
    An item records only its own set's outcomes (`set_outcomes`), under every convention:
    another set's rule means nothing for it, and a 0 there would dilute every average the
    platform and trainers take of that outcome over a run of several sets. The `medhal` and
    `strict` readings hold one answer or none (`one_answer`); `authors` keeps the authors' rules."""
    read = read_all(reply, SETS[item.test_set].answer_keys, item.choices)
    readings = {name: r if name == "authors" else one_answer(item, r) for name, r in read.items()}
    conflict = contradiction(item, read[item.parser]) if item.parser != "authors" else None
    metrics: dict[str, float] = {}
    own = set_outcomes(item.test_set)
    for name in CONVENTIONS:
        reading = readings[name]
        graded = grade(item, reading)
        right = authors_correct(item, reading) if name == "authors" else graded.correct
        metrics[correct_key(name)] = float(right)
        metrics[parsed_key(name)] = float(reading.answer is not None)
        metrics.update({outcome_key(k, name): graded.outcomes[k] for k in own})
    metrics[CORRECT] = metrics[correct_key(item.parser)]
    metrics[PARSED] = metrics[parsed_key(item.parser)]
    info: dict[str, Any] = {
        "answer": readings[item.parser].answer,
        READINGS: {name: readings[name].answer for name in CONVENTIONS},
        "parse_method": readings[item.parser].method,
    }
    if conflict is not None:
        info["contradiction"] = conflict  # why the run's reading has no answer
    return Scored(metrics, info)


WRONG_ANSWER = "medhal wrong answer"
"""An answer no set accepts: not a gold text, no decline keyword, not "Unknown"."""


def _answer_dict(item: Gradable, answer: str, right: bool) -> dict[str, Any]:
    """The dict a model writes, with the keys the set's output format names."""
    spec = SETS[item.test_set]
    if spec is FCT:
        verdict_given = item.verdict_gold if right else ("no" if item.verdict_gold == "yes" else "yes")
        if not right and verdict_given == "yes" and item.proposed_answer.strip():
            answer = item.proposed_answer  # "yes" names the proposed answer (a wrong one here)
        return {
            "is_answer_correct": verdict_given,
            "answer": answer,
            "why_correct": "Checked against the question.",
        }
    if spec.family == "reasoning":
        return {"cop": answer, "cop_index": 0, "why_correct": "Checked against the question."}
    # The flag agrees with the field (one answer): a wrong reply claims a paper exists.
    return {"is_paper_exists": "No" if unknown_like(answer) else "Yes", spec.answer_keys[0]: answer}


def gold_reply(item: Gradable) -> str:
    """The reply a perfect model gives, in the format the prompt and its shots show (a
    Python dict, as `str` writes it): the gold answer, "I do not know" for a fake
    question, "Unknown" for a paper that does not exist."""
    answer = "I do not know" if item.test_set == FAKE.config else item.gold
    return str(_answer_dict(item, answer, right=True))


def wrong_reply(item: Gradable) -> str:
    """A well-formed reply with a wrong answer, its fields agreeing (one answer): an FCT
    verdict "yes" comes with the proposed answer, which is then wrong."""
    return str(_answer_dict(item, WRONG_ANSWER, right=False))
