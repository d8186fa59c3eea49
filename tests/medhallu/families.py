"""MedHallu's reply families (`tests/families.py`): each verdict written every way models
write it, in every container, language and commitment pattern, with the reading a careful
human gives it.

The verdicts are the prompt's digits (0 factual, 1 hallucinated, 2 not sure) and the words
for them in each language of `medhal.kit.vocabulary.LANGUAGES`. "not sure" reads only when
it was offered (otherwise a careful human still reads an abstention, which is no verdict:
INVALID). A denied verdict word reads as the other verdict (the answer is factual or it is
hallucinated); a denied digit, or a denied "not sure", reads as nothing.
"""

from __future__ import annotations

import json
from typing import Any

from medhallu.replies import FACTUAL, HALLUCINATED, NOT_SURE
from tests.families import NOTHING, Case, Container, Expression, compose, noises, patterns

OPPOSITE = {FACTUAL: HALLUCINATED, HALLUCINATED: FACTUAL, NOT_SURE: NOTHING}
DIGIT = {FACTUAL: "0", HALLUCINATED: "1", NOT_SURE: "2"}
WORDS = {
    # language: (factual, hallucinated, not sure)
    "en": ("factual", "hallucinated", "not sure"),
    "es": ("fáctica", "alucinada", "no estoy seguro"),
    "fr": ("factuelle", "hallucinée", "pas sûr"),
    "de": ("faktisch", "halluziniert", "nicht sicher"),
    "pt": ("factual", "alucinada", "não tenho certeza"),
    "it": ("fattuale", "allucinata", "non sono sicuro"),
    "zh": ("事实", "幻觉", "不确定"),
    "ja": ("事実", "幻覚", "わからない"),
    "ko": ("사실", "환각", "확실하지 않음"),
    "hi": ("तथ्यात्मक", "मतिभ्रम", "निश्चित नहीं"),
    "ar": ("واقعي", "هلوسة", "غير متأكد"),
    "ru": ("фактический", "галлюцинация", "не уверен"),
}
LABELS = (FACTUAL, HALLUCINATED, NOT_SURE)


def expressions() -> list[Expression]:
    """Each verdict as a digit (ASCII, full-width, with its word), and as words in each
    language (lower case, capitalised, and with its digit)."""
    found = []
    for label in LABELS:
        digit = DIGIT[label]
        found += [
            Expression(digit, label, "digit", in_words=False, abstains=label == NOT_SURE),
            Expression(
                chr(ord(digit) + 0xFEE0),
                label,
                "full-width digit",
                in_words=False,
                abstains=label == NOT_SURE,
            ),
            Expression(
                f"{digit} ({WORDS['en'][LABELS.index(label)]})",
                label,
                "digit with word",
                in_words=False,
                abstains=label == NOT_SURE,
            ),
        ]
        for language, words in WORDS.items():
            word = words[LABELS.index(label)]
            found.append(
                Expression(
                    word, label, f"word {language}", OPPOSITE[label], language, abstains=label == NOT_SURE
                )
            )
        found.append(
            Expression(
                WORDS["en"][LABELS.index(label)].capitalize(),
                label,
                "word capitalised",
                OPPOSITE[label],
                abstains=label == NOT_SURE,
            )
        )
    return found


LABEL_WORDS = {
    "en": "Answer",
    "es": "Respuesta",
    "fr": "Réponse",
    "de": "Antwort",
    "pt": "Resposta",
    "it": "Risposta",
    "zh": "答案",
    "ja": "回答",
    "ko": "답변",
    "hi": "उत्तर",
    "ar": "الإجابة",
    "ru": "Ответ",
}


def _json_value(x: Expression) -> str:
    return x.text if x.text.isascii() and x.text.isdigit() else json.dumps(x.text, ensure_ascii=False)


def _boolean(x: Expression) -> str | None:
    if x.reading not in (FACTUAL, HALLUCINATED) or x.form not in ("digit", "word en"):
        return None
    return json.dumps({"is_hallucinated": x.reading == HALLUCINATED})


def _ticked(x: Expression) -> str | None:
    if x.form != "digit":
        return None
    rows = "\n".join(
        f"| {DIGIT[label]} | {WORDS['en'][n]} | {'✓' if label == x.reading else ''} |"
        for n, label in enumerate(LABELS)
    )
    return f"| Option | Meaning | Chosen |\n|---|---|---|\n{rows}"


def containers() -> list[Container]:
    """Where replies put a verdict: bare, labelled (in the expression's language), a
    sentence, boxed, tags of several names (nested too), Markdown tables (a label/value
    row, a verdict column, a ticked option row), JSON (a verdict key, a boolean key naming
    the verdict, a function call), a heading."""
    return [
        Container("bare", lambda x: x.text),
        Container("label", lambda x: f"{LABEL_WORDS.get(x.language, 'Answer')}: {x.text}"),
        Container("final answer label", lambda x: f"**Final answer:** {x.text}"),
        Container("sentence", lambda x: f"The answer is {x.text}.", prose=True),
        Container("boxed", lambda x: f"\\boxed{{{x.text}}}"),
        Container("answer tag", lambda x: f"<answer>{x.text}</answer>"),
        Container("judgement tag", lambda x: f"<judgement>\n{x.text}\n</judgement>", block=True),
        Container("verdict tag", lambda x: f"<verdict>{x.text}</verdict>"),
        Container("nested tags", lambda x: f"<response><final_answer>{x.text}</final_answer></response>"),
        Container("table row", lambda x: f"| Field | Value |\n|---|---|\n| Verdict | {x.text} |", block=True),
        Container(
            "table column",
            lambda x: f"| Verdict | Reason |\n|---|---|\n| {x.text} | Checked against the abstract. |",
            block=True,
        ),
        Container("ticked option row", _ticked, block=True),
        Container("json", lambda x: f'{{"verdict": {_json_value(x)}}}'),
        Container("json boolean", _boolean),
        Container(
            "function call",
            lambda x: json.dumps(
                {"name": "submit_verdict", "arguments": {"judgement": json.loads(_json_value(x))}},
                ensure_ascii=False,
            ),
        ),
        Container("heading", lambda x: f"## Verdict\n\n{x.text}", block=True),
    ]


def with_offer(case: Case, offered: bool) -> Case:
    """The case under a run that offers "not sure" or not: unoffered, an abstention reads
    as nothing (the reading a careful human gives is no verdict of the two)."""
    expected: Any = case.expected
    if expected == NOT_SURE and not offered:
        expected = NOTHING
    return Case(
        case.reply,
        expected,
        case.expression,
        case.container,
        case.pattern,
        case.noise,
        {"not_sure_offered": offered},
    )


def corpus() -> list[Case]:
    """Every MedHallu case, with "not sure" offered, and again (every third) without."""
    cases = list(compose(expressions(), containers(), patterns(), noises()))
    return [with_offer(c, True) for c in cases] + [with_offer(c, False) for c in cases[::3]]
