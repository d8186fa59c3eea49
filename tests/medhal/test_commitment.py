"""The commitment layer (`medhal.kit.commitment`) and the vocabulary it shares
(`medhal.kit.vocabulary`), on abstract answers: the words `factual` / `hallucinated` (each
the other's opposite, as two answers in words are), the digits `0` / `1` (no opposite: "not
1" leaves 0 and 2), and `unsure` (an abstention).

WHY: every benchmark's `medhal` reading decides with `committed` which of the answers a
reply names it stands by; the expected values below are how a careful human reads each
sentence, written before the code ran. Each commitment pattern is checked in several
languages, since a cue the layer does not know in one language is a reward paid for a
reply it misread."""

from __future__ import annotations

import re

import pytest

from medhal.kit.commitment import Mention, committed, stances
from medhal.kit.vocabulary import LANGUAGES, TERMS, find_terms, normalize, terms, without_footnotes

F, H, U = "factual", "hallucinated", "unsure"
WORDS = {
    "factual": (F, H),
    "事实": (F, H),
    "사실": (F, H),
    "faktisch": (F, H),
    "factuelle": (F, H),
    "factual answer": (F, H),
    "hallucinated": (H, F),
    "hallucination": (H, F),
    "幻觉": (H, F),
    "halluziniert": (H, F),
    "alucinada": (H, F),
    "галлюцинация": (H, F),
    "मतिभ्रम": (H, F),
    "幻覚": (H, F),
    "unsure": (U, None),
}
MENTION = re.compile(
    "|".join(sorted(map(re.escape, WORDS), key=len, reverse=True))
    + r"|(?<![A-Za-z0-9.-])[01](?![A-Za-z0-9]|\.\d)"
)


def mentions(text: str) -> list[Mention[str]]:
    """Every word of WORDS and every lone digit, as a benchmark would find them."""
    found = []
    for m in MENTION.finditer(text):
        value, opposite = WORDS.get(m.group(), (m.group(), None))
        found.append(Mention(m.start(), m.end(), value, opposite))
    return found


def read(text: str) -> str | None:
    return committed(text, mentions(text), abstentions={U})


CASES = [
    # plain
    ("1", "1"),
    ("The answer is hallucinated.", H),
    # negation, in words and raised to the speaker
    ("The answer is not hallucinated.", F),
    ("I would not say it is factual.", H),
    ("It is anything but factual.", H),
    ("I don't think it is hallucinated.", F),
    ("This is not a hallucination.", F),
    ("non-hallucinated", F),
    ("The answer does not contain any hallucination.", F),
    ("Nothing in the answer is hallucinated.", F),
    ("The answer is free of hallucination.", F),
    ("It is factual, not hallucinated.", F),
    ("Neither factual nor hallucinated.", None),
    ("not 1", None),
    ("0 (not 1)", "0"),
    ("No, the answer is hallucinated.", H),
    ("I'm not sure hallucination is the word, but the trial does not exist.", None),  # doubted
    ("I'm not sure why this hallucination happened.", H),  # taken as given
    ("I'm not sure it is hallucinated.", None),
    ("The answer is not necessarily hallucinated.", None),
    ("There is no doubt the answer is hallucinated.", H),
    ("答案不是幻觉。", F),
    ("사실이 아닙니다.", H),
    ("Die Antwort ist nicht halluziniert.", F),
    ("Ich glaube nicht, dass sie halluziniert ist.", F),
    ("La respuesta no es alucinada.", F),
    ("Ce n'est pas factuelle.", H),
    ("Это не галлюцинация.", F),
    ("यह मतिभ्रम नहीं है।", F),
    ("幻覚ではありません。", F),
    # conditionals
    ("If the trial exists, 0; if not, 1.", None),
    ("If the cited trial exists, the answer is factual.", None),
    ("1 if the trial is fabricated, otherwise 0.", None),
    ("If I had to choose, 1.", "1"),
    ("If the trial exists, 0; if not, 1. If I had to choose, 1.", "1"),
    ("The answer is factual, even if the wording is odd.", F),
    ("If I were unsure I would say so, but the answer is hallucinated.", H),
    ("如果试验存在,事实;否则幻觉。", None),
    ("Wenn die Studie existiert, faktisch; sonst halluziniert.", None),
    # retractions and restatements
    ("1. No, that's wrong.", None),
    ("0. No, that's wrong.", None),
    ("The answer is hallucinated. Scratch that.", None),
    ("1\nI take it back.", None),
    ("1. No, that's wrong. 0.", "0"),
    ("1. Wait, no. 1.", "1"),
    ("0. Scratch that, 1.", "1"),
    ("1\nNo, that is wrong: the answer is not 1.", None),
    ("Hallucinated. No, it isn't.", None),
    ("1。不对。0。", "0"),
    ("1. Nein, das ist falsch.", None),
    ("No, that's wrong: the answer is hallucinated.", H),
    # hedges
    ("1 but could be 0", None),
    ("0 or possibly 1", None),
    ("1, though 0 is possible.", None),
    ("0 or 1", None),
    ("The answer might be hallucinated.", H),
    ("Probably 1.", "1"),
    ("1, vielleicht 0.", None),
    ("1,也可能是0。", None),
    # marked corrections
    ("0\n\nActually 1", "1"),
    ("0 ... Actually 1", "1"),
    ("Answer: 0\nWait, actually, Answer: 1", "1"),
    ("It may be hallucinated. On balance, the answer is factual.", F),
    ("The answer is factual. However, the answer is hallucinated.", None),
    ("The article actually says 1, and I say 0.", None),  # "actually" inside a clause is emphasis
    ("0. En realidad, 1.", "1"),
    ("0。实际上,1。", "1"),
    # abstentions
    ("I'm unsure, but it might be hallucinated.", U),
    ("Unsure, but the answer is hallucinated.", H),
    ("I would say 1, but I am unsure.", U),
    # questions
    ("Is it factual? No. It is hallucinated.", H),
    ("Is the answer hallucinated?", None),
]


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[0][:50] for c in CASES])
def test_what_a_reply_commits_to(text: str, expected: str | None) -> None:
    assert read(text) == expected


