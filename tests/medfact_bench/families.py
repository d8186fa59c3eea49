"""MedFact-Bench's reply families (`tests/families.py`): each score on the -2..2 scale written
every way models write it (every minus sign, full-width digits, decimals that are integers,
the scale's own words, a gloss in words of any language), in every container, with every
commitment pattern and decoration, and the score a careful human reads.

A score off the scale or between two points (3, 1.5) is read as no score; a number and a
gloss that name different points ("1 (Strong Agreement)", "2 (contradicts)") name two. A
denied score reads as nothing (the other four points remain).
"""

from __future__ import annotations

from tests.families import NOTHING, Case, Container, Expression, Noise, compose, noises, patterns, structured

SCALE = {2: "Strong Agreement", 1: "Partial Agreement", 0: "Neutral / Unrelated", -1: "Partial Contradiction"}
SCALE[-2] = "Strong Contradiction"
GLOSS = {
    # language: (supports, neutral, contradicts)
    "en": ("supports", "neutral", "contradicts"),
    "es": ("apoya", "neutral", "contradice"),
    "fr": ("soutient", "neutre", "contredit"),
    "de": ("stützt", "neutral", "widerspricht"),
    "pt": ("apoia", "neutro", "contradiz"),
    "it": ("supporta", "neutrale", "contraddice"),
    "zh": ("支持", "中立", "矛盾"),
    "ja": ("裏付け", "中立", "矛盾"),
    "ko": ("지지", "중립", "모순"),
    "hi": ("समर्थन", "तटस्थ", "खंडन"),
    "ar": ("يدعم", "محايد", "يناقض"),
    "ru": ("поддерживает", "нейтрально", "противоречит"),
}
NEUTRAL = {language: words[1] for language, words in GLOSS.items()}


def _side(score: int) -> int:
    return 0 if score > 0 else 1 if score == 0 else 2


def expressions() -> list[Expression]:
    """Each score in every writing; numbers are not words (a denial in prose does not apply)."""
    found = []
    for score in (2, 1, 0, -1, -2):
        magnitude = str(abs(score))
        found += [
            Expression(str(score), score, "ascii", in_words=False),
            Expression(f"{score}.0", score, "integer decimal", in_words=False),
            Expression(f"{score} ({SCALE[score]})", score, "number with scale words", in_words=False),
            Expression(SCALE[score], score, "scale words"),
        ]
        if score > 0:
            found.append(Expression(f"+{score}", score, "plus sign", in_words=False))
        if score < 0:
            for name, sign in (
                ("minus sign", "\u2212"),
                ("en dash", "\u2013"),
                ("full-width minus", "\uff0d"),
            ):
                found.append(Expression(f"{sign}{magnitude}", score, name, in_words=False))
        full = ("\uff0d" if score < 0 else "") + chr(ord(magnitude) + 0xFEE0)
        found.append(Expression(full, score, "full-width digits", in_words=False))
        for language, words in GLOSS.items() if score in (2, 0, -2) else ():
            found.append(
                Expression(
                    f"{score} ({words[_side(score)]})", score, f"number with gloss {language}", in_words=False
                )
            )
    for language, word in NEUTRAL.items():
        found.append(Expression(word.capitalize(), 0, f"neutral word {language}", language=language))
    for text, form in (
        ("3", "off scale"),
        ("-3", "off scale"),
        ("1.5", "between points"),
        ("1½", "between points"),
    ):
        found.append(Expression(text, NOTHING, form, in_words=False))
    for text in ("1 (Strong Agreement)", "2 (contradicts)", "-1 (supports)", "0 (Strong Contradiction)"):
        found.append(Expression(text, NOTHING, "number and gloss disagree", in_words=False))
    return found


LABELS = (
    "Score",
    "Puntuación",
    "Note",
    "Punktzahl",
    "Pontuação",
    "Punteggio",
    "分数",
    "スコア",
    "점수",
    "स्कोर",
    "Оценка",
)


def _label(x: Expression) -> str:
    return LABELS[sum(map(ord, x.text)) % len(LABELS)]


def containers() -> list[Container]:
    """Where replies put a score: the prompt's own `<score>` tag (any case), labels in every
    language, a sentence, a box, other tags (nested too), Markdown tables, JSON and a
    function call, a heading, the bare score."""
    return [
        Container("score tag", lambda x: f"<score>{x.text}</score>"),
        Container("score tag, capitals", lambda x: f"<SCORE>{x.text}</SCORE>"),
        Container("bare", lambda x: x.text),
        Container("label", lambda x: f"{_label(x)}: {x.text}"),
        Container("final score label", lambda x: f"**Final score:** {x.text}"),
        Container("sentence", lambda x: f"The score is {x.text}.", prose=True),
        Container("rating tag", lambda x: f"<rating>{x.text}</rating>"),
        Container("final_score tag", lambda x: f"<final_score>\n{x.text}\n</final_score>", block=True),
        *structured("Score", "score", "submit_score", "The cohort matches the claim."),
    ]


MEDFACT_REASONING = (
    "<think>\nThe article was weighed against the claim. A first draft said <score>1</score>, then "
    "-2 was considered; the cohort differs slightly.\n</think>\n"
)


def medfact_noises() -> list[Noise]:
    """The shared decorations, with a reasoning block holding a draft score, and one more:
    the reasoning after the score (a score given before reasoning stands)."""
    shared = [n for n in noises(MEDFACT_REASONING) if n.name != "reasoning before"]
    return [
        *shared,
        Noise("reasoning before", lambda r: MEDFACT_REASONING + r),
        Noise(
            "reasoning after",
            lambda r: r + "\n<think>Checking once more: the cohort and the claim agree.</think>",
        ),
    ]


def corpus() -> list[Case]:
    return list(compose(expressions(), containers(), patterns(), medfact_noises()))
