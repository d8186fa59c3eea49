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
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from medhal.kit.replies import (
    ANSWER_LABELS,
    RETRACTED,
    TRANSLATED_ANSWER_LABELS,
    after_leading_reasoning,
    answer_text,
    ascii_digits,
    boxed_all,
    label_pattern,
    labelled,
    last_boxed,
    last_line,
    last_of,
    retraction,
    settled,
)

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

_LABEL = label_pattern(
    (*ANSWER_LABELS, *TRANSLATED_ANSWER_LABELS, "digit", "your judgement", "your judgment", "your answer")
)
_YES_NO_LABEL = re.compile(
    r"(?<![\w-])(hallucinat\w*|factual(?:ly correct)?|contains? hallucinations?)[ \t]*[:?=\-–][ \t]*"
    r"\W{0,3}(yes|no|true|false|none|absent|not (?:found|detected|present)|present|detected|found)\b",
    re.IGNORECASE,
)
_POSITIVE = {"yes", "true", "present", "detected", "found"}
_IS_DIGIT = re.compile(
    r"(?:\b(?:answer|verdict|judge?ment|label|output|classification)\s+(?:would\s+be|is)|\b(?:should|must)\s+be)"
    r"\s*:?\s*\W{0,3}([012])(?!\d|[.,]\d)",
    re.IGNORECASE,
)
_ANY_LABELLED_DIGIT = re.compile(r"[^\W\d_]\w*(?: \w+)?[ \t]*[:：]\s*\W{0,3}([012])\W{0,3}", re.IGNORECASE)
_LEADING_DIGIT = re.compile(r"[\s\W]{0,12}?(?<![-+−])([012])(?![\d]|[.,]\d)")
_AMBIGUOUS_DIGITS = re.compile(
    r"\s*(?:or|/|and|,|\||(?<=\s)(?:oder|ou|o|of|или|lub)(?=\s)|或者?|または|또는|)\s*\W{0,3}[012]\b",
    re.IGNORECASE,
)
"""A second digit joined to the first ("0 or 1", "0/1", "0 oder 1", "0 或 1"): no verdict."""
_BARE_DIGIT = re.compile(r"\W{0,6}(?<![-+−])([012])\W{0,6}")
_LIST_ITEM = re.compile(r"[.)]\s*\S")

_SENTENCE = re.compile(r"[^.!?;\n]+")
_CLAUSE = re.compile(r"[^,:;–—()]+")
_OPINION_VERBS = ("think", "believe", "consider")
_NOT_THINK = re.compile(rf"\bi\s+(?:do\s+not|don['’]?t|dont)\s+(?:{'|'.join(_OPINION_VERBS)})\b")
"""Negation raised to the opinion verb: "I don't think it is hallucinated" denies it."""
_WORD = re.compile(r"[a-z]+(?:['’][a-z]+)?|-")
_IS_CONTRACTED = {"it's": "it", "it’s": "it", "that's": "that", "that’s": "that", "this's": "this"}
"""Subjects with a contracted copula ("it's factual" is "it is factual")."""
_HALLUCINATION_TERM = re.compile(r"hallucinat\w*|fabricat\w*|nonfactual")
_COPULAS = {"is", "was", "are", "be", "been", "seems", "appears", "remains", "sounds", "looks", "being"}
_NEGATED_COPULAS = {"isn't", "wasn't", "aren't", "isnt", "wasnt", "isn’t", "wasn’t", "aren’t"}
_SUBJECTS = {
    "answer",
    "it",
    "this",
    "that",
    "response",
    "statement",
    "claim",
    "information",
    "reply",
    "option",
}
_SPEAKERS = {"i", "we", "you", "i'm", "i’m"}
_FACTUAL_ADJECTIVES = {"factual", "accurate", "correct", "true", "supported"}
_HALLUCINATED_ADJECTIVES = {"inaccurate", "incorrect", "false", "wrong", "untrue", "unsupported"}
_NEGATIONS = {"no", "not", "never", "without", "nothing", "none", "neither", "nor", "cannot", "non", "free"}
_HEDGES = {
    "might",
    "may",
    "could",
    "possibly",
    "perhaps",
    "probably",
    "likely",
    "whether",
    "if",
    "would",
    "unlikely",
}
_CONCLUSION = re.compile(
    r"\b(?:therefore|thus|hence|so|consequently|overall|in conclusion|in summary|to summari[sz]e|"
    r"final(?:ly)?|conclusion|in short|all in all)\b"
)
_DEFINITION = re.compile(
    r"[012]\s*['\"`)]?\s*(?:=|:|means|for|-|–)\s*['\"`(]?\s*(?:factual|hallucinat|not sure)|"
    r"(?:factual|hallucinat\w*|not sure)['\"`]?\s*(?:=|:)\s*['\"`]?[012]"
)
"""The prompt's own key, echoed ("0 = factual, 1 = hallucinated"): a definition, not a verdict."""
_ABSTENTION = re.compile(
    r"\bnot\s+(?:entirely\s+|completely\s+|really\s+|quite\s+|fully\s+)?(?:sure|certain)\b|\bunsure\b|"
    r"\buncertain\b|\bi\s+(?:do\s+not|don['’]?t|dont)\s+know\b|\bcannot\s+(?:be\s+)?determined?\b|"
    r"\bcan['’]?t\s+(?:tell|determine|be\s+determined|say)\b|\bunable\s+to\s+(?:determine|tell|say)\b|"
    r"\b(?:insufficient|not\s+enough)\s+(?:information|evidence)\b"
)
_CONDITIONAL = re.compile(r"\b(?:if|when|whenever|unless|whether)\b[^.!?;\n]{0,40}$|\byou\s+(?:are|feel)\s+$")
_WHOLE_ABSTENTION = re.compile(r"\W*(?:pass|skip)\W*", re.IGNORECASE)
_LABELS_READ = 50
"""Labelled answers read, from the last one back: the final answer is near the end, and a
reply of thousands of labels (a runaway generation) must not cost thousands of readings."""
_CLAUSE_NEGATIONS = {"none", "nothing", "neither"}
"""Words that, opening a clause, negate its predicate however far it stands ("None of the
claims in the answer are fabricated")."""
_NEGATION_WINDOW = 3
"""Words a negation may stand before the hallucination word it negates ("does not contain
any hallucinations")."""


