"""Reading a MedHallu verdict out of a reply, under three named conventions.

The prompt asks for one digit: 0 (factual), 1 (hallucinated) or, when offered, 2 (not
sure). How a reply is read changes the F1 a model gets, so every reply is read three
ways and all three are recorded (README, "How replies are read"):

- `medhal` (default, drives the reward): what a careful human reads.
- `authors`: the rule of the authors' detection script, bugs included.
- `strict`: only the exact format the prompt asks for.

Each reader is a pure function `(reply, not_sure_offered) -> label | None`, where None
is INVALID (no verdict could be read).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from medhal.kit.commitment import Mention, committed
from medhal.kit.positions import Places
from medhal.kit.replies import after_leading_reasoning, after_reasoning
from medhal.kit.tables import answer_cells
from medhal.kit.vocabulary import fold, phrases, terms, without_footnotes

FACTUAL = "factual"
HALLUCINATED = "hallucinated"
NOT_SURE = "not_sure"
LABELS = (FACTUAL, HALLUCINATED)
"""Gold classes; HALLUCINATED is the positive class of every F1."""
DIGITS = {"0": FACTUAL, "1": HALLUCINATED, "2": NOT_SURE}
VOCABULARIES = ("digits", "halueval")
"""Answer vocabularies the `medhal` reading knows, declared by the taskset option
`answer_vocabulary`: `digits`, the prompt's own 0 / 1 / 2; `halueval`, HaluEval's
`#Your Judgement#: Yes` (hallucinated) / `No` (factual), for replies made with
HaluEval-style prompts, read besides the digits. Never guessed from the reply."""
Vocabulary = Literal["digits", "halueval"]

Reader = Callable[[str | None, bool], str | None]


# ------------------------------------------------------------------------------ authors


def read_authors(reply: str | None, not_sure_offered: bool = True) -> str:
    """The authors' rule (`Detection/detection_vllm_notsurecase.py`, lines 78-85), applied
    as they apply it, to the stripped raw output (line 246): lower-cased, any `1`, `not`
    or `non` reads as hallucinated; else any `not sure`, `pass`, `skip` or `2` as not sure;
    else factual. It never gives INVALID, keeps reasoning blocks, and reads "not sure" as
    hallucinated (the `not` test comes first). The option changes nothing in their rule."""
    text = (reply or "").strip().lower()
    if "1" in text or "not" in text or "non" in text:
        return HALLUCINATED
    if "not sure" in text or "pass" in text or "skip" in text or "2" in text:
        return NOT_SURE
    return FACTUAL


# ------------------------------------------------------------------------------- strict

_STRICT = re.compile(r"\s*(?:([012])|\\boxed\{\s*([012])\s*\})\s*")


def read_strict(reply: str | None, not_sure_offered: bool) -> str | None:
    """Only a bare digit or a boxed digit (after one leading reasoning block, a reasoning
    model's native format); `2` only when it was offered."""
    text = after_leading_reasoning(reply)
    match = _STRICT.fullmatch(text) if text is not None else None
    if match is None:
        return None
    label = DIGITS[match.group(1) or match.group(2)]
    return None if label == NOT_SURE and not not_sure_offered else label


# ------------------------------------------------------------------------------- medhal
#
# The `medhal` reading finds every verdict the reply names (`mentions`): a digit where a
# reply puts its answer (alone on its line, after an answer label in any language, in a
# tag, a box, a JSON value or an answer cell of a table, after "the answer is", "I would
# say", "or", "could be", "not", "actually"), a verdict word (every language; English
# adjectives only when said of the answer), an abstention, a yes or no said of
# hallucination. `medhal.kit.commitment.committed` decides which of them the reply stands
# by: when two readings are possible, there is none.


_LABELS = (
    *terms("answer", "verdict"),
    "digit",
    "your judgement#",
    "judgement#",
    "your judgment#",
    "judgment#",
)
"""Answer labels in every language (`medhal.kit.vocabulary`), and the prompt's own."""
_PLACES = Places(
    _LABELS,
    leads=(
        *("answer is", "verdict is", "judgement is", "judgment is", "label is", "output is"),
        *("classification is", "digit is", "choice is", "response is"),
    ),
    followers=terms("factual", "hallucinated", "not_sure"),
    token="[012]",
)
"""Where a MedHallu reply puts its verdict (`medhal.kit.positions`)."""
_DIGIT = re.compile(r"(?<![^\W_]|[.+\-])[012](?![^\W_]|[.,]\d)")
"""A lone 0, 1 or 2 (emphasis underscores around it allowed; not part of a number or word)."""
_ENGLISH = re.compile(
    r"(?<![\w])(?:(hallucinat\w*|fabricat\w*|nonfactual)|(factual(?:ly\s+correct)?|accurate|correct|true|"
    r"supported)|(inaccurate|incorrect|false|wrong|untrue|unsupported))(?!\w)"
)
_PARTLY = re.compile(
    r"(?<!\w)not\s+(?:entirely|completely|fully|totally|wholly|quite|100%)\s+(?:factual|accurate|correct|true)(?!\w)"
)
"""Only partly right ("not entirely accurate"): an answer with something wrong in it is
hallucinated."""
_FOREIGN = {
    label: re.compile(phrases(w for w in terms(concept) if w not in terms(concept, languages=("en",))))
    for label, concept in ((FACTUAL, "factual"), (HALLUCINATED, "hallucinated"), (NOT_SURE, "not_sure"))
}
"""The verdict words of the languages other than English (English ones have rules of
their own: adjectives must be said of the answer)."""
_ABSTAINING = re.compile(
    r"(?<!\w)(?:not\s+(?:entirely\s+|completely\s+|really\s+|quite\s+|fully\s+)?(?:sure|certain)|unsure|"
    r"uncertain|i\s+(?:do\s+not|don'?t|dont)\s+know|cannot\s+(?:be\s+)?determined?|"
    r"can'?t\s+(?:tell|determine|be\s+determined|say)|unable\s+to\s+(?:determine|tell|say)|"
    r"(?:insufficient|not\s+enough)\s+(?:information|evidence))(?!\w)"
)
_COMPLEMENT = re.compile(
    r"[ \t]+(?:(?:why|where|how|what|when|who)\b|"
    r"(?!(?:it|this|that|the|whether|if)\b)[a-z]+\s+(?:is|are|was|were)\b)"
)
"""A word after "not sure" that makes it a doubt about something else ("not sure why it
happened", "not sure hallucination is the word"), not an abstention; doubting the verdict
("not sure whether it is factual", "not sure it is") is one."""
_WHOLE_ABSTENTION = re.compile(r"\W*(?:pass|skip)\W*")
_YES_NO = re.compile(
    r"(?<![a-z-])(?:is_|contains_|has_)?(hallucinat\w*|factual(?:ly correct)?|contains?[ _]hallucinations?|"
    r"is_factual)[\"']?[ \t]*[:?=\-–][ \t]*\W{0,3}"
    r"(yes|no|true|false|none|absent|not (?:found|detected|present)|present|detected|found)\b"
)
_POSITIVE = {"yes", "true", "present", "detected", "found"}
_HALUEVAL_YES_NO = re.compile(
    r"(?:^[\s*_`'\"#>]*|(?:#|judge?ment|answer)[\"'#]?\s*:\s*\W{0,3})(yes|no)(?!\w)(?!\s*(?:or|/)\s*(?:yes|no))"
)
_KEY_PAIR = re.compile(
    r"(?<![\w.])([012])\s*['\"`)]?\s*(?:=|:|means|for|-|–|->|→|if\b[^.;\n]{0,40}?)\s*['\"`(]?\s*"
    r"(factual|hallucinat|not sure|unsure)|"
    r"(factual|hallucinat|not sure|unsure)\w*['\"`]?\s*(?:=|:|->|→)\s*['\"`]?([012])(?!\w)"
)
_KEY_WORDS = {"factual": FACTUAL, "hallucinat": HALLUCINATED, "not sure": NOT_SURE, "unsure": NOT_SURE}
_SUBJECTS = {
    *("answer", "it", "this", "that", "response", "statement", "claim", "information", "reply", "option"),
    *("respuesta", "resposta", "réponse", "antwort", "risposta", "ответ"),
}
_SPEAKERS = {"i", "we", "you", "i'm"}
_COPULAS = {
    *("is", "was", "are", "be", "been", "seems", "appears", "remains", "sounds", "looks", "being"),
    *("es", "é", "est", "ist", "è"),
}
_OPINION_VERBS = {"think", "believe", "consider"}
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_CLAUSE = re.compile(r"[.!?;:,()\[\]{}<>|\n–—]")


def _mention(start: int, end: int, label: str) -> Mention[str]:
    opposite = {FACTUAL: HALLUCINATED, HALLUCINATED: FACTUAL}.get(label)
    return Mention(start, end, label, opposite)


def _digits(text: str, folded: str) -> list[Mention[str]]:
    return [
        Mention(m.start(), m.end(), DIGITS[m.group()])  # a denied digit asserts nothing: no opposite
        for m in _DIGIT.finditer(folded)
        if _PLACES.holds(text, folded, m.start(), m.end())
    ]


def _clause_before(folded: str, start: int) -> list[str]:
    """The words of the clause before `start` (back to punctuation, at most 120 characters),
    a contracted copula spelt out ("it's" -> "it is")."""
    low = max(0, start - 120)
    cut = max((m.end() for m in _CLAUSE.finditer(folded, low, start)), default=low)
    return _WORD.findall(re.sub(r"\b(it|that|this)'s\b", r"\1 is", folded[cut:start]))


def _said_of_answer(folded: str, start: int, end: int) -> bool:
    """An adjective verdict ("correct", "false", "factual") counts where a digit would (a
    labelled value, a line or clause of its own, after "or", "possibly", "not": see
    `_answer_position`), after "non-", or said of the answer: a copula shortly before it
    whose subject is the answer (it, this, the response, ...) and not the speaker ("I could
    be wrong")."""
    if folded[max(0, start - 4) : start] in ("non-", "non "):
        return True
    words = _clause_before(folded, start)
    if _SPEAKERS & set(words[-3:]):
        return False  # "I could be wrong", "we are correct"
    if _PLACES.holds_word(folded, start, end):
        return True
    copula = next(
        (
            j
            for j in range(len(words) - 1, max(-1, len(words) - 4), -1)
            if words[j] in _COPULAS or words[j] in ("isn't", "wasn't", "aren't")
        ),
        None,
    )
    if copula is None:
        return False
    first = max(0, copula - 4)
    subject = words[first:copula]
    # "that" is a subject only opening its clause ("That is correct") or after an opinion
    # verb ("I don't think that's correct"), not as a relative pronoun ("doses that are correct").
    named = {
        w
        for k, w in enumerate(subject, start=first)
        if w != "that" or k == 0 or words[k - 1] in _OPINION_VERBS
    }
    return bool(_SUBJECTS & named) and not _SPEAKERS & set(subject[-2:])


def _words(folded: str) -> list[Mention[str]]:
    """Verdict words: English hallucination words anywhere, English adjectives when said of
    the answer, the verdict words of other languages anywhere, abstentions that end their
    clause ("I'm not sure.", not "not sure why ...")."""
    found = [_mention(m.start(), m.end(), HALLUCINATED) for m in _PARTLY.finditer(folded)]
    for m in _ENGLISH.finditer(folded):
        if any(
            s <= m.start() < e
            for s, e in (x.span() for x in _PARTLY.finditer(folded, max(0, m.start() - 40), m.end()))
        ):
            continue
        if m.group(1):
            found.append(_mention(m.start(), m.end(), HALLUCINATED))
        elif _said_of_answer(folded, m.start(), m.end()):
            found.append(_mention(m.start(), m.end(), FACTUAL if m.group(2) else HALLUCINATED))
    for label, pattern in _FOREIGN.items():
        found += [_mention(m.start(), m.end(), label) for m in pattern.finditer(folded)]
    found += [
        Mention(m.start(), m.end(), NOT_SURE)
        for m in _ABSTAINING.finditer(folded)
        if not _COMPLEMENT.match(folded, m.end())
    ]
    return found


def _yes_no(folded: str, vocabulary: Vocabulary) -> list[Mention[str]]:
    """Yes or no said of hallucination ("Hallucination: no", '"is_hallucinated": true');
    under the HaluEval vocabulary, a yes (hallucinated) or no (factual) that opens a line
    or follows a judgement label."""
    found = []
    for m in _YES_NO.finditer(folded):
        about_hallucination = m.group(1).startswith(("hallucinat", "contain"))
        positive = m.group(2) in _POSITIVE
        found.append(
            _mention(m.start(2), m.end(2), HALLUCINATED if positive == about_hallucination else FACTUAL)
        )
    if vocabulary == "halueval":
        for m in _HALUEVAL_YES_NO.finditer(folded):
            found.append(_mention(m.start(1), m.end(1), HALLUCINATED if m.group(1) == "yes" else FACTUAL))
    return found


def _key_spans(folded: str) -> list[tuple[int, int]]:
    """Where the reply gives the prompt's key, a digit with its meaning for two or more
    verdicts ("0 = factual, 1 = hallucinated", "Return 0 if ... factual, 1 if ..."): a
    definition, so nothing in it is a verdict."""
    pairs = list(_KEY_PAIR.finditer(folded))
    meanings = {
        next(v for k, v in _KEY_WORDS.items() if (m.group(2) or m.group(3)).startswith(k)) for m in pairs
    }
    return [m.span() for m in pairs] if len(meanings) > 1 else []


def mentions(text: str, vocabulary: Vocabulary = "digits") -> list[Mention[str]]:
    """Every verdict the reply names, where it names it (see the section comment), except
    those inside the prompt's key echoed and inside a table's cells that are not its answer
    (`medhal.kit.tables.answer_cells`)."""
    folded = fold(text)
    if _WHOLE_ABSTENTION.fullmatch(folded):
        return [Mention(0, len(text), NOT_SURE)]
    found = _yes_no(folded, vocabulary) + _digits(text, folded) + _words(folded)  # a yes/no first: it
    # wins its place over the same word read as an adjective ("false")
    # The key of a yes/no label ("Hallucination: no") names the question, not a verdict.
    excluded = [m.span(1) for m in _YES_NO.finditer(folded)]
    excluded += _key_spans(folded) + answer_cells(folded, _PLACES.is_label)[1]
    return [m for m in found if not any(a <= m.start < b for a, b in excluded)]


def read_medhal(reply: str | None, not_sure_offered: bool, vocabulary: Vocabulary = "digits") -> str | None:
    """What a careful human reads (README, "How replies are read"): the text after the
    reasoning, footnote marks left out, its verdicts found (`mentions`) and the one the
    reply commits to kept (`medhal.kit.commitment.committed`: a denied, conditional,
    hedged or retracted verdict is no answer; a marked correction replaces what came
    before; two verdicts, none). Not-sure readings count only when the option was offered.
    `vocabulary` names the words the replies answer with besides the prompt's digits
    (`VOCABULARIES`)."""
    text = after_reasoning(reply)
    if text is None:
        return None
    text = without_footnotes(text)
    label = committed(text, mentions(text, vocabulary), abstentions=(NOT_SURE,))
    return None if label == NOT_SURE and not not_sure_offered else label


# ------------------------------------------------------------------------- conventions

READERS: dict[str, Reader] = {"medhal": read_medhal, "authors": read_authors, "strict": read_strict}
"""Every convention by name; the first is the default."""
CONVENTIONS = tuple(READERS)


def read_all(
    reply: str | None, not_sure_offered: bool, vocabulary: Vocabulary = "digits"
) -> dict[str, str | None]:
    """The reading under every convention; the answer vocabulary is the `medhal` reading's
    (the authors' rule and the exact format know only the prompt's digits)."""
    readings = {name: reader(reply, not_sure_offered) for name, reader in READERS.items()}
    if vocabulary != "digits":
        readings["medhal"] = read_medhal(reply, not_sure_offered, vocabulary)
    return readings