def test_positions_are_those_of_the_original_text() -> None:
    """Full-width and curly forms change no position: mentions found in the original text
    are judged where they stand."""
    text = "答案：１。不对，０。"
    assert normalize(text) == "答案:1.不对,0."
    found = [Mention(3, 4, "1"), Mention(8, 9, "0")]
    assert committed(text, found) == "0"
    assert stances("I would not say 1 is right", [Mention(16, 17, "1")]) == ["negated"]


def test_no_mentions_no_answer() -> None:
    assert committed("anything", []) is None
    assert committed("", []) is None


def test_duplicate_mentions_count_once() -> None:
    text = "1"
    assert committed(text, [Mention(0, 1, "1"), Mention(0, 1, "1")]) == "1"


def test_an_unreadable_mention_is_an_answer_that_reads_as_none() -> None:
    """A benchmark may state an answer it cannot read (`<score>3</score>`): it is asserted
    and leaves no reading, whatever else agrees."""
    assert committed("x y", [Mention(0, 1, None), Mention(2, 3, 2)]) is None


def test_a_runaway_generation_is_no_answer() -> None:
    """A reply naming answers more than MENTIONS_READ times repeats itself: no commitment."""
    from medhal.kit.commitment import MENTIONS_READ

    assert read("The answer is hallucinated. " * MENTIONS_READ) == H
    assert read("The answer is hallucinated. " * (MENTIONS_READ + 1)) is None


def test_the_cost_is_linear_in_the_reply() -> None:
    """Mentions far apart in a long reply: cues are found only near each mention (and,
    for retractions and revisions, between them), each mention looked up by bisection
    (bench/adversarial_replies.py times it)."""
    filler = "The cited cohort enrolled adults, but not children. " * 400
    text = (filler + "The answer is hallucinated. ") * 30
    assert read(text) == H
    assert read(text + "No, that's wrong.") is None


# ------------------------------------------------------------------------------ vocabulary


def test_every_concept_has_every_language() -> None:
    for concept, by_language in TERMS.items():
        assert set(by_language) == set(LANGUAGES), concept
        for words in by_language.values():
            assert words and all(w == w.lower().strip() for w in words), concept


@pytest.mark.parametrize(
    ("text", "concepts", "found"),
    [
        ("Réponse : hallucinée", ("answer", "hallucinated"), ["answer", "hallucinated"]),
        ("答案：幻觉", ("answer", "hallucinated"), ["answer", "hallucinated"]),
        ("환각이 아닙니다", ("hallucinated",), ["hallucinated"]),
        ("والهلوسة", ("hallucinated",), ["hallucinated"]),
        ("non-hallucinated", ("hallucinated",), ["hallucinated"]),
        ("I don’t know", ("not_sure",), ["not_sure"]),
        ("Final answer: x", ("answer",), ["answer"]),
        ("answering", ("answer",), []),  # a word boundary, where the script has them
        ("Ответ: да", ("answer", "yes"), ["answer", "yes"]),
    ],
)
def test_find_terms(text: str, concepts: tuple[str, ...], found: list[str]) -> None:
    assert [concept for _, _, concept in find_terms(text, concepts)] == found


def test_the_longest_word_wins_at_a_place() -> None:
    [(start, end, _)] = find_terms("Final answer: 1", ("answer",))
    assert (start, end) == (0, 12)
    assert terms("answer")[0] == max(terms("answer"), key=len)
    with pytest.raises(KeyError):
        terms("no such concept")


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("答案：１（幻觉）", "答案:1(幻觉)"),
        ("−1 –1 －１ ‐1 ﹣1", "-1 -1 -1 -1 -1"),
        ("٢ ۲ ২", "2 2 2"),
        ("“yes” ‘no’", "\"yes\" 'no'"),
        ("Ответ：1。", "Ответ:1."),
        ("उत्तर: 1।", "उत्तर: 1."),
        ("الإجابة، ١", "الإجابة, 1"),
        ("plain ascii", "plain ascii"),
    ],
)
def test_normalize_is_one_for_one(text: str, normal: str) -> None:
    assert normalize(text) == normal
    assert len(normalize(text)) == len(text)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("The answer is factual.[1]", "The answer is factual."),
        ("Score: 2¹", "Score: 2"),
        ("Score: 2[^3]", "Score: 2"),
        ("Score: [2]", "Score: [2]"),  # a bracketed value after a space is a value
        ('{"score": [2]}', '{"score": [2]}'),
    ],
)
def test_footnotes_are_not_answers(text: str, kept: str) -> None:
    blanked = without_footnotes(text)
    assert len(blanked) == len(text)
    assert blanked.rstrip() == kept
