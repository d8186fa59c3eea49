"""Whether a reply commits to the answers it names: the reading every benchmark shares.

A reader that takes the first answer-shaped thing it finds pays a reward for replies a
careful human would not accept: "I would not say it is factual", "if the trial exists,
0; if not, 1", "1. No, that's wrong.", "1 but could be 0". Each benchmark finds its
candidate answers (`Mention`s: where each stands and what it would mean); this module
decides, from the words around them and between them, which of them the reply stands
by, and reads an answer only when exactly one value is left:

- `stances(text, mentions)`: how the reply says each one (asserted, chosen, negated,
  possible, conditional, unclear, a question).
- `committed(text, mentions)`: the one value the reply commits to, or None. Retractions
  clear what came before them, marked revisions ("Actually", "Final answer:", "so")
  replace it, a negated mention excludes its value (and asserts its `opposite`, where a
  benchmark has one), and a possible or conditional mention of another value leaves no
  answer: when two readings are possible, there is none.

The cues are words in the languages of `medhal.kit.vocabulary.LANGUAGES`. Everything is
found in one pass over the text per cue kind, then looked up per mention by bisection,
so the cost is linear in the reply plus log-linear in the number of mentions.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from medhal.kit.vocabulary import fold, phrases

T = TypeVar("T")

Stance = Literal["asserted", "chosen", "negated", "possible", "conditional", "unclear", "question"]
ASSERTED: Stance = "asserted"
"""Said as the answer ("The answer is 1", "Probably 1", "I'd say 1")."""
CHOSEN: Stance = "chosen"
"""Picked when forced ("If I had to choose, 1"): asserted, and it replaces what came before."""
NEGATED: Stance = "negated"
"""Denied ("not 1", "I would not say it is factual", "anything but factual")."""
POSSIBLE: Stance = "possible"
"""Named as a possibility ("could be 0", "0 is also possible", "or possibly 0")."""
CONDITIONAL: Stance = "conditional"
"""Said under a condition ("if the trial exists, 0", "0 if ..., otherwise 1")."""
UNCLEAR: Stance = "unclear"
"""Neither said nor denied ("not necessarily factual", "whether it is factual")."""
QUESTION: Stance = "question"
"""Asked ("Is it factual?")."""


@dataclass(frozen=True)
class Mention(Generic[T]):
    """A candidate answer a benchmark found in a reply: `text[start:end]` means `value`."""

    start: int
    end: int
    value: T
    opposite: T | None = None
    """The value that denying this mention asserts, where the benchmark has exactly two
    answers in words ("not hallucinated" is factual); None: a denial asserts nothing ("not
    1" leaves 0 and 2)."""


# ------------------------------------------------------------------------------ cues


def _cue(*words: str, extra: str = "") -> re.Pattern[str]:
    """A cue pattern over `fold`ed text: any of `words` (see `medhal.kit.vocabulary.phrases`),
    or the `extra` alternatives (written in lower case, each opening with a plain
    character, so the engine still skips to where a cue may start)."""
    return re.compile(phrases(words) + (f"|{extra}" if extra else ""))


_SENTENCE_END = re.compile(
    r"[.!?]+(?=[\s\"'*_)\]]|$|[^\x00-\x7f])|[.!?](?<=[^\x00-\x7f].)|;|"
    r"\n(?<!:\n)(?<!:\s\n)(?<!:\s\s\n)(?<!:\s\s\s\n)"
)
"""Where a sentence ends (a semicolon ends a condition's scope too; a full stop before a
character outside ASCII, or after one, is a CJK `。` as `fold` writes it; a line break
after a colon continues the sentence: "If the trial exists:\n0")."""

_BUT = r"b(?<!anything\sb)(?<!nothing\sb)(?<!all\sb)(?<!\w.)ut(?!\w)"
""""but", except in "anything but", "nothing but", "all but" (which deny or assert what follows)."""
_CONTRAST_WORDS = (
    *("however", "though", "although", "yet", "pero", "sin embargo", "mais", "cependant", "aber"),
    *("jedoch", "mas", "porém", "ma", "però", "но", "однако", "لكن", "ولكن", "लेकिन", "但是", "但"),
    *("不过", "しかし", "でも", "하지만", "그러나"),
)
_CLAUSE_BREAK = _cue(
    *_CONTRAST_WORDS,
    *("whereas", "while", "so", "therefore", "thus", "hence", "aunque", "así que", "por lo tanto"),
    *("pourtant", "donc", "obwohl", "daher", "deshalb", "embora", "portanto", "tuttavia", "quindi"),
    *("хотя", "поэтому", "لذلك", "इसलिए", "所以", "因此", "だから", "따라서", "그래서"),
    *("anyway", "regardless", "in any case", "either way"),
    extra=_BUT + r"|[,:()\[\]{}<>|\"`=—]| [-–] ",
)
"""Where a clause ends: punctuation, a dash between spaces, brackets, quotes and the
words that open a contrasting or concluding clause. Negations and hedges do not reach
across one ("No, the answer is hallucinated" asserts it)."""

_NEGATION = _cue(
    *("no", "never", "without", "neither", "nor", "nothing", "none", "free of", "free from"),
    *("lacks", "lacking", "devoid of", "absence of", "far from", "anything but", "rather than"),
    *("instead of", "other than", "nunca", "ni", "sin", "ningún", "ninguna", "ne", "pas", "sans"),
    *("aucun", "aucune", "plutôt que", "nicht", "kein", "keine", "keinen", "keiner", "ohne", "nie"),
    *("statt", "anstatt", "não", "nem", "sem", "nenhum", "nenhuma", "em vez de", "en lugar de"),
    *("non", "senza", "nessun", "nessuna", "invece di", "не", "нет", "без", "ни", "вместо", "ليس", "ليست"),
    *("غير", "لم", "بدون", "بدلا من", "नहीं", "न", "बिना", "ना", "不是", "并非", "并不", "不", "没有"),
    *("没", "无", "非"),
    extra=r"n(?<!\w.)ot(?!\s+(?:sure|certain|only|just)\b)(?!\w)|n't(?<=\wn't)(?!\w)|n(?<!\w.)on-?(?=\w)|"
    r"n'(?<=(?<!\w)n')(?=\w)|안\s|못\s",
)
"""Words that deny what follows them closely ("not", "n't", "no", "non-", "without",
"free of", "anything but", "rather than"; the same in each language). "not sure" and
"not only" are not denials."""
_NEGATION_WORDS = 3
"""Words a denial may stand before what it denies ("does not contain any hallucinations")."""
_CLAUSE_NEGATION = re.compile(
    r"[\s*_]*(?:none|nothing|neither|no\s+part|not\s+one|rien|nada|nichts|niente|nenhuma?|ничего|何も)(?!\w)"
)
"""A clause opening with these denies its predicate however far it stands ("Nothing in the
answer is fabricated")."""

_RAISED = _cue(
    *("don't think", "do not think", "don't believe", "do not believe", "don't consider"),
    *("do not consider", "wouldn't say", "would not say", "wouldn't call", "would not call"),
    *("can't say", "cannot say", "not the case that", "not true that", "disagree that"),
    *("no creo que", "no diría que", "je ne pense pas que", "je ne dirais pas que"),
    *("je ne crois pas que", "glaube nicht, dass", "denke nicht, dass", "würde nicht sagen, dass"),
    *("não acho que", "não diria que", "non credo che", "non direi che", "не думаю, что"),
    *("не сказал бы, что", "не считаю, что", "لا أعتقد أن", "لا أظن أن", "नहीं लगता कि"),
    *("我不认为", "不认为", "我不觉得", "不觉得"),
)
"""A denial raised to the speaker's opinion: it denies the whole clause that follows ("I
would not say it is factual", "I don't think it is hallucinated")."""
_AFTER_NEGATION = re.compile(
    r"ではない|ではありません|じゃない|じゃありません|でない|ではなく|とは思わない|とは思いません|"
    r"とは言えない|이\s*아니|가\s*아니|아님|아닙|아니|않|라고\s*생각하지\s*않|नहीं"
)
"""Denials that follow what they deny (Japanese, Korean, Hindi: "事実ではない",
"사실이 아닙니다", "तथ्यात्मक नहीं है")."""
_AFTER_NEGATION_CHARS = 8

_UNCLEAR = _cue(
    *("not necessarily", "not entirely", "not completely", "not fully", "not only", "not just"),
    *("not saying", "not claiming", "not that", "whether", "i doubt", "not sure whether"),
    *("not sure if", "not sure that", "unclear whether", "unclear if", "no necesariamente"),
    *("pas forcément", "pas nécessairement", "nicht unbedingt", "não necessariamente"),
    *("non necessariamente", "не обязательно", "ليس بالضرورة", "ज़रूरी नहीं", "不一定", "是否"),
    *("必ずしも", "かどうか", "반드시", "ob"),
    extra=r"n(?<!\w.)ot\s+(?:sure|certain)(?!\s+(?:why|where|how|what|when|who)\b)(?!\w)|"
    r"u(?<!\w.)n(?:sure|certain)(?!\s+(?:why|where|how|what|when|who)\b)(?!\w)",
)
"""Words after which a mention is neither said nor denied ("not necessarily", "whether",
"I'm not sure it is"; "not sure why it is" takes it as given)."""

_SCOPE_END = _cue(
    *("so", "therefore", "thus", "hence", "anyway", "regardless", "in any case", "either way", "wait"),
    *("así que", "por lo tanto", "donc", "also", "daher", "portanto", "quindi", "поэтому", "所以", "因此"),
    extra=r"a(?<!\w.)ctually(?!\w)",
)
"""Words that end what a condition or a reported belief covers: the rest is said now."""

_REPORTED = _cue(
    *("first i thought", "i first thought", "at first i thought", "i initially thought"),
    *("initially i thought", "i thought", "i had thought", "earlier i said", "i said earlier"),
    *("i previously said", "previously i said", "at first glance", "at first sight", "my first guess"),
    *("my initial answer", "my first answer", "pensé", "je pensais", "ich dachte", "eu pensei", "pensavo"),
    *("я думал", "我原以为", "我以为", "最初は", "처음에는"),
)
"""Words that report an earlier belief: a mention after them, in their sentence and before
any contrast, is not said now ("First I thought 0, but ... 1")."""

_POSSIBLE = _cue(
    *("could be", "could also be", "might be", "might also be", "may be", "may also be", "possibly"),
    *("perhaps", "maybe", "potentially", "conceivably", "or possibly", "or maybe", "or perhaps"),
    *("can't rule out", "cannot rule out", "can not rule out", "podría ser", "puede ser", "quizás"),
    *("quizá", "tal vez", "posiblemente", "pourrait être", "peut-être", "possiblement"),
    *("éventuellement", "könnte", "vielleicht", "möglicherweise", "eventuell", "poderia ser", "pode ser"),
    *("talvez", "possivelmente", "potrebbe essere", "forse", "possibilmente", "может быть", "возможно"),
    *("ربما", "قد يكون", "يمكن أن يكون", "من الممكن", "शायद", "संभवतः", "हो सकता है"),
    *("可能", "也许", "或许", "也可能", "かもしれ", "たぶん", "多分", "아마", "아마도"),
)
"""Words that name what follows as a possibility, not an answer."""
_POSSIBLE_AFTER = _cue(
    *("is possible", "is also possible", "also possible", "is plausible", "is also plausible"),
    *("cannot be ruled out", "can't be ruled out", "could also apply", "might also apply"),
    *("could also fit", "is also an option", "remains possible", "es posible", "también es posible"),
    *("est possible", "est aussi possible", "ist möglich", "ist auch möglich", "auch möglich"),
    *("é possível", "também é possível", "è possibile", "è anche possibile", "тоже возможно"),
    *("также возможно", "не исключено", "ممكن أيضا", "محتمل أيضا", "भी संभव है", "भी हो सकता है"),
    *("也有可能", "的可能性", "の可能性", "もあり得る", "も考えられる", "일 수도", "가능성"),
    *("might be", "could be", "may be"),
)
"""Words after a mention that name it as a possibility ("0 is also possible")."""

_CONDITION = _cue(
    *("in case", "provided that", "assuming", "supposing", "otherwise", "or else", "si"),
    *("en caso de", "a menos que", "de lo contrario", "sinon", "à moins que", "au cas où"),
    *("wenn", "falls", "sofern", "sonst", "andernfalls", "senão", "do contrário"),
    *("caso contrário", "altrimenti", "a meno che", "если", "иначе", "в противном случае"),
    *("إذا", "لو", "وإلا", "अगर", "यदि", "वरना", "नहीं तो", "如果", "假如", "要是", "否则"),
    *("不然", "若", "もし", "ならば", "なら", "ければ", "場合は", "만약", "만일", "경우에는"),
    *("아니라면", "아니면"),
    extra=r"i(?<!\w.)(?<!even\si)(?<!as\si)f(?!\s+any\b)(?!\w)|u(?<!\w.)nless(?!\w)|s(?<![\w-].)e(?!\w)",
)
"""Words that open a condition ("if", "unless", "otherwise"; "even if" and "as if" do not)."""
_CONDITION_AFTER_CHARS = 80

_CHOICE = _cue(
    *("if i had to choose", "if i had to pick", "if i had to guess", "if i had to decide"),
    *("if i have to choose", "if i have to pick", "if i must choose", "if i must pick"),
    *("if forced to choose", "if forced to pick", "if pressed", "forced to choose"),
    *("si tuviera que elegir", "si tuviera que escoger", "si je devais choisir"),
    *("wenn ich mich entscheiden müsste", "wenn ich wählen müsste", "se eu tivesse que escolher"),
    *("se tivesse de escolher", "se dovessi scegliere", "если бы мне пришлось выбирать"),
    *("إذا كان علي الاختيار", "अगर मुझे चुनना हो", "如果必须选择", "如果一定要选", "非要选的话"),
    *("強いて言えば", "選ぶとすれば", "選ぶなら", "굳이 고르자면", "선택해야 한다면"),
)
"""A forced choice: what follows is asserted, and replaces what came before."""

_QUESTION_OPENING = re.compile(
    r"\s*(?:[\W_]\s*)?(?:¿|(?:"
    + phrases(
        (
            *("is", "are", "was", "were", "does", "do", "did", "could", "would", "should", "can", "will"),
            *("has", "have", "what", "which", "whether", "how", "why", "isn't", "doesn't", "est-ce", "ist"),
            *("sind", "kann", "é", "será", "هل", "क्या"),
        )
    )
    + "))"
)
"""How a question opens; a mention in a sentence that opens so and ends with "?" is asked."""

_REVISION = _cue(
    *("wait", "correction", "corrected", "correcting", "on second thought", "on second thoughts"),
    *("on reflection", "on closer look", "on closer reading", "on closer inspection", "i meant"),
    *("i mean", "let me correct", "let me revise", "let me reconsider", "let me rethink"),
    *("i was wrong", "i made a mistake", "final", "finally", "revised", "updated", "in the end"),
    *("to conclude", "so", "therefore", "thus", "hence", "overall", "in conclusion", "in summary"),
    *("to summarize", "to summarise", "on balance", "all in all", "in short", "ultimately"),
    *("after all", "scratch that", "no wait", "en realidad", "corrección", "mejor dicho"),
    *("en definitiva", "por lo tanto", "finalmente", "en fait", "plutôt", "donc", "finalement"),
    *("en conclusion", "eigentlich", "korrektur", "vielmehr", "daher", "schließlich", "letztlich"),
    *("na verdade", "correção", "aliás", "portanto", "in realtà", "correzione", "quindi"),
    *("на самом деле", "поправка", "исправление", "точнее", "итак", "поэтому", "في الواقع"),
    *("تصحيح", "بل", "لذلك", "वास्तव में", "सुधार", "दरअसल", "इसलिए", "实际上", "其实", "更正"),
    *("纠正", "所以", "因此", "最终", "综上", "実は", "訂正", "したがって", "結論として", "最終的に"),
    *("사실은", "정정", "따라서", "결론적으로", "최종"),
    extra=r"a(?:(?<=^a)|(?<=^[\s*_>•-]a)|(?<=^[\s*_>•-]{2}a)|(?<=[.!?;:,\n(]a)|(?<=[.!?;:,\n(][\s*_>•-]a)|"
    r"(?<=[.!?;:,\n(][\s*_>•-]{2}a)|(?<=[.!?;:,\n(][\s*_>•-]{3}a))ctually(?!\w)|"
    r"r(?<!\w.)ather(?!\s+than\b)(?!\w)|i(?<!\w.)nstead(?!\s+of\b)(?!\w)",
)
"""Marks that what follows revises or concludes what came before ("Wait", "Actually" opening
a clause, "Correction:", "Final answer:", "so", "therefore", "on balance"): a later answer
replaces the earlier ones. "Actually" inside a clause is emphasis; "rather than" denies."""

_FINAL = _cue(
    *("final", "finally", "in the end", "ultimately", "finalmente", "finalement", "schließlich"),
    *("letztlich", "en definitiva", "最终", "最終的に", "最終", "최종"),
)
"""The revision marks that say "final": a final answer replaces the answers before it, but
not another final answer."""

_CONTRAST = _cue(*_CONTRAST_WORDS, extra=_BUT)
"""Contrast between two answers: it replaces an abstention or a possibility ("Unsure, but
it is hallucinated", "It might be 0, but it is 1") or turns an answer into an abstention
("1, but I am not sure"); between two definite answers it settles nothing."""

_LEAD = r"(?:(?:no|nope|wait|actually|hmm+|oh|sorry|oops|hold\s+on|uh)(?!\w)[\s,.!:—-]*)"
_RETRACTION = re.compile(
    r"[.!?;:,\n(][\s*_>#•-]*(?:"
    rf"{_LEAD}+(?:that|this|it)(?:'s|\s+is|\s+was)\s+(?:wrong|incorrect|not\s+right|not\s+correct|"
    r"a\s+mistake|mistaken|not\s+it)|"
    rf"{_LEAD}+(?:it|that|this)\s*(?:isn'?t|is\s+not|wasn'?t|was\s+not)(?:\s+(?:it|so|right))?|"
    rf"{_LEAD}*(?:scratch|strike|forget|ignore|disregard)\s+(?:that|this|it|the\s+above|what\s+i\s+said)|"
    rf"{_LEAD}*(?:i\s+take\s+(?:that|it)\s+back|just\s+kidding|never\s*mind|not\s+really|"
    r"i\s+was\s+wrong|i\s+made\s+a\s+mistake|i\s+misspoke|my\s+mistake|my\s+bad)|"
    r"wait,?\s+no|no,?\s+wait|"
    r"no,?\s+(?:eso|esto)\s+(?:es|está)\s+(?:incorrecto|mal|equivocado)|olvida\s+eso|me\s+equivoqué|"
    r"retiro\s+lo\s+dicho|non,?\s+c'est\s+(?:faux|incorrect|une\s+erreur)|oubliez\s+(?:ça|cela)|"
    r"je\s+me\s+suis\s+trompée?|je\s+retire\s+(?:ça|cela|ce\s+que\s+j'ai\s+dit)|"
    r"nein,?\s+das\s+ist\s+(?:falsch|nicht\s+richtig|ein\s+fehler)|vergiss\s+das|streich\s+das|"
    r"ich\s+habe\s+mich\s+geirrt|ich\s+nehme\s+das\s+zurück|não,?\s+(?:isso|isto)\s+está\s+errado|"
    r"esqueça\s+isso|me\s+enganei|retiro\s+o\s+que\s+disse|no,?\s+è\s+sbagliato|lascia\s+perdere|"
    r"mi\s+sono\s+sbagliat[oa]|нет,?\s+это\s+(?:неверно|не\s+так|ошибка)|я\s+ошиблась|я\s+ошибся|"
    r"забудьте\s+это|беру\s+свои\s+слова\s+назад|لا,?\s*هذا\s+خطأ|أخطأت|أتراجع|"
    r"नहीं,?\s+यह\s+गलत\s+है|मैंने\s+गलत\s+कहा|गलती\s+हो\s+गई|"
    r"不对|说错了|我错了|收回|撤回|不,?\s*这是错的|いいえ,?\s*違います|違いました|間違えました|"
    r"取り消します|아니요,?\s*틀렸습니다|틀렸습니다|취소합니다|잘못\s*말했습니다"
    r")[\s*_]*(?=[.!?;:,\n—-]|$)"
)
"""A clause that takes back what came before it, whole ("No, that's wrong.", "Scratch
that.", "I take it back.", "Wait, no."; the same in each language), after the punctuation
that ends what it takes back. "That is wrong" alone may be a verdict on what a benchmark
shows, so it retracts only after "No"/"Wait"/...."""


_WINDOW = 400
"""Characters looked at before and after a mention for its sentence (a "sentence" of a
runaway generation without punctuation is cut there, so each mention costs a bounded look)."""


MENTIONS_READ = 64
"""Mentions a reply may hold and still be read: one naming answers more often is a runaway
generation repeating itself, not a commitment to one of them (and judging each would cost
more than the reply is worth). Such a reply reads as no answer."""


class _Places:
    """The (start, end) of every match of one pattern in a text, for bisection."""

    def __init__(self, pattern: re.Pattern[str], text: str, windows: Iterable[tuple[int, int]]) -> None:
        spans = [m.span() for low, high in windows for m in pattern.finditer(text, low, high)]
        self.starts = [s for s, _ in spans]
        self.ends = [e for _, e in spans]

    def last_end(self, at: int) -> int:
        """The end of the last match ending at or before `at` (0 when none)."""
        n = bisect_right(self.ends, at)
        return self.ends[n - 1] if n else 0

    def first_start(self, at: int, default: int) -> int:
        """The start of the first match starting at or after `at` (`default` when none)."""
        n = bisect_left(self.starts, at)
        return self.starts[n] if n < len(self.starts) else default

    def within(self, low: int, high: int) -> list[tuple[int, int]]:
        """Every match lying wholly in [low, high)."""
        n = bisect_left(self.starts, low)
        found = []
        while n < len(self.starts) and self.starts[n] < high:
            if self.ends[n] <= high:
                found.append((self.starts[n], self.ends[n]))
            n += 1
        return found

    def any_within(self, low: int, high: int) -> bool:
        n = bisect_left(self.starts, low)
        while n < len(self.starts) and self.starts[n] < high:
            if self.ends[n] <= high:
                return True
            n += 1
        return False


@dataclass
class _Cues:
    """Every cue of a text, found once."""

    text: str
    sentence: _Places
    clause: _Places
    negation: _Places
    raised: _Places
    after_negation: _Places
    unclear: _Places
    reported: _Places
    scope_end: _Places
    possible: _Places
    possible_after: _Places
    condition: _Places
    choice: _Places
    revision: _Places
    final: _Places
    contrast: _Places
    retraction: _Places

    @classmethod
    def of(cls, text: str, mentions: Sequence[Mention[Any]]) -> _Cues:
        """The cues around `mentions` (in order): those that say how one mention is said,
        within `_WINDOW` characters of it; those that stand between mentions (retractions,
        revisions, contrasts), from the first mention to the end of the text."""
        near = _merged((max(0, m.start - _WINDOW), min(len(text), m.end + _WINDOW)) for m in mentions)
        after = [(max(0, mentions[0].start - _WINDOW), len(text))] if mentions else []
        return cls(
            text,
            *(
                _Places(p, text, near)
                for p in (
                    _SENTENCE_END,
                    _CLAUSE_BREAK,
                    _NEGATION,
                    _RAISED,
                    _AFTER_NEGATION,
                    _UNCLEAR,
                    _REPORTED,
                    _SCOPE_END,
                    _POSSIBLE,
                    _POSSIBLE_AFTER,
                    _CONDITION,
                    _CHOICE,
                )
            ),
            *(_Places(p, text, after) for p in (_REVISION, _FINAL, _CONTRAST, _RETRACTION)),
        )


def _merged(windows: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping (start, end) windows, given in order of start, merged."""
    merged: list[tuple[int, int]] = []
    for low, high in windows:
        if merged and low <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return merged


_MANY_WORDS = re.compile(r"\S+")
_GLOSS = re.compile(r"[\s*_`'\"]*\([\s*_`'\"]*")
_BRACKET = re.compile(r"[ \t]*\([^()\n]{0,60}\)")
_CLOSING = re.compile(r"[^()\n]{0,20}\)")


def _near(gap: str, words: int) -> bool:
    """Whether a gap holds at most `words` words (characters, for scripts without spaces)."""
    if len(gap) > 12 * (words + 1):
        return False
    count = len(_MANY_WORDS.findall(gap))
    wide = sum(1 for c in gap if "\u3040" <= c <= "\u9fff")
    return count <= words and wide <= 2 * words


def _stance(cues: _Cues, start: int, end: int, previous_end: int, next_start: int) -> Stance:
    """How the reply says the mention at [start, end): `previous_end` is where the mentions
    before it end (a cue at or before it belongs to them: the "not" of "not sure"),
    `next_start` where the next one starts."""
    text = cues.text
    sentence_start = max(cues.sentence.last_end(start), start - _WINDOW)
    sentence_end = min(cues.sentence.first_start(end, len(text)), end + _WINDOW)
    clause_start = max(sentence_start, cues.clause.last_end(start))
    clause_end = min(sentence_end, cues.clause.first_start(end, len(text)))
    own = max(clause_start, previous_end)
    """Where the words that can only be about this mention begin."""

    if text[sentence_end : sentence_end + 1] == "?" and (
        _QUESTION_OPENING.match(text, sentence_start) or not text[sentence_start:start].strip(" \t*_")
    ):
        return QUESTION
    if cues.choice.any_within(previous_end, start):
        return CHOSEN
    if _conditional(cues, start, end, max(sentence_start, previous_end), min(sentence_end, next_start)):
        return CONDITIONAL
    if cues.unclear.any_within(clause_start, start) or _scoped(cues, cues.reported, sentence_start, start):
        return UNCLEAR
    negated = any(_near(text[e:start], _NEGATION_WORDS) for _, e in cues.negation.within(own, start))
    negated = negated or bool(
        _CLAUSE_NEGATION.match(text, clause_start) and previous_end <= clause_start < start
    )
    negated = negated or any(
        clause_start <= e for _, e in cues.raised.within(max(sentence_start, previous_end), start)
    )
    negated = negated or any(
        s - end <= _AFTER_NEGATION_CHARS and s < min(clause_end, next_start)
        for s, _ in cues.after_negation.within(end, end + _AFTER_NEGATION_CHARS + 12)
    )
    possible = any(_near(text[e:start], 3) for _, e in cues.possible.within(own, start))
    # "0 (factual) is also possible": a bracket after the mention, or closing round it, is
    # part of it.
    bracket = _BRACKET.match(text, end) or _CLOSING.match(text, end)
    reach = min(sentence_end, cues.clause.first_start(bracket.end(), len(text))) if bracket else clause_end
    possible = possible or cues.possible_after.any_within(end, min(reach, end + 40, next_start + 40))
    if negated:
        return UNCLEAR if possible else NEGATED
    return POSSIBLE if possible else ASSERTED


def _scoped(cues: _Cues, places: _Places, low: int, start: int) -> bool:
    """Whether a cue of `places` stands between `low` and `start` with no contrast or
    conclusion between it and `start` (which would end its scope: "If I were unsure I would
    say so, but it is 1")."""
    return any(
        not cues.contrast.any_within(cue_end, start) and not cues.scope_end.any_within(cue_end, start)
        for _, cue_end in places.within(low, start)
    )


def _conditional(cues: _Cues, start: int, end: int, low: int, high: int) -> bool:
    """Said under a condition: a condition opens earlier in the sentence (after `low`) with
    no contrast or conclusion between it and the mention ("If the trial exists, 0"), or
    follows the mention in its sentence (before `high`, the next mention) with none
    between ("0 if the trial exists")."""
    if _scoped(cues, cues.condition, low, start):
        return True
    for cue_start, _ in cues.condition.within(end, min(high, end + _CONDITION_AFTER_CHARS)):
        if not cues.contrast.any_within(end, cue_start):
            return True
    return False


def _ordered(mentions: Iterable[Mention[T]]) -> list[Mention[T]]:
    """Mentions by position, one per place (the first given wins a tie)."""
    by_place: dict[tuple[int, int], Mention[T]] = {}
    for mention in mentions:
        by_place.setdefault((mention.start, mention.end), mention)
    return [by_place[place] for place in sorted(by_place)]


def stances(text: str, mentions: Sequence[Mention[T]]) -> list[Stance]:
    """How the reply says each mention (in the order given), judged from the words of its
    sentence and clause: see `Stance`."""
    ordered = _ordered(mentions)
    cues = _Cues.of(fold(text), ordered)
    found = dict(zip(((m.start, m.end) for m in ordered), _walk(cues, ordered), strict=True))
    return [found[(m.start, m.end)] for m in mentions]


def _walk(cues: _Cues, ordered: Sequence[Mention[T]]) -> list[Stance]:
    """The stance of each mention, in order (each sees where its neighbours stand)."""
    result: list[Stance] = []
    previous_end = 0
    for n, mention in enumerate(ordered):
        later = n + 1
        while later < len(ordered) and _GLOSS.fullmatch(
            cues.text, ordered[later - 1].end, ordered[later].start
        ):
            later += 1  # a gloss is part of what it follows: "0 (factual) otherwise"
        following = ordered[later].start if later < len(ordered) else len(cues.text)
        if result and _GLOSS.fullmatch(cues.text, previous_end, mention.start):
            # "0 (factual)": the bracket restates what it follows; "not 0 (factual)" denies
            # the 0, and asserts nothing through its gloss.
            result.append(UNCLEAR if result[-1] == NEGATED else result[-1])
        else:
            result.append(_stance(cues, mention.start, mention.end, previous_end, following))
        previous_end = max(previous_end, mention.end)
    return result


def committed(text: str, mentions: Iterable[Mention[T]], abstentions: Collection[T] = ()) -> T | None:
    """The one value the reply commits to among its `mentions`, or None.

    Mentions are taken in order. A retraction ("No, that's wrong.") clears every mention
    before it; an asserted mention after a revision mark ("Actually", "Final answer:",
    "so") or a forced choice replaces them, and so does one after a contrast ("but") when
    it is an abstention (a value in `abstentions`, such as "not sure") or what it replaces
    is only abstentions and possibilities ("It might be X, but it is Y"). What is
    left then decides: exactly one asserted value (a negated mention asserts its
    `opposite`), not denied by a negated mention, and no other value named as possible or
    under a condition (an asserted abstention tolerates possibilities: "I'm not sure, but it
    might be 1" abstains). With nothing asserted, a single value named only as possible is
    read ("It might be hallucinated"). Anything else names two answers or none: None.
    """
    ordered = _ordered(mentions)
    if not ordered or len(ordered) > MENTIONS_READ:
        return None
    cues = _Cues.of(fold(text), ordered)
    # Words of a retraction are its own ("No, that's wrong" names no answer).
    ordered = [m for m in ordered if not _inside(cues.retraction, m)]
    live: list[tuple[Mention[T], Stance]] = []
    finals: set[int] = set()
    previous = 0
    for mention, stance in zip(ordered, _walk(cues, ordered), strict=True):
        if cues.retraction.any_within(previous, mention.start):
            live = []
        if stance in (ASSERTED, CHOSEN) and _replaces(
            cues, previous, mention, stance, live, finals, abstentions
        ):
            live = []
        if cues.final.any_within(previous, mention.start):
            finals.add(id(mention))
        live.append((mention, stance))
        previous = max(previous, mention.end)
    if cues.retraction.any_within(previous, len(text)):
        return None
    return _decide(live, abstentions)


def _inside(places: _Places, mention: Mention[Any]) -> bool:
    """Whether a match of `places` holds the mention."""
    return any(
        s <= mention.start and mention.end <= e
        for s, e in places.within(mention.start - 200, mention.end + 200)
    )


def _replaces(
    cues: _Cues,
    previous: int,
    mention: Mention[T],
    stance: Stance,
    live: list[tuple[Mention[T], Stance]],
    finals: set[int],
    abstentions: Collection[T],
) -> bool:
    """Whether an asserted mention replaces the ones before it (see `committed`). A final
    mark ("Final answer:") does not replace an answer that was itself marked final: two
    final answers that differ are two answers."""
    if not live:
        return False
    if stance == CHOSEN:
        return True
    revisions = set(cues.revision.within(previous, mention.start))
    if revisions - set(cues.final.within(previous, mention.start)):
        return True
    if revisions and not any(id(m) in finals for m, _ in live):
        return True
    if not cues.contrast.any_within(previous, mention.start):
        return False
    return mention.value in abstentions or all(
        m.value in abstentions or s in (POSSIBLE, CONDITIONAL) for m, s in live
    )


def _decide(live: list[tuple[Mention[T], Stance]], abstentions: Collection[T]) -> T | None:
    asserted = {m.value for m, s in live if s in (ASSERTED, CHOSEN)}
    asserted |= {m.opposite for m, s in live if s == NEGATED and m.opposite is not None}
    denied = {m.value for m, s in live if s == NEGATED}
    possible = {m.value for m, s in live if s == POSSIBLE}
    conditional = {m.value for m, s in live if s == CONDITIONAL}
    if len(asserted) == 1:
        value = next(iter(asserted))
        others = (possible | conditional) - {value}
        if value in denied or (others and value not in abstentions):
            return None
        return value
    if not asserted and len(possible) == 1 and not conditional and not possible & denied:
        return next(iter(possible))
    return None
