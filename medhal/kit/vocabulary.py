"""Words and marks that mean the same in every language a model answers in.

A model asked in English answers in the language of its system prompt or fine-tuning
often enough that a reader knowing only English pays rewards for what it cannot read:
`Réponse : hallucinée` is a verdict, and `不是幻觉` denies one. This module holds what
every benchmark's reader needs to see that, naming no benchmark:

- `TERMS`: words by concept (answer labels, verdict words, score labels, "I do not know",
  title and link, yes and no, ...) in each of `LANGUAGES`; `terms(*concepts)` lists them.
- `find_terms(text, concepts)`: where those words stand in a text, at word boundaries
  (scripts written without spaces match anywhere).
- `normalize(text)`: full-width punctuation and digits, every minus sign, CJK and Arabic
  punctuation and curly quotes as their ASCII forms, one character for one, so positions
  found in the normalized text are positions in the original.
- `without_footnotes(text)`: superscripts and footnote marks (`factual.[1]`, `2¹`) blanked,
  one character for one: a footnote number is not an answer.

What a word *commits* to (negated, hedged, retracted ...) is `medhal.kit.commitment`'s.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Iterable
from functools import cache

LANGUAGES = ("en", "es", "fr", "de", "pt", "it", "zh", "ja", "ko", "hi", "ar", "ru")
"""The languages models answer in that the terms cover (ISO 639-1)."""

TERMS: dict[str, dict[str, tuple[str, ...]]] = {
    "answer": {
        "en": ("answer", "final answer", "correct answer", "my answer", "your answer", "response"),
        "es": ("respuesta", "respuesta final", "respuesta correcta"),
        "fr": ("réponse", "réponse finale", "bonne réponse", "réponse correcte"),
        "de": ("antwort", "endgültige antwort", "richtige antwort", "lösung"),
        "pt": ("resposta", "resposta final", "resposta correta"),
        "it": ("risposta", "risposta finale", "risposta corretta"),
        "zh": ("答案", "最终答案", "正确答案", "回答", "答复"),
        "ja": ("答え", "回答", "最終回答", "正解", "解答"),
        "ko": ("답", "답변", "정답", "최종 답변", "최종 답"),
        "hi": ("उत्तर", "अंतिम उत्तर", "सही उत्तर", "जवाब"),
        "ar": ("الإجابة", "الإجابة النهائية", "الإجابة الصحيحة", "الجواب"),
        "ru": ("ответ", "окончательный ответ", "правильный ответ", "итоговый ответ"),
    },
    "verdict": {
        "en": (
            "verdict",
            "final verdict",
            "judgement",
            "judgment",
            "your judgement",
            "your judgment",
            "classification",
            "label",
            "prediction",
            "result",
            "output",
            "conclusion",
            "decision",
            "assessment",
        ),
        "es": ("veredicto", "juicio", "clasificación", "etiqueta", "resultado", "conclusión"),
        "fr": ("verdict", "jugement", "classification", "étiquette", "résultat", "conclusion"),
        "de": ("urteil", "einstufung", "klassifikation", "ergebnis", "fazit"),
        "pt": ("veredito", "veredicto", "julgamento", "classificação", "rótulo", "resultado", "conclusão"),
        "it": ("verdetto", "giudizio", "classificazione", "etichetta", "risultato"),
        "zh": ("判断", "判断结果", "最终判断", "结论", "判定", "分类", "标签", "结果"),
        "ja": ("判定", "判断", "結論", "分類", "ラベル", "結果"),
        "ko": ("판단", "판정", "결론", "분류", "레이블", "결과"),
        "hi": ("निर्णय", "फैसला", "परिणाम", "वर्गीकरण", "लेबल"),
        "ar": ("الحكم", "القرار", "التصنيف", "النتيجة", "الاستنتاج"),
        "ru": ("вердикт", "суждение", "решение", "классификация", "метка", "результат", "вывод"),
    },
    "score": {
        "en": ("score", "final score", "rating", "grade"),
        "es": ("puntuación", "puntuación final", "puntaje", "calificación"),
        "fr": ("score", "score final", "note", "note finale"),
        "de": ("punktzahl", "wertung", "bewertung", "score"),
        "pt": ("pontuação", "pontuação final", "nota"),
        "it": ("punteggio", "punteggio finale", "valutazione", "voto"),
        "zh": ("分数", "评分", "得分", "打分", "最终得分", "最终评分"),
        "ja": ("スコア", "評価", "点数", "最終スコア"),
        "ko": ("점수", "평가", "최종 점수"),
        "hi": ("स्कोर", "अंक", "रेटिंग"),
        "ar": ("الدرجة", "التقييم", "النقاط"),
        "ru": ("оценка", "балл", "баллы", "рейтинг", "итоговая оценка"),
    },
    "factual": {
        "en": ("factual", "factually correct"),
        "es": ("factual", "fáctica", "fáctico", "verídica", "verídico"),
        "fr": ("factuelle", "factuel", "factuelles"),
        "de": ("faktisch", "faktisch korrekt", "faktentreu"),
        "pt": ("factual", "factualmente correta", "verídica"),
        "it": ("fattuale", "fattuali"),
        "zh": ("事实性", "符合事实", "事实"),
        "ja": ("事実に基づく", "事実"),
        "ko": ("사실적", "사실"),
        "hi": ("तथ्यात्मक", "तथ्यपरक"),
        "ar": ("واقعية", "واقعي"),
        "ru": ("фактическая", "фактический", "фактически верный", "достоверный", "достоверная"),
    },
    "hallucinated": {
        "en": ("hallucinated", "hallucination", "hallucinations", "fabricated"),
        "es": ("alucinada", "alucinado", "alucinación", "alucinaciones"),
        "fr": ("hallucinée", "halluciné", "hallucination", "hallucinations"),
        "de": ("halluziniert", "halluzinierte", "halluzination", "halluzinationen"),
        "pt": ("alucinada", "alucinado", "alucinação", "alucinações"),
        "it": ("allucinata", "allucinato", "allucinazione", "allucinazioni"),
        "zh": ("幻觉", "虚构", "编造"),
        "ja": ("ハルシネーション", "幻覚", "捏造"),
        "ko": ("할루시네이션", "환각"),
        "hi": ("मतिभ्रम", "हेलुसिनेशन"),
        "ar": ("الهلوسة", "هلوسة", "مهلوسة", "مهلوس"),
        "ru": ("галлюцинация", "галлюцинации", "галлюцинированный", "галлюцинированная"),
    },
    "not_sure": {
        "en": ("not sure", "unsure", "uncertain", "i don't know", "i do not know", "cannot be determined"),
        "es": ("no estoy seguro", "no estoy segura", "no lo sé", "incierto"),
        "fr": ("pas sûr", "pas sûre", "je ne sais pas", "incertain", "incertaine"),
        "de": ("nicht sicher", "unsicher", "ich weiß es nicht", "weiß nicht"),
        "pt": ("não tenho certeza", "não sei", "incerto", "incerta"),
        "it": ("non sono sicuro", "non sono sicura", "non lo so", "incerto"),
        "zh": ("不确定", "不知道", "无法确定"),
        "ja": ("わからない", "分からない", "わかりません", "分かりません", "確信がない"),
        "ko": ("확실하지 않", "모르겠", "불확실"),
        "hi": ("निश्चित नहीं", "पता नहीं", "अनिश्चित"),
        "ar": ("غير متأكدة", "غير متأكد", "لا أعرف", "لا أعلم"),
        "ru": ("не уверена", "не уверен", "не знаю"),
    },
    "support": {
        "en": ("supports", "support", "supported", "agrees", "agreement"),
        "es": ("apoya", "respalda", "apoyo", "respaldo"),
        "fr": ("soutient", "confirme", "soutien"),
        "de": ("stützt", "unterstützt", "bestätigt", "unterstützung"),
        "pt": ("apoia", "sustenta", "apoio"),
        "it": ("supporta", "sostiene", "conferma", "supporto"),
        "zh": ("支持",),
        "ja": ("支持", "裏付け"),
        "ko": ("지지", "뒷받침"),
        "hi": ("समर्थन",),
        "ar": ("يدعم", "دعم"),
        "ru": ("поддерживает", "подтверждает", "поддержка"),
    },
    "contradict": {
        "en": ("contradicts", "contradict", "contradicted", "contradiction", "refutes"),
        "es": ("contradice", "contradicción", "refuta"),
        "fr": ("contredit", "contradiction", "réfute"),
        "de": ("widerspricht", "widerspruch", "widerlegt"),
        "pt": ("contradiz", "contradição", "refuta"),
        "it": ("contraddice", "contraddizione", "confuta"),
        "zh": ("矛盾", "反驳", "驳斥"),
        "ja": ("矛盾", "反論", "否定"),
        "ko": ("모순", "반박"),
        "hi": ("खंडन", "विरोधाभास"),
        "ar": ("يناقض", "تناقض"),
        "ru": ("противоречит", "опровергает", "противоречие"),
    },
    "neutral": {
        "en": ("neutral", "unrelated", "not enough information", "insufficient evidence"),
        "es": ("neutral", "no relacionado", "información insuficiente"),
        "fr": ("neutre", "sans rapport", "informations insuffisantes"),
        "de": ("neutral", "unabhängig", "nicht genügend informationen"),
        "pt": ("neutro", "neutra", "não relacionado", "informação insuficiente"),
        "it": ("neutrale", "non correlato", "informazioni insufficienti"),
        "zh": ("中立", "无关", "信息不足"),
        "ja": ("中立", "無関係", "情報不足"),
        "ko": ("중립", "무관", "정보 부족"),
        "hi": ("तटस्थ", "असंबंधित"),
        "ar": ("محايد", "غير ذي صلة"),
        "ru": ("нейтрально", "нейтральный", "не связано", "недостаточно информации"),
    },
    "yes": {
        "en": ("yes", "true"),
        "es": ("sí", "verdadero"),
        "fr": ("oui", "vrai"),
        "de": ("ja", "wahr"),
        "pt": ("sim", "verdadeiro"),
        "it": ("sì", "vero"),
        "zh": ("是",),
        "ja": ("はい",),
        "ko": ("예", "네"),
        "hi": ("हाँ", "हां"),
        "ar": ("نعم",),
        "ru": ("да",),
    },
    "no": {
        "en": ("no", "false"),
        "es": ("no", "falso"),
        "fr": ("non", "faux"),
        "de": ("nein", "falsch"),
        "pt": ("não", "falso"),
        "it": ("no", "falso"),
        "zh": ("否",),
        "ja": ("いいえ",),
        "ko": ("아니요", "아니오"),
        "hi": ("नहीं",),
        "ar": ("لا",),
        "ru": ("нет",),
    },
    "unknown": {
        "en": ("i do not know", "i don't know", "unknown"),
        "es": ("no lo sé", "no sé", "desconocido", "desconocida"),
        "fr": ("je ne sais pas", "inconnu", "inconnue"),
        "de": ("ich weiß es nicht", "weiß nicht", "unbekannt"),
        "pt": ("não sei", "desconhecido", "desconhecida"),
        "it": ("non lo so", "sconosciuto", "sconosciuta"),
        "zh": ("我不知道", "不知道", "未知"),
        "ja": ("わかりません", "分かりません", "知りません", "不明"),
        "ko": ("모르겠습니다", "모름", "알 수 없음"),
        "hi": ("मुझे नहीं पता", "पता नहीं", "अज्ञात"),
        "ar": ("لا أعرف", "لا أعلم", "غير معروف"),
        "ru": ("я не знаю", "не знаю", "неизвестно"),
    },
    "title": {
        "en": ("title", "paper title"),
        "es": ("título",),
        "fr": ("titre",),
        "de": ("titel",),
        "pt": ("título",),
        "it": ("titolo",),
        "zh": ("论文标题", "标题", "题目"),
        "ja": ("タイトル", "題名", "表題"),
        "ko": ("제목",),
        "hi": ("शीर्षक",),
        "ar": ("العنوان", "عنوان"),
        "ru": ("название", "заголовок"),
    },
    "url": {
        "en": ("url", "link", "pubmed link"),
        "es": ("enlace", "vínculo"),
        "fr": ("lien",),
        "de": ("link", "verknüpfung"),
        "pt": ("link", "ligação"),
        "it": ("collegamento", "link"),
        "zh": ("链接", "网址"),
        "ja": ("リンク",),
        "ko": ("링크",),
        "hi": ("लिंक",),
        "ar": ("الرابط", "رابط"),
        "ru": ("ссылка",),
    },
}
"""Words by concept and language, lower case as `find_terms` compares them. Concepts: answer
labels (`answer`, `verdict`, `score`), verdict words (`factual`, `hallucinated`, `not_sure`;
`support`, `contradict`, `neutral`; `yes`, `no`), declining (`unknown`) and the fields of a
reference (`title`, `url`)."""


def terms(*concepts: str, languages: Iterable[str] = LANGUAGES) -> tuple[str, ...]:
    """Every word of these concepts in these languages, without repeats, longest first (so
    an alternation built from them prefers "final answer" to "answer"). An unknown concept
    is a KeyError: a misspelt name must not silently read nothing."""
    wanted = set(languages)
    words = {w for c in concepts for lang, ws in TERMS[c].items() if lang in wanted for w in ws}
    return tuple(sorted(words, key=lambda w: (-len(w), w)))


def _script(word: str) -> str:
    """How a word meets its neighbours: `cjk` (Chinese, Japanese: no spaces, so it matches
    anywhere), `ko` (Korean: particles attach after a word, so only its start is a
    boundary), `ar` (Arabic: "and" attaches before it), or `spaced`."""
    if any("\u3040" <= c <= "\u30ff" or "\u3400" <= c <= "\u9fff" or "\uf900" <= c <= "\ufaff" for c in word):
        return "cjk"
    if any("\uac00" <= c <= "\ud7af" for c in word):
        return "ko"
    if any("\u0600" <= c <= "\u06ff" for c in word):
        return "ar"
    return "spaced"


_BEFORE = {
    "spaced": r"(?<!\w.)",
    "cjk": "",
    "ko": r"(?<!\w.)",
    "ar": r"(?:(?<!\w.)|(?<=(?<!\w)و.))",
}
"""The boundary before a word, checked once its first character is read (so the pattern
opens with a plain character and the regex engine can skip to where a word may start)."""
_AFTER = {"spaced": r"(?!\w)", "cjk": "", "ko": "", "ar": r"(?!\w)"}


def _piece(char: str) -> str:
    return r"\s+" if char == " " else "'?" if char == "'" else re.escape(char)


_Node = dict[str, "_Node"]
"""A prefix tree: each character to the tree of what may follow it (\"\" marks a word's end)."""


def _trie(node: _Node) -> str:
    """A prefix tree of words as a regex ("could be|could also be" as
    "could(?:\\s+also)?\\s+be"): the engine tries one branch per character instead of every
    word at every position."""
    ends = "" in node
    branches = [_piece(char) + _trie(child) for char, child in sorted(node.items()) if char]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 and not ends else f"(?:{'|'.join(branches)})"
    return f"{body}?" if ends else body


def phrases(words: Iterable[str]) -> str:
    """Regex source finding any of `words` in a `fold`ed text (so: no IGNORECASE), each at
    the word boundaries its script has (see `_script`); a space in a word matches any run
    of spaces, an apostrophe an apostrophe or none. Built as one prefix tree opening with a
    plain character, so scanning a long text for hundreds of words stays fast and linear;
    at each place the longest word wins. An alternation: wrap it in `(?:…)` to embed it."""
    root: _Node = {}
    for word in words:
        node = root
        for char in fold(word):
            node = node.setdefault(char, {})
        node[""] = {}
    branches = []
    for first, child in sorted(root.items()):
        script = _script(first)
        branches.append(f"{_piece(first)}{_BEFORE[script]}{_trie(child)}{_AFTER[script]}")
    return "|".join(branches) if branches else "(?!)"


def fold(text: str) -> str:
    """`normalize`d and lower-cased, one character for one: the form every pattern of
    `phrases` is matched against (the few characters whose lower case is longer, such as
    "İ", keep their case)."""
    text = normalize(text)
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def _key(word: str) -> str:
    """A matched word as `TERMS` spells it: folded, one space, no apostrophe."""
    return " ".join(fold(word).replace("'", "").split())


@cache
def _concept_of(concepts: tuple[str, ...]) -> dict[str, str]:
    found: dict[str, str] = {}
    for concept in concepts:
        for word in terms(concept):
            found.setdefault(_key(word), concept)
    return found


@cache
def term_pattern(concepts: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern finding any word of `concepts` in a `fold`ed text; at each place the
    longest word wins whatever its concept. Cached: readers call it at import time or per
    reply."""
    return re.compile(phrases(terms(*concepts)))


def find_terms(text: str, concepts: Iterable[str]) -> list[tuple[int, int, str]]:
    """(start, end, concept) of every word of `concepts` in `text`, left to right, the
    longest at each place (one regex pass: linear in the text). A word two concepts share
    belongs to the first listed."""
    key = tuple(concepts)
    pattern, concept_of = term_pattern(key), _concept_of(key)
    return [(m.start(), m.end(), concept_of[_key(m.group())]) for m in pattern.finditer(fold(text))]


# ------------------------------------------------------------------------------ marks

MINUS_SIGNS = "\u2212\u2012\u2013\u2010\u2011\ufe63\uff0d\u2796"
"""Minus sign, figure dash, en dash, hyphen, non-breaking hyphen, small and full-width
hyphen-minus, heavy minus: each read as "-" before a number."""

_MARKS = {
    **dict.fromkeys(MINUS_SIGNS, "-"),
    **dict.fromkeys("\r\xa0\u2007\u2009\u200a\u200b\u202f\u3000\ufeff", " "),
    **dict(zip("。、「」『』【】〔〕《》〈〉", '.,""""[]()""""', strict=True)),
    **dict(zip("،؛؟٫٪।॥∶", ",;?.%..:", strict=True)),
    **dict(zip("“”„‘’‚", "\"\"\"'''", strict=True)),
}


@cache
def _translation() -> dict[int, str]:
    """The one-for-one table `normalize` applies (built once, on first need): full-width
    forms U+FF01-FF5E as ASCII, decimal digits of every script as ASCII digits, then the
    marks above."""
    table = {c: chr(c - 0xFEE0) for c in range(0xFF01, 0xFF5F)}
    table.update(
        {c: str(unicodedata.decimal(chr(c))) for c in range(128, sys.maxunicode + 1) if chr(c).isdecimal()}
    )
    table.update({ord(k): v for k, v in _MARKS.items()})
    return table


def normalize(text: str) -> str:
    """`text` with full-width punctuation and digits (`：`, `（`, `１`), digits of any
    script (`٢`), every minus sign (`−1`, `–1`, `－１`), CJK, Arabic and Devanagari
    punctuation (`。`, `、`, `،`, `।`), curly quotes, unusual spaces and carriage returns
    (`\r\n` is `\n` after a space) as their ASCII forms.
    One character for one, so a position in the result is the same position in `text`."""
    return text if text.isascii() else text.translate(_translation())


_FOOTNOTE = re.compile(
    r"[\u00b9\u00b2\u00b3\u2070-\u207f]+|(?<=[^\W_]|[.,;!?)\"'])(?:\[\^?\d{1,3}\]|\^\d{1,3})"
)
"""Superscript digits and signs anywhere; `[1]`, `[^1]` and `^1` attached to the word,
number or punctuation before them (a bracketed number after a space or a colon is a value,
as in `Score: [2]`)."""


def without_footnotes(text: str) -> str:
    """`text` with superscripts and footnote marks blanked (`factual.[1]` reads as
    `factual.`, `2¹` as `2`): one character for one, as `normalize`."""
    return _FOOTNOTE.sub(lambda m: " " * len(m.group()), text)
