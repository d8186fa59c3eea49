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
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from itertools import pairwise

from medhal.kit.commitment import REVISION_WORDS
from medhal.kit.containers import tag_name
from medhal.kit.vocabulary import fold, phrases

ALTERNATIVE_WORDS = (
    *("or", "but", "though", "although", "not", "possibly", "perhaps", "maybe", "could be"),
    *("could also be", "might be", "might also be", "may be", "may also be", "rather than"),
    *("instead of", "rather", "instead", "actually", "scratch that, it's", "i take it back,"),
    *(w for w in REVISION_WORDS if w not in ("so", "therefore", "thus", "hence", "final", "finally")),
)
"""Words after which a token is an answer or an alternative to one, whatever follows it
("1 or possibly 0", "not 1", "Actually, 1", "On second thought, 2"): a reading must see
every alternative, and every correction."""
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

_DECORATION = " \t\n\r*_`'\"([#$•◦▪▫‣∙►▸▶>-"
"""Decoration before a token (emphasis, quotes, brackets, bullets, heading and quote marks)."""
_TAIL = 48
"""Characters at the end of the text before a token that the label and word patterns look
at (the longest label or lead phrase is shorter): each check costs a bounded look."""
_EMPHASIS = " \t*_`'\"(["
"""Emphasis, quotes and an opening bracket right before a token (`<score>**-1**`, `[2]`)."""
_LIST_MARK = re.compile(r"[.)][ \t]+\S")
_REFERENCE = re.compile(r"\][ \t]*[^\W\d_]")
"""A bracketed number followed by words: a reference mark ("[1] Smith et al., 2019")."""
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
        self._labels = _Suffixes(words)
        self._label = re.compile(_alternation(words))
        self._alternatives = _Suffixes(ALTERNATIVE_WORDS)
        self._leads = _Suffixes((*LEAD_WORDS, *leads, *ALTERNATIVE_WORDS))
        """Words after which an answer follows (the alternatives among them)."""
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
        reply puts its answer: opening a tag or a box, or after an alternative word, whatever
        follows; otherwise after a line start, an answer label, a table cell, an arrow, the
        end of a sentence or a lead word, and followed by what ends an answer (a capitalised
        word starts a new sentence: "0 The answer is ..."). A list item's number ("1. The
        question ...", beside a 0. or 2. item) and a reference mark ("[1] Smith et al.") are
        not."""
        tail = folded[max(0, start - _TAIL) : start]
        if _opens_container(tail.rstrip(_EMPHASIS + "\n")):
            return True
        line_end = folded.find("\n", end, end + _LINE)
        if not (
            self._right.match(folded, end, line_end if line_end != -1 else end + _LINE)
            or _SENTENCE_AFTER.match(text, end)
        ):
            return self._alternatives.end(tail[tail.rfind("\n") + 1 :].rstrip(_DECORATION).rstrip(" \t,:"))
        before, bare, after = self._around(folded, start, end)
        if _REFERENCE.match(after) and folded[start - 1 : start] == "[":
            return False  # "[1] Smith et al.": a reference, not an answer
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
        an answer after it: a mark (a tag, a box, a table cell, an arrow, the end of a
        sentence), an answer label, a lead word or an alternative word."""
        for part in {before.rstrip(), bare, before.rstrip(_EMPHASIS)}:
            if _marked(part):
                return True
            if part.endswith(_SEPARATOR_ENDS):
                separator = _SEPARATOR.search(part, max(0, len(part) - 12))
                if separator is not None and self._labels.end(part[: separator.start()]):
                    return True
        return self._leads.end(bare.rstrip(" \t,:"))

    def _around(self, folded: str, start: int, end: int) -> tuple[str, str, str]:
        """(what precedes the token on its line, the same without trailing decoration, what
        follows it on its line), each at most `_LINE` characters."""
        line_start = folded.rfind("\n", max(0, start - 2 * _LINE), start) + 1
        before = folded[max(line_start, start - _LINE) : start]
        line_end = folded.find("\n", end, end + _LINE)
        after = folded[end : line_end if line_end != -1 else end + _LINE]
        bare = before.rstrip(_DECORATION)
        return before[-_TAIL:], bare[-_TAIL:], after


_CLAUSE = re.compile(r"[.!?;:,()\[\]{}<>|\n–—]")
_SEPARATOR = re.compile(r"[\"'#]?\s*(?:[:=\-–—]|->)$")
_SEPARATOR_ENDS = (":", "=", "-", "–", "—")
"""A label's separator, closing the text before a token ("Answer:", '"verdict":')."""
_OPENING_TAG = re.compile(r"<(?P<name>[^<>/\n]{1,40})>$")
PROSE_TAGS = frozenset(
    {"explanation", "explain", "reasoning", "reason", "rationale", "justification", "think", "thinking"}
    | {"thought", "thoughts", "analysis", "scratchpad", "notes", "note", "comment", "evidence", "context"}
    | {"question", "knowledge", "summary", "discussion", "reflection", "steps", "working"}
)
"""Tag names (`tag_name` form) whose content is prose about the answer, not the answer: a token
opening `<explanation>` is the explanation's first word ("<explanation>Aortic stenosis is
systolic.</explanation>"), read by the rules for prose."""
_LATEX_BRACE = re.compile(r"\\[a-z]+\s*\{$")
_MARKS = (".", "!", "?", ";", "=", "|", "->", "=>", "→", "⇒", "⟶", "➔", "➜")


