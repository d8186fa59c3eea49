"""Med-HALT's reply families (`tests/families.py`): each answer to a multiple-choice item
written every way models write it, in every container, language and commitment pattern,
with the reading a careful human gives it; and the answers to the IR sets (a title, a
link, "Unknown" in each language).

The multiple-choice item is the README's example: options 0 Aortic stenosis, 1 Mitral
regurgitation, 2 Mitral stenosis, 3 None of the above, numbered as the prompt numbers them
(the reader is given them, as a task's `choices`). Human reading, by rule:

- An option's text reads as that option, whatever its case, spacing, Markdown marks or
  final period (Med-HALT's equality rule), with or without its index in brackets, after
  a letter ("C. Mitral stenosis": the prompt never used letters, so the letter counts
  for nothing beside the text), or as its index alone ("2": the prompt numbers options).
- A lone letter ("C") names no option: nothing, in every container and pattern.
- A denied option asserts nothing (there are four options): nothing.
- The commitment patterns of `tests/families.py` (conditional, retracted, restated,
  hedged, corrected, repeated) read as they compose.
"""

from __future__ import annotations

import json

from tests.families import NOTHING, Case, Container, Expression, Noise, compose, noises, patterns

OPTIONS = {
    "0": "Aortic stenosis",
    "1": "Mitral regurgitation",
    "2": "Mitral stenosis",
    "3": "None of the above",
}
LETTERS = "ABCD"


def expressions() -> list[Expression]:
    """Each option in every form (the reading: the option as the item writes it)."""
    found = []
    for index, option in OPTIONS.items():
        letter = LETTERS[int(index)]
        forms = {
            "text": option,
            "lower case, period": option.lower() + ".",
            "double spaces": option.replace(" ", "  "),
            "bold": f"**{option}**",
            "with index": f"{option} ({index})",
            "index first": f"({index}) {option}",
            "letter and text": f"{letter}. {option}",
            "option word and index": f"Option {index}: {option}",
        }
        found += [Expression(text, option, form) for form, text in forms.items()]
        found.append(Expression(index, option, "index", in_words=False))
    return found


def lone_letters() -> list[Expression]:
    """The letters the prompt never used, alone: no option."""
    return [Expression(text, NOTHING, "lone letter", in_words=False) for text in ("C", "(B)", "Option D")]


LABELS = {
    # language: (answer label, "correct answer" label)
    "en": ("Answer", "Correct answer"),
    "es": ("Respuesta", "Respuesta correcta"),
    "fr": ("Réponse", "Bonne réponse"),
    "de": ("Antwort", "Richtige Antwort"),
    "pt": ("Resposta", "Resposta correta"),
    "it": ("Risposta", "Risposta corretta"),
    "zh": ("答案", "正确答案"),
    "ja": ("答え", "正解"),
    "ko": ("답변", "정답"),
    "hi": ("उत्तर", "सही उत्तर"),
    "ar": ("الإجابة", "الإجابة الصحيحة"),
    "ru": ("Ответ", "Правильный ответ"),
}
COLONS = {"zh": "：", "ja": "：", "fr": " : "}


def _option_row(x: Expression, mark: str) -> str | None:
    if x.form != "text":
        return None
    rows = []
    for index, option in OPTIONS.items():
        chosen = option == x.reading
        if mark == "tick":
            rows.append(f"| {index} | {option} | {'✓' if chosen else ''} |")
        else:
            rows.append(f"| **{index}** | **{option}** |" if chosen else f"| {index} | {option} |")
    header = (
        "| Index | Option | Correct |\n|---|---|---|" if mark == "tick" else "| Index | Option |\n|---|---|"
    )
    return header + "\n" + "\n".join(rows)