@dataclass(frozen=True)
class _Mention:
    label: str
    hedged: bool
    concluding: bool


def _flip(label: str) -> str:
    return FACTUAL if label == HALLUCINATED else HALLUCINATED


def _negates(word: str) -> bool:
    return word in _NEGATIONS or word.endswith(("n't", "n’t"))


def _adjective_mention(words: list[str], i: int) -> tuple[str, bool] | None:
    """(label, negated) for an adjective verdict ("the answer is not correct"), or None
    when the adjective is not said of the answer: it needs a copula shortly before it with
    the answer (it, this, the response, ...) as its subject, and not the speaker ("I could
    be wrong"). A whole sentence of one or two words ("Factual.", "Non-factual") is a
    verdict by itself."""
    word = words[i]
    label = FACTUAL if word in _FACTUAL_ADJECTIVES else HALLUCINATED
    if word == "factual" and words[max(0, i - 2) : i] == ["non", "-"]:
        return HALLUCINATED, False
    if sum(w != "-" for w in words) <= 2:
        return label, any(_negates(w) for w in words[:i])
    copula = next(
        (j for j in range(i - 1, max(-1, i - 4), -1) if words[j] in _COPULAS or words[j] in _NEGATED_COPULAS),
        None,
    )
    if copula is None:
        return None
    subject = words[max(0, copula - 4) : copula]
    # "that" is a subject only at the start of its clause ("That is correct"), not as a
    # relative pronoun ("a process that is supported by evidence").
    named = {
        w
        for k, w in enumerate(subject, start=max(0, copula - 4))
        if w != "that" or k == 0 or words[k - 1] in _OPINION_VERBS  # "I don't think that's correct"
    }
    if not _SUBJECTS.intersection(named) or _SPEAKERS.intersection(subject[-2:]):
        return None
    negated = words[copula] in _NEGATED_COPULAS or any(_negates(w) for w in words[copula + 1 : i])
    return label, negated


def _mentions(text: str) -> list[_Mention]:
    """Verdict statements, sentence by sentence. A hallucination word counts wherever it
    stands, flipped by a negation up to three words before it ("no hallucination
    detected"); an adjective only when said of the answer (`_adjective_mention`). A hedge
    (might, probably, whether, ...) marks a statement as weaker than a definite one.
    Sentences that echo the prompt's key ("1 = hallucinated") say nothing."""
    found: list[_Mention] = []
    for sentence in _SENTENCE.finditer(text.lower()):
        if _DEFINITION.search(sentence.group()):
            continue
        concluding = _CONCLUSION.search(sentence.group()) is not None
        for clause in _CLAUSE.finditer(sentence.group()):
            raised = _NOT_THINK.search(clause.group()) is not None
            found += [
                _Mention(_flip(m.label) if raised else m.label, m.hedged, concluding)
                for m in _clause_mentions(_words(clause.group()))
            ]
    return found