def _opens_container(text: str) -> bool:
    """Whether a text (right-stripped of emphasis) ends with a tag or a box opening: what
    follows is the answer, whatever comes after it ("<score>2 because ...</score>")."""
    if text.endswith(">"):
        tag = _OPENING_TAG.search(text, max(0, len(text) - 42))
        return tag is not None and tag_name(tag.group("name").split()[0]) not in PROSE_TAGS
    return text.endswith("{") and _LATEX_BRACE.search(text, max(0, len(text) - 24)) is not None


def _marked(text: str) -> bool:
    """Whether a text (right-stripped) ends with what puts an answer after it: the end of a
    sentence, an opening tag, a LaTeX command's brace (`\\boxed{`), a table cell, an arrow."""
    return text.endswith(_MARKS) or _opens_container(text)


_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


class _Suffixes:
    """Phrases a text may end with, looked up by its last words (no regex scan: checking
    the text before every token of a reply must be cheap)."""

    def __init__(self, phrases_: Iterable[str]) -> None:
        spaced = [p for p in phrases_ if not _unspaced(p)]
        self._spaced = {" ".join(_WORD.findall(fold(p).replace("'", ""))) for p in spaced}
        self._spaced |= {" ".join(_WORD.findall(fold(p))) for p in spaced}
        self._longest = max((len(p.split()) for p in self._spaced), default=0)
        self._last_words = {p.split()[-1] for p in self._spaced if p}
        self._unspaced = tuple(fold(p) for p in phrases_ if _unspaced(p))

    def end(self, text: str) -> bool:
        """Whether `text` (folded, right-stripped) ends with one of the phrases, whole words."""
        if not text:
            return False
        if self._unspaced and text.endswith(self._unspaced):
            return True
        if not (text[-1].isalnum() or text[-1] in "'_"):
            return False
        start = len(text)
        while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "'"):
            start -= 1
        last = text[start:]
        if last not in self._last_words and last.replace("'", "") not in self._last_words:
            return False  # the common case, at the cost of one short look
        words = _WORD.findall(text[-_TAIL:])
        for k in range(1, min(self._longest, len(words)) + 1):
            tail = words[-k:]
            if " ".join(tail) in self._spaced or " ".join(w.replace("'", "") for w in tail) in self._spaced:
                return True
        return False


def _unspaced(phrase: str) -> bool:
    """A phrase of a script written without spaces (Chinese, Japanese)."""
    return any("\u3040" <= c <= "\u30ff" or "\u3400" <= c <= "\u9fff" for c in phrase)


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


_JOIN = re.compile(
    r"[\s*_`'\")\]]*(?:[,/|](?:\s*(?:or|and)(?!\w))?|(?<!\w)(?:or|and|to)(?!\w))[\s*_`'\"(\[]*"
)
"""What joins the members of a list of answers ("0, 1", "-2/-1", "1 or 2", "0, 1, or 2")."""


def spread(folded: str, spans: list[tuple[int, int]], answers: list[bool]) -> list[bool]:
    """`answers` (whether each token, in order, stands where an answer goes), extended to
    every token listed with one ("-2, -1, 0, 1 or 2": all of them, once "or 2" is one): a
    reading must see each member of a list of alternatives. One pass each way."""
    joined = [_JOIN.fullmatch(folded, a[1], b[0]) is not None for a, b in pairwise(spans)]
    result = list(answers)
    for n in range(1, len(result)):
        result[n] = result[n] or (result[n - 1] and joined[n - 1])
    for n in range(len(result) - 2, -1, -1):
        result[n] = result[n] or (result[n + 1] and joined[n])
    return result


class Intervals:
    """(start, end) spans, merged, asked whether a position lies in one of them: in
    O(log n) each, so filtering m mentions against n spans stays O((m + n) log n) (a reply of
    thousands of table cells or labels must not cost m x n)."""

    def __init__(self, spans: Iterable[tuple[int, int]]) -> None:
        merged: list[tuple[int, int]] = []
        for start, end in sorted(spans):
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        self._starts = [start for start, _ in merged]
        self._ends = [end for _, end in merged]

    def __contains__(self, position: int) -> bool:
        n = bisect_right(self._starts, position)
        return n > 0 and position < self._ends[n - 1]


def empty_spans(spans: Iterable[tuple[int, int]], positions: Iterable[int]) -> list[tuple[int, int]]:
    """The spans holding none of `positions` (a place that states an answer and gives none)."""
    ordered = sorted(positions)
    return [(a, b) for a, b in spans if bisect_left(ordered, a) == bisect_left(ordered, b)]