def containers() -> list[Container]:
    """Where replies put an answer: the requested dict (JSON, a Python literal, fenced),
    function calls, tags, labels in each language, a sentence, a box, Markdown tables (a
    label row, an answer column, a ticked or bold option row), a heading, the bare text."""
    found = [
        Container("json", lambda x: json.dumps({"cop": x.text, "why_correct": "Opening snap."})),
        Container("python dict", lambda x: repr({"cop": x.text, "why_correct": "Opening snap."})),
        Container(
            "fenced json",
            lambda x: "```json\n" + json.dumps({"cop": x.text}, indent=2, ensure_ascii=False) + "\n```",
            block=True,
        ),
        Container(
            "function call", lambda x: json.dumps({"name": "submit_answer", "arguments": {"cop": x.text}})
        ),
        Container(
            "function call, arguments as a string",
            lambda x: json.dumps({"name": "submit_answer", "arguments": json.dumps({"cop": x.text})}),
        ),
        Container("answer tag", lambda x: f"<answer>{x.text}</answer>"),
        Container("nested tags", lambda x: f"<answer>\n<cop>{x.text}</cop>\n</answer>", block=True),
        Container("final answer label", lambda x: f"**Final answer:** {x.text}"),
        Container("sentence", lambda x: f"The correct answer is {x.text}.", prose=True),
        Container("boxed", lambda x: f"\\boxed{{{x.text}}}"),
        Container("table row", lambda x: f"| Field | Value |\n|---|---|\n| Answer | {x.text} |", block=True),
        Container(
            "table column",
            lambda x: f"| Answer | Reason |\n|---|---|\n| {x.text} | Opening snap and rumble. |",
            block=True,
        ),
        Container("ticked option row", lambda x: _option_row(x, "tick"), block=True),
        Container("bold option row", lambda x: _option_row(x, "bold"), block=True),
        Container("heading", lambda x: f"## Answer\n\n{x.text}", block=True),
        Container("bare", lambda x: x.text),
    ]
    for language, (answer, correct) in LABELS.items():
        colon = COLONS.get(language, ": ")
        found.append(Container(f"label {language}", lambda x, a=answer, c=colon: f"{a}{c}{x.text}"))
        found.append(
            Container(f"correct answer label {language}", lambda x, a=correct, c=colon: f"{a}{c}{x.text}")
        )
    return found


def _letter_cases(noise_list: list[Noise]) -> list[Case]:
    """A lone letter, in every container, plain: nothing."""
    cases = []
    for container in containers():
        for x in lone_letters():
            answer = container.wrap(x)
            if answer is None:
                continue
            cases += [
                Case(noise.apply(answer), NOTHING, x.form, container.name, "plain", noise.name)
                for noise in noise_list
            ]
    return cases


def corpus() -> list[Case]:
    """Every multiple-choice case (the item's options passed to the reader)."""
    noise_list = noises()
    cases = list(compose(expressions(), containers(), patterns(), noise_list))
    return cases + _letter_cases(noise_list)


# ---------------------------------------------------------------------------------- IR

TITLE = "Night-shift work and sleep quality in nurses: a cohort study"
OTHER_TITLE = "Walking and blood pressure in retirees"
UNKNOWN_WORDS = {
    "en": "Unknown",
    "es": "Desconocido",
    "fr": "Inconnu",
    "de": "Unbekannt",
    "pt": "Desconhecido",
    "it": "Sconosciuto",
    "zh": "未知",
    "ja": "不明",
    "ko": "알 수 없음",
    "hi": "अज्ञात",
    "ar": "غير معروف",
    "ru": "Неизвестно",
}
TITLE_LABELS = {
    "en": "Title",
    "es": "Título",
    "fr": "Titre",
    "de": "Titel",
    "pt": "Título",
    "it": "Titolo",
    "zh": "标题",
    "ja": "タイトル",
    "ko": "제목",
    "hi": "शीर्षक",
    "ar": "العنوان",
    "ru": "Название",
}


def ir_expressions() -> list[Expression]:
    """A paper title (two of them) and "Unknown" in each language: read as written (the
    scoring, not the reading, knows "Desconocido" means no such paper)."""
    found = [Expression(TITLE, TITLE, "title"), Expression(OTHER_TITLE, OTHER_TITLE, "title")]
    found += [Expression(word, word, "unknown", language=lang) for lang, word in UNKNOWN_WORDS.items()]
    return found


def ir_containers() -> list[Container]:
    """The requested dict (with an existence flag that agrees), a tag, a title label in each
    language, a table row."""

    def flag(x: Expression) -> str:
        return "No" if x.form == "unknown" else "Yes"

    found = [
        Container(
            "json",
            lambda x: json.dumps({"is_paper_exists": flag(x), "paper_title": x.text}, ensure_ascii=False),
        ),
        Container("python dict", lambda x: repr({"is_paper_exists": flag(x), "paper_title": x.text})),
        Container("paper_title tag", lambda x: f"<paper_title>{x.text}</paper_title>"),
        Container(
            "table row", lambda x: f"| Key | Value |\n|---|---|\n| paper_title | {x.text} |", block=True
        ),
    ]
    for language, label in TITLE_LABELS.items():
        colon = COLONS.get(language, ": ")
        found.append(Container(f"title label {language}", lambda x, a=label, c=colon: f"{a}{c}{x.text}"))
    return found


def ir_corpus() -> list[Case]:
    return list(compose(ir_expressions(), ir_containers(), patterns(), noises()))