def _words(clause: str) -> list[str]:
    """The words of a clause, a contracted copula spelt out ("it's" -> "it", "is")."""
    if "s" not in clause or ("'s" not in clause and "’s" not in clause):
        return _WORD.findall(clause)
    words: list[str] = []
    for word in _WORD.findall(clause):
        subject = _IS_CONTRACTED.get(word)
        words += (subject, "is") if subject else (word,)
    return words


def _clause_mentions(words: list[str]) -> list[_Mention]:
    """The verdict statements of one clause (negations and hedges do not cross a comma:
    "No, the answer is hallucinated" asserts hallucinated)."""
    found: list[_Mention] = []
    for i, word in enumerate(words):
        if _HALLUCINATION_TERM.fullmatch(word):
            window = words[max(0, i - _NEGATION_WINDOW - 1) : i]
            negated = any(
                _negates(w)
                for j, w in enumerate(window)
                if not (w == "not" and j + 1 < len(window) and window[j + 1] in ("sure", "certain"))
                and not (  # "I don't think ... hallucinated": raised to the clause (_NOT_THINK)
                    w in ("not", "don't", "don’t", "dont")
                    and j + 1 < len(window)
                    and window[j + 1] in _OPINION_VERBS
                )
            )
            negated = negated or words[0] in _CLAUSE_NEGATIONS  # "None of the claims are fabricated"
            label = _flip(HALLUCINATED) if negated else HALLUCINATED
        elif word in _FACTUAL_ADJECTIVES or word in _HALLUCINATED_ADJECTIVES:
            reading = _adjective_mention(words, i)
            if reading is None:
                continue
            label = _flip(reading[0]) if reading[1] else reading[0]
        else:
            continue
        hedged = bool(_HEDGES.intersection(words[max(0, i - 6) : i]))
        found.append(_Mention(label, hedged, False))
    return found


def _said(text: str) -> str:
    """The sentences of a (lower-cased) text that are not the prompt's key echoed ("2 - not
    sure" in a list of every digit's meaning is a definition, not an abstention)."""
    if not _DEFINITION.search(text):
        return text
    return ". ".join(m.group() for m in _SENTENCE.finditer(text) if not _DEFINITION.search(m.group()))


def _abstains(text: str) -> bool:
    """An abstention said by the model, not a conditional ("if you are unsure, ...")."""
    for match in _ABSTENTION.finditer(text):
        if not _CONDITIONAL.search(text[max(0, match.start() - 40) : match.start()]):
            return True
    return False


def _words_verdict(text: str) -> str | None:
    """Definite statements decide (conflicting ones only through a concluding sentence);
    then an abstention; then hedged statements."""
    mentions = _mentions(text)
    definite = [m for m in mentions if not m.hedged]
    if definite:
        labels = {m.label for m in definite}
        if len(labels) == 1:
            return labels.pop()
        concluding = [m for m in definite if m.concluding]
        return concluding[-1].label if concluding else None
    if _abstains(_said(text.lower())):
        return NOT_SURE
    labels = {m.label for m in mentions}
    return labels.pop() if len(labels) == 1 else None


def _is_numbered_list(text: str, match: re.Match[str]) -> bool:
    """`1. The question asks ...` followed by a `2.` item is reasoning, not a verdict."""
    if not _LIST_ITEM.match(text, match.end()):
        return False
    following = str(int(match.group(1)) + 1)
    return re.search(rf"(?:^|\s){following}[.)]\s+\S", text[match.end() :]) is not None


_KEY_PAIR = re.compile(
    r"\b([012])\s*['\"`)]?\s*(?:=|:|means|for|-|–|->|→)\s*['\"`(]?\s*(factual|hallucinat|not sure)|"
    r"(factual|hallucinat|not sure)\w*['\"`]?\s*(?:=|:|->|→)\s*['\"`]?([012])\b"
)
_KEY_WORDS = {"factual": FACTUAL, "hallucinat": HALLUCINATED, "not sure": NOT_SURE}


def _echoes_key(text: str) -> bool:
    """Whether the text gives the prompt's key, a digit with its meaning for two or more
    verdicts ("0 = factual, 1 = hallucinated", one per line or in a row): a definition, so
    none of its digits is a verdict."""
    meanings = set()
    for match in _KEY_PAIR.finditer(text.lower()):
        meanings.add(_KEY_WORDS[match.group(2) or match.group(3)])
        if len(meanings) > 1:
            return True
    return False


def _contradicted(verdict: str, rest: str) -> bool:
    """Whether a definite statement in `rest` gives another verdict than an unlabelled
    digit ("0\n\nThe answer is hallucinated."): the reply names two answers."""
    if verdict == NOT_SURE:
        return False
    return any(not m.hedged and m.label != verdict for m in _mentions(rest))


