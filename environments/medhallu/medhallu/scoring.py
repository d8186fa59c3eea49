"""Reading a detection verdict out of a reply, and what it earns.

The prompt asks for a bare `0` (factual), `1` (hallucinated) or, when offered, `2` (not
sure). Real replies wrap that in many ways, so the parser accepts, in this order:

1. A reasoning block is removed first: the answer is what follows the last `</think>`.
   A `<think>` that is never closed means the model never answered: INVALID.
2. A digit verdict at the start (after an optional `Answer:` / `Judgement:` / `Verdict:`
   label and markdown or quote marks), e.g. `1`, `0.`, `Answer: 1`, `**1** (hallucinated)`;
   else the last labelled digit (`... so the answer is 1`). A digit decides on its own.
3. Otherwise words. Abstention is checked first, so `not sure` is never read as a negated
   verdict (the authors' parser reads it as "hallucinated" because it contains `not`).
   Then the first verdict phrase decides, negated phrases (`not hallucinated`,
   `non-factual`) taking precedence over the bare words they contain.

`2` and the abstention words are a verdict only when the prompt offered "not sure";
otherwise they are INVALID, like a reply with no verdict at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FACTUAL = "factual"
HALLUCINATED = "hallucinated"
NOT_SURE = "not_sure"
LABELS = (FACTUAL, HALLUCINATED)
"""Gold classes; `HALLUCINATED` is the positive class of every F1."""
CODE_TO_LABEL = {0: FACTUAL, 1: HALLUCINATED, 2: NOT_SURE}

_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_DECORATION = re.compile(r"[*`\"#>]+")
_LABEL = r"(?:(?:final|my|your)\s+)?(?:answer|judge?ment|verdict|label|output|classification|prediction)"
_DIGIT = r"([012])(?!\d|\.\d)"
_LEADING_DIGIT = re.compile(rf"^\W*(?:{_LABEL}\W*(?:is\W*)?)?{_DIGIT}")
_LABELLED_DIGIT = re.compile(rf"\b{_LABEL}\W*(?:is\W*)?{_DIGIT}")
_ABSTENTION = re.compile(
    r"\bnot\s+sure\b|\bunsure\b|\buncertain\b|\bcannot\s+(?:be\s+)?determined?\b|"
    r"\bcan't\s+determine\b|\bi\s+don'?t\s+know\b|^\W*(?:pass|skip)\W*$"
)
_VERDICT_WORDS = re.compile(
    r"(?P<neg_hall>\b(?:not|non)[\s-]*hallucinat(?:ed|ion|ory)\b|\bnot\s+a\s+hallucination\b)"
    r"|(?P<neg_fact>\b(?:not|non)[\s-]*factual\b|\bnonfactual\b|\bnot\s+factually\s+correct\b)"
    r"|(?P<hall>\bhallucinat(?:ed|ion|ory)\b)"
    r"|(?P<fact>\bfactual(?:ly\s+correct)?\b)"
)
_WORD_TO_CODE = {"neg_hall": 0, "neg_fact": 1, "hall": 1, "fact": 0}


@dataclass(frozen=True)
class Verdict:
    code: int | None
    """0 factual, 1 hallucinated, 2 not sure; None when the reply is INVALID."""

    @property
    def label(self) -> str | None:
        return CODE_TO_LABEL.get(self.code) if self.code is not None else None

    @property
    def abstained(self) -> bool:
        return self.code == 2

    @property
    def answered(self) -> bool:
        """A factual/hallucinated verdict (neither abstained nor INVALID)."""
        return self.code in (0, 1)


INVALID_VERDICT = Verdict(None)


def answer_text(reply: str | None) -> str | None:
    """The reply after its reasoning block; None when a `<think>` is left open."""
    text = reply or ""
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        return text[closes[-1].end():]
    if _THINK_OPEN.search(text):
        return None
    return text


def _digit(text: str) -> int | None:
    """A leading digit, else the last labelled one (a final answer follows any echo of
    the instructions)."""
    match = _LEADING_DIGIT.match(text)
    if match is None:
        match = next(reversed(list(_LABELLED_DIGIT.finditer(text))), None)
    return int(match.group(1)) if match else None


def _words(text: str) -> int | None:
    if _ABSTENTION.search(text):
        return 2
    match = _VERDICT_WORDS.search(text)
    return _WORD_TO_CODE[match.lastgroup] if match else None


def parse_reply(reply: str | None, not_sure_offered: bool) -> Verdict:
    answer = answer_text(reply)
    if answer is None:
        return INVALID_VERDICT
    text = _DECORATION.sub(" ", answer).strip().lower()
    code = _digit(text)
    if code is None:
        code = _words(text)
    if code is None or (code == 2 and not not_sure_offered):
        return INVALID_VERDICT
    return Verdict(code)


def reward(verdict: Verdict, gold: str, not_sure_reward: float) -> float:
    """1 for the gold verdict, `not_sure_reward` for an abstention, 0 otherwise (INVALID too)."""
    if verdict.abstained:
        return not_sure_reward
    return float(verdict.label == gold)
