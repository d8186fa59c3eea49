"""Where a reply puts an answer: the places a reader takes a token as a candidate answer.

A verdict digit or a score is an answer when it stands where replies put answers: alone
on its line, after an answer label (in any language), inside a tag, a box or a JSON value,
after "the answer is" or "I would say", or as an alternative ("or 0", "could be 0", "not
0", "Actually, 0"). The same digit in "2 trials" or "Step 1: ..." is not. Every candidate
the reply names must be found, or a hedge ("1, though 0 is possible") reads as its first
half; `medhal.kit.commitment` then decides which of them the reply stands by.

`Places` holds what a benchmark adds (its labels, the words that lead to its answers, the
words that may follow one, how its answer tokens look); the rest is shared. Each check
looks at a bounded stretch of the line around the token: linear in the reply.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from medhal.kit.vocabulary import fold, phrases, terms

ALTERNATIVE_WORDS = (
    *("or", "but", "though", "although", "not", "possibly", "perhaps", "maybe", "could be"),
    *("could also be", "might be", "might also be", "may be", "may also be", "rather than"),
    *("instead of", "rather", "instead", "actually", "correction", "corrected", "wait", "i meant"),
    *("i mean", "en realidad", "en fait", "eigentlich", "na verdade", "in realtà", "на самом деле"),
    *("实际上", "其实", "実は", "사실은", "في الواقع", "वास्तव में"),
)
"""Words after which a token is an answer or an alternative to one, whatever follows it
("1 or possibly 0", "not 1", "Actually, 1"): a reading must see every alternative."""
LEAD_WORDS = (
    *("and", "probably", "likely", "definitely", "clearly", "so", "thus", "therefore", "hence"),
    *("would be", "should be", "must be", "will be", "it is", "it's", "i would say", "i'd say"),
    *("i say", "i would go with", "i'd go with", "go with", "i choose", "i pick", "i'll go with"),
    *("my guess is", "guess", "guess is", "bet is", "pick is", "leaning towards", "lean towards"),
    *("leaning toward", "i think", "i believe", "i would answer", "i'd answer", "final", "then"),
    *("choose", "pick", "is also", "also", "not even"),
)
"""Words after which a token is an answer when the token ends it ("I would say 1.")."""
FOLLOWERS = (
    *("or", "and", "but", "though", "although", "because", "since", "as", "if", "unless"),
    *("is possible", "is also possible", "could", "might", "would", "seems", "however"),
    *("cannot", "can't", "can not", "may", "remains", "is plausible", "then", "otherwise", "for"),
    "means",
)
"""Words that may follow an answer on its line ("1 because ...", "0 is also possible")."""

_DECORATION = re.compile(r"[\s*_`'\"(\[#$•◦▪▫‣∙►▸▶>-]*$")
"""Decoration before a token (emphasis, quotes, brackets, bullets, heading and quote marks)."""
_LIST_MARK = re.compile(r"[.)][ \t]+\S")
_SENTENCE_AFTER = re.compile(r"[*_`'\")\]]*[ \t]+[A-Z]")
_LINE = 80
"""Characters of its line looked at on each side of a token."""


def _alternation(words: Iterable[str]) -> str:
    return f"(?:{phrases(words)})"


class Places:
    """Where one benchmark's answers stand (see the module docstring)."""

    def __init__(
        self, labels: Iterable[str], leads: Iterable[str], followers: Iterable[str], token: str
    ) -> None:
        """`labels`: words that label an answer ("score", "final answer"), with their
        translations (`medhal.kit.vocabulary.terms`); `leads`: words after which an answer
        follows, besides `LEAD_WORDS` ("the score is"); `followers`: words that may follow
        an answer, besides `FOLLOWERS` (verdict words: "1 hallucinated"); `token`: regex
        source of an answer token, for lists of them ("0, 1", "-2, -1")."""
        labels = tuple(labels)
        words = (*labels, *(w.replace(" ", "_") for w in labels if " " in w))
        self._label_end = re.compile(_alternation(words) + r"[\"'#]?\s*(?:[:=\-–—]|->)\s*$")
        self._label = re.compile(_alternation(words))
        self._alternative_end = re.compile(_alternation(ALTERNATIVE_WORDS) + r"[\s,:]*$")
        self._lead_end = re.compile(_alternation((*LEAD_WORDS, *leads)) + r"[\s,:]*$")
        self._left_mark = re.compile(
            rf"(?:[.!?;]|<[^<>/\n]{{1,40}}>|\\[a-z]+\s*\{{|[=|]|->|=>|[→⇒⟶➔➜]|(?<![\w.]){token}[\s*_`'\")\]]*[,/|])\s*$"
        )
        self._right = re.compile(
            r"[\s*_`'\")\]}$]*(?:$|[.!?;,:)\]}|<=\-–—→(/]|" + _alternation((*FOLLOWERS, *followers)) + ")"
        )
        self._right_of_word = re.compile(
            r"[\s*_`'\")\]}$]*(?:$|[.!?;,:)\]}|<(\-–—]|(?:or|but|though|although|however|is\s+(?:also\s+)?possible|"
            r"cannot|can't|can\s+not|might|may|could|remains|is\s+also|is\s+plausible|seems)\b)"
        )

    def is_label(self, cell: str) -> bool:
        """Whether a text (a table cell, a heading) is one of the answer labels."""
        return self._label.fullmatch(fold(cell).strip(" \t*_`#:")) is not None

    def holds(self, text: str, folded: str, start: int, end: int) -> bool:
        """Whether the token at [start, end) of `folded` (the `fold` of `text`) stands where a
        reply puts its answer: after an alternative word whatever follows; otherwise after a
        line start, an answer label, a tag, a box, a table cell, an arrow, the end of a
        sentence, a comma, another answer token and a comma, or a lead word, and followed by
        what ends an answer (a capitalised word starts a new sentence: "0 The answer is ...").
        A list item's number ("1. The question ...", beside a 0. or 2. item) is not one."""
        before, bare, after = self._around(folded, start, end)
        if self._alternative_end.search(bare):
            return True
        if not (self._right.match(after) or _SENTENCE_AFTER.match(text, end)):
            return False
        if not bare.strip():
            return not (_LIST_MARK.match(after) and _listed(folded, folded[start:end], start))
        return self.leads(before, bare)

    def holds_word(self, folded: str, start: int, end: int) -> bool:
        """Whether a word (an adjective verdict, a scale's words) stands alone where an answer
        goes: as `holds`, but what follows must end it (not a noun it qualifies: "correct
        dosing"; not "as": "True as it may be")."""
        before, bare, after = self._around(folded, start, end)
        if not self._right_of_word.match(after):
            return False
        cut = max((m.end() for m in _CLAUSE.finditer(before)), default=0)
        return not bare[cut:].strip(" not") or self.leads(before, bare)

    def leads(self, before: str, bare: str) -> bool:
        """Whether the text before an answer (on its line; `bare`: without decoration) puts
        an answer after it."""
        return (
            any(
                pattern.search(part)
                for pattern in (self._left_mark, self._label_end)
                for part in (before, bare)
            )
            or bool(self._lead_end.search(bare) or self._alternative_end.search(bare))
            or bare.rstrip().endswith(",")
        )

    def _around(self, folded: str, start: int, end: int) -> tuple[str, str, str]:
        """(what precedes the token on its line, the same without trailing decoration, what
        follows it on its line), each at most `_LINE` characters."""
        line_start = folded.rfind("\n", max(0, start - 2 * _LINE), start) + 1
        before = folded[max(line_start, start - _LINE) : start]
        line_end = folded.find("\n", end, end + _LINE)
        after = folded[end : line_end if line_end != -1 else end + _LINE]
        bare = before[: len(before) - len(_DECORATION.search(before).group())]  # type: ignore[union-attr]
        return before, bare, after


_CLAUSE = re.compile(r"[.!?;:,()\[\]{}<>|\n–—]")


def _listed(folded: str, token: str, at: int) -> bool:
    """Whether the token is a list item's number: an item numbered one before or after it
    starts a line nearby."""
    if not token.isdigit() or len(token) > 3:
        return False
    number = int(token)
    near = folded[max(0, at - 2000) : at + 2000]
    return any(
        re.search(rf"(?:^|\n)[ \t*#>-]*{k}[.)][ \t]+\S", near) for k in (number - 1, number + 1) if k >= 0
    )


def answer_labels(*concepts: str) -> tuple[str, ...]:
    """The answer labels of these concepts in every language (`terms`), for `Places`."""
    return terms(*concepts)