def _leading_verdict(text: str, marked: bool = False) -> str | bool | None:
    """The verdict a text opens with, None for an ambiguous "0 or 1" or, unless the digit
    is `marked` as the answer (a labelled or boxed value), a digit that the rest of the
    text contradicts; False when the text does not open with a verdict digit (a numbered
    list, the prompt's key echoed)."""
    match = _LEADING_DIGIT.match(text)
    if match is None or any(c.isalnum() for c in text[: match.start(1)]):
        return False
    if _AMBIGUOUS_DIGITS.match(text, match.end()):
        return None
    if _is_numbered_list(text, match) or _echoes_key(text):
        return False
    verdict = DIGITS[match.group(1)]
    return None if not marked and _contradicted(verdict, text[match.end() :]) else verdict


def _phrase_verdict(phrase: str, vocabulary: Vocabulary = "digits") -> str | None:
    """A short answer (a boxed or labelled value): a digit first, else words."""
    if _WHOLE_ABSTENTION.fullmatch(phrase):
        return NOT_SURE
    leading = _leading_verdict(phrase, marked=True)
    if leading is not False:
        return leading
    if vocabulary == "halueval":
        yes_no = _yes_no_verdict(phrase)
        if yes_no is not False:
            return yes_no
    return _words_verdict(phrase)


_ARROW_DIGIT = re.compile(r"^([^\n]{0,300}?)(?:=|->|→|⇒|=>|⟶|➔|➜)[ \t]*\W{0,3}([012])\W{0,4}$", re.MULTILINE)
"""A line ending in an arrow or an equals sign and a digit ("Hallucinated → 1")."""
_HEDGED_DIGIT = re.compile(
    r"\W*(?:(?:hmm+|well|ok(?:ay)?|so)\W+)?"
    r"(?:i(?:\s+would|['’]d)\s+(?:say|go\s+with|pick|choose|answer|lean\s+towards?)|"
    r"i\s+(?:think|believe|guess|suppose|reckon)|(?:i['’]?m\s+|i\s+am\s+)?leaning\s+towards?|"
    r"i\s+lean\s+towards?|probably|likely|most\s+likely|perhaps|maybe|"
    r"my\s+(?:best\s+)?guess\s+(?:is|would\s+be)|my\s+(?:answer|verdict|judge?ment)\s+would\s+be)"
    r"(?:\s+(?:that\s+)?(?:it|this)(?:\s+is|['’]s|\s+would\s+be))?"
    r"[\s:,]*\W{0,3}([012])\W{0,3}",
    re.IGNORECASE,
)
"""A short reply that hedges, then gives a digit as its last word ("I would say 1.",
"Probably 0.", "Leaning towards 1"): one answer, stated with doubt."""
_HEDGED_LENGTH = 120
_HALUEVAL_LABEL = label_pattern(
    (*ANSWER_LABELS, "your judgement#", "judgement#", "your judgment#", "judgment#", "your judgement")
)
"""HaluEval's `#Your Judgement#:` (its leading `#` is taken for a Markdown heading mark)."""
_YES_NO_WORD = re.compile(r"\W{0,3}(yes|no)\b", re.IGNORECASE)
_OTHER_YES_NO = re.compile(r"\s*(?:or|/|and|,)\s*\W{0,3}(?:yes|no)\b", re.IGNORECASE)


def _yes_no_verdict(text: str) -> str | bool | None:
    """HaluEval's vocabulary: a text that opens with Yes (hallucinated) or No (factual);
    None for "Yes or No" or a rest that says the other verdict ("No, the answer is
    hallucinated"); False when it does not open with either word."""
    match = _YES_NO_WORD.match(text)
    if match is None:
        return False
    if _OTHER_YES_NO.match(text, match.end()):
        return None
    verdict = HALLUCINATED if match.group(1).lower() == "yes" else FACTUAL
    return None if _contradicted(verdict, text[match.end() :]) else verdict


Answer = tuple[int, int, "str | None"]
"""(start, end, verdict) of an answer stated in the reply."""


def _arrow_answer(text: str) -> Answer | None:
    """The last line ending in an arrow or equals sign and a digit whose words say a
    verdict: that verdict when the digit agrees, None when it does not ("hallucinated →
    0" names two answers). Lines whose words say nothing, or echo the key, are skipped."""
    match = last_of(_ARROW_DIGIT.finditer(text))
    if match is None:
        return None
    words = _words_verdict(match.group(1))
    if words is None:
        return None
    digit = DIGITS[match.group(2)]
    return match.start(2), match.end(2), digit if digit == words else None


def _labelled_answers(text: str, vocabulary: Vocabulary) -> list[Answer]:
    """Every labelled answer in order: general labels (any language), "the answer is 1",
    yes/no labels about hallucination, a last line `<any label>: <digit>`, a verdict with
    an arrow and its digit, and, under the HaluEval vocabulary, `#Your Judgement#: Yes`.
    Each answer's span starts after its label, so the label (say "Final answer:") lies in
    the text before it, where a correction or final mark is looked for."""
    found: set[Answer] = set()
    for start, value in labelled(text, _LABEL, last=_LABELS_READ):
        verdict = _phrase_verdict(value, vocabulary)
        if verdict is not None:
            label = _LABEL.match(text, start)
            at = label.end() if label else start
            found.add((at, at + 1, verdict))
    if vocabulary == "halueval":
        for start, value in labelled(text, _HALUEVAL_LABEL, last=_LABELS_READ):
            yes_no = _yes_no_verdict(value)
            if yes_no is not False:
                label = _HALUEVAL_LABEL.match(text, start)
                at = label.end() if label else start
                found.add((at, at + 1, yes_no))
    for match in deque(_IS_DIGIT.finditer(text), maxlen=_LABELS_READ):
        found.add((match.start(1), match.end(1), DIGITS[match.group(1)]))
    for match in deque(_YES_NO_LABEL.finditer(text), maxlen=_LABELS_READ):
        about_hallucination = match.group(1).lower().startswith(("hallucinat", "contain"))
        positive = match.group(2).lower() in _POSITIVE
        label = HALLUCINATED if positive == about_hallucination else FACTUAL
        found.add((match.start(2), match.end(2), label))
    line = last_line(text)
    generic = _ANY_LABELLED_DIGIT.fullmatch(line)
    if generic is not None:
        at = len(text) - len(line) + generic.start(1)
        found.add((at, at + 1, DIGITS[generic.group(1)]))
    arrow = _arrow_answer(text)
    if arrow is not None:
        found.add(arrow)
    # One answer per place: a label and the last-line rule may both find "Answer: 1".
    by_place = {start: (start, end, verdict) for start, end, verdict in sorted(found, key=str)}
    return [by_place[start] for start in sorted(by_place)][-_LABELS_READ:]


def read_medhal(reply: str | None, not_sure_offered: bool, vocabulary: Vocabulary = "digits") -> str | None:
    """What a careful human reads (README, "How replies are read"), in this order: the
    `\\boxed{}` answers; the labelled answers; a reply that opens (or ends) with a verdict
    digit; a short hedged reply ending in a digit; verdict words with negation scope; an
    abstention. Several answers that differ count only through a marked correction; a
    last sentence taking the answer back leaves none. Not-sure readings count only when
    the option was offered. `vocabulary` names the words the replies answer with besides
    the prompt's digits (`VOCABULARIES`)."""
    text = answer_text(reply)
    if text is None:
        return None
    text = ascii_digits(text).strip()
    label = _unless_retracted(text, _read(text, vocabulary))
    return None if label == NOT_SURE and not not_sure_offered else label


def _unless_retracted(text: str, label: str | None) -> str | None:
    """None when the last sentence takes the answer back ("No, not 1.", "No, it isn't.")."""
    taken_back = retraction(text)
    if label is None or taken_back is None:
        return label
    if taken_back == RETRACTED:
        return None
    return None if _phrase_verdict(taken_back) == label else label


def _read(text: str, vocabulary: Vocabulary = "digits") -> str | None:
    if not text:
        return None
    if last_boxed(text) is not None:
        boxes = boxed_all(text)
        return settled(text, [(start, end, _phrase_verdict(box, vocabulary)) for start, end, box in boxes])
    answers = _labelled_answers(text, vocabulary)
    if answers:
        return settled(text, answers)
    if _WHOLE_ABSTENTION.fullmatch(text):
        return NOT_SURE
    leading = _leading_verdict(text)
    if leading is not False:
        return leading
    line = last_line(text)
    closing = _BARE_DIGIT.fullmatch(line)
    if closing is not None:
        verdict = DIGITS[closing.group(1)]
        return None if _contradicted(verdict, text[: len(text) - len(line)]) else verdict
    if len(text) <= _HEDGED_LENGTH:
        hedged = _HEDGED_DIGIT.fullmatch(text)
        if hedged is not None:
            return DIGITS[hedged.group(1)]
    if vocabulary == "halueval":
        yes_no = _yes_no_verdict(text)
        if yes_no is not False:
            return yes_no
    return _words_verdict(text)


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
