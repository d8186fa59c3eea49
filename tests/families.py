"""Generated reply families: an answer expression x a container x a commitment pattern x
noise, with the reading a careful human gives each reply composed by rule.

WHY: hand-written corpora pin the shapes someone thought of; readers tuned to them fail on
the next shape (issue 31: a fresh set agreed on 73%). A family states one rule of human
reading ("a retracted answer is no answer", "'X, but it could be Y' names two") and the
generator applies it to every answer form, container, language and decoration, so a reader
passes a family only by following the rule. The expected reading is composed here from
the parts, never taken from a reader.

Each benchmark describes its parts (`tests/<benchmark>/families.py`): its `Expression`s
(how each answer is written, in each language and form, and what a human reads from it),
its `Container`s (where a reply puts the answer: a tag, a table, JSON, a label, prose),
and which `Pattern`s and `Noise` apply. `compose` multiplies them out; `sample` takes a
fixed, spread subset for the fast suite. Benchmark-neutral: Med-HALT's families can use it
as they are.

Composition rules (the `reading` of each pattern):

- plain `C(x)`: x's reading.
- negated (prose only): "I would not say it is x" and the like: x's `opposite` (None where
  a denial asserts nothing, as for a digit or a score).
- conditional: two branches, no choice: None; with "If I had to choose, C(y)": y's reading.
- retracted: `C(x)` then a retraction: None. restated: a retraction, then `C(y)`: y's reading.
- hedged: `C(x)` and another value named as possible ("but it could be y"): None (an
  abstention stays one: "not sure, but it could be y").
- corrected: `C(x)` then a marked correction ("Actually, C(y)"): y's reading.
- repeated: `C(x)` twice: x's reading; `C(x)` then `C(y)` with nothing between: None.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

NOTHING: Any = None
"""The reading of a reply a careful human reads no answer from (INVALID)."""
HAND_WRITTEN_SHAPES = frozenset(
    {
        *("commitment_conditional", "commitment_corrected", "commitment_hedged", "commitment_negated"),
        *("commitment_restated", "commitment_retracted", "commitment_two_answers", "container_json"),
        *("container_table", "container_tag", "footnote", "numbers", "other_language"),
    }
)
"""The shapes of the hand-written corpora's cases for issue 31's families (each benchmark's
corpus holds some of each, beside its own)."""


@dataclass(frozen=True)
class Expression:
    """One way of writing one answer."""

    text: str
    """As written in the reply ("1", "hallucinated", "−1", "Strong Agreement")."""
    reading: Any
    """What a careful human reads from it."""
    form: str
    """The family of writings it belongs to ("digit", "word-de", "minus-u2212"), for recall."""
    opposite: Any = NOTHING
    """What denying it asserts ("not hallucinated" is factual); NOTHING for a digit, a score."""
    language: str = "en"
    """The language its words are in, for the patterns said in that language."""
    in_words: bool = True
    """Whether it is a word (a denial in prose applies) rather than a number or symbol."""
    abstains: bool = False
    """Whether it is an abstention ("not sure"): naming another answer as possible beside it
    leaves it an abstention ("I'm not sure, but it could be 1")."""


@dataclass(frozen=True)
class Container:
    """Where a reply puts an answer."""

    name: str
    wrap: Callable[[Expression], str | None]
    """The answer in this container, or None when the container cannot hold it (a JSON
    boolean holds only a yes/no verdict)."""
    prose: bool = False
    """Whether the container is a sentence (then a denial can be said around it)."""
    block: bool = False
    """Whether it takes lines of its own (a table, a heading): prose goes on other lines."""


@dataclass(frozen=True)
class Pattern:
    """A commitment pattern: how the reply stands by what it names."""

    name: str
    compose: Callable[[Expression, Expression, Container], tuple[str, Any] | None]
    """(reply, expected reading) for answer x, other answer y in container C; None when the
    pattern does not apply to them."""


@dataclass(frozen=True)
class Noise:
    """Decoration that changes no reading."""

    name: str
    apply: Callable[[str], str]


@dataclass(frozen=True)
class Case:
    """One generated reply and the reading a careful human gives it."""

    reply: str
    expected: Any
    expression: str
    container: str
    pattern: str
    noise: str
    options: dict[str, Any] = field(default_factory=dict)
    """Benchmark options the reading depends on (MedHallu: whether "not sure" was offered)."""

    @property
    def id(self) -> str:
        return f"{self.pattern}|{self.container}|{self.expression}|{self.noise}|{_digest(self.reply)[:8]}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def other(x: Expression, expressions: Sequence[Expression]) -> Expression | None:
    """The alternative answer a two-answer pattern names beside x: the first expression of
    x's form with another reading, else of any form (deterministic, so a case's expected
    reading is stable); never one a human reads nothing from."""
    readable = [e for e in expressions if e.reading != x.reading and e.reading is not NOTHING]
    return next((e for e in readable if e.form == x.form), readable[0] if readable else None)


def compose(
    expressions: Sequence[Expression],
    containers: Sequence[Container],
    patterns: Sequence[Pattern],
    noises: Sequence[Noise],
) -> Iterator[Case]:
    """Every applicable combination, in a fixed order."""
    for pattern in patterns:
        for container in containers:
            for x in expressions:
                y = other(x, expressions)
                if y is None:
                    continue
                made = pattern.compose(x, y, container)
                if made is None:
                    continue
                reply, expected = made
                for noise in noises:
                    yield Case(noise.apply(reply), expected, x.form, container.name, pattern.name, noise.name)


def sample(cases: Iterable[Case], n: int) -> list[Case]:
    """A fixed subset of about `n` cases, spread over every pattern x container (the same
    every run: chosen by a hash of each case, not by a random draw)."""
    groups: dict[tuple[str, str], list[Case]] = defaultdict(list)
    for case in cases:
        groups[(case.pattern, case.container)].append(case)
    per_group = max(1, -(-n // max(1, len(groups))))
    chosen = []
    for key in sorted(groups):
        ranked = sorted(groups[key], key=lambda c: _digest(c.id))
        chosen += ranked[:per_group]
    return chosen


@dataclass
class Outcome:
    """How a reader did on a corpus: precision failures and recall per family."""

    wrong: list[tuple[Case, Any]] = field(default_factory=list)
    """(case, reading) where the reader read an answer other than the composed one."""
    readable: Counter[str] = field(default_factory=Counter)
    recalled: Counter[str] = field(default_factory=Counter)

    def recall(self, family: str) -> float:
        return self.recalled[family] / self.readable[family] if self.readable[family] else 1.0

    def table(self) -> str:
        """Recall per family, one line each (what the precision test prints)."""
        lines = [f"{'family':<40} {'readable':>9} {'read':>9} {'recall':>7}"]
        for family in sorted(self.readable):
            lines.append(
                f"{family:<40} {self.readable[family]:>9} {self.recalled[family]:>9} "
                f"{self.recall(family):>7.1%}"
            )
        return "\n".join(lines)


def judge(cases: Iterable[Case], read: Callable[[Case], Any]) -> Outcome:
    """Read every case: a reading that is neither INVALID nor the composed one is a
    precision failure; recall is counted per pattern, per container and per expression
    form, over the cases a human reads an answer from."""
    outcome = Outcome()
    for case in cases:
        reading = read(case)
        if reading is not NOTHING and reading != case.expected:
            outcome.wrong.append((case, reading))
        if case.expected is NOTHING:
            continue
        for family in (f"pattern {case.pattern}", f"container {case.container}", f"form {case.expression}"):
            outcome.readable[family] += 1
            outcome.recalled[family] += reading == case.expected
    return outcome


def assert_precise(outcome: Outcome, floors: dict[str, float]) -> None:
    """No reply read as another answer than a human reads (the first 20 shown), and recall
    at or above each stated floor (the table shown when not)."""
    wrong = "\n".join(
        f"{c.id}: {c.reply!r} read {r!r}, a human reads {c.expected!r}" for c, r in outcome.wrong[:20]
    )
    assert not outcome.wrong, (
        f"{len(outcome.wrong)} replies read as another answer than a human reads:\n{wrong}"
    )
    low = {f: round(outcome.recall(f), 3) for f, floor in floors.items() if outcome.recall(f) < floor}
    assert not low, f"recall below the stated floor: {low}\n{outcome.table()}"


COMMITMENT_PATTERNS = frozenset({"conditional", "retracted", "negated value", "two answers, unmarked"})
"""The commitment patterns every benchmark's corpus holds besides those with a recall floor
(a human reads no answer from them, so they have none)."""


def assert_covers(
    cases: Sequence[Case],
    floors: dict[str, float],
    size: int,
    expressions: int,
    containers: int,
    more_patterns: Iterable[str] = (),
    nothing: Any = None,
) -> None:
    """A corpus of more than `size` cases holding every pattern with a recall floor, the
    `COMMITMENT_PATTERNS` and `more_patterns`, at least `expressions` answer forms and
    `containers` containers, and more than 10,000 replies a human reads no answer from
    (expected `nothing`)."""
    assert len(cases) > size
    wanted = {p.removeprefix("pattern ") for p in floors}
    assert {c.pattern for c in cases} >= wanted | COMMITMENT_PATTERNS | set(more_patterns)
    assert len({c.expression for c in cases}) >= expressions
    assert len({c.container for c in cases}) >= containers
    assert sum(c.expected is nothing for c in cases) > 10_000


# ------------------------------------------------------------------------------ shared parts


def json_value(x: Expression) -> str:
    """The expression as a JSON value: an integer bare, anything else a string."""
    return x.text if re.fullmatch(r"-?[0-9]+", x.text) else json.dumps(x.text, ensure_ascii=False)


def structured(field: str, key: str, function: str, reason: str) -> list[Container]:
    """The containers every benchmark's answers come in besides its own: a box, an answer
    tag, nested tags, a Markdown label/value row and a column headed by `field`, a JSON
    `key`, a function call `function` with the answer as its `key` argument, a heading."""
    return [
        Container("boxed", lambda x: f"\\boxed{{{x.text}}}"),
        Container("answer tag", lambda x: f"<answer>{x.text}</answer>"),
        Container("nested tags", lambda x: f"<response><{key}>{x.text}</{key}></response>"),
        Container("table row", lambda x: f"| Field | Value |\n|---|---|\n| {field} | {x.text} |", block=True),
        Container(
            "table column", lambda x: f"| {field} | Reason |\n|---|---|\n| {x.text} | {reason} |", block=True
        ),
        Container("json", lambda x: f'{{"{key}": {json_value(x)}}}'),
        Container(
            "function call",
            lambda x: json.dumps(
                {"name": function, "arguments": {key: json.loads(json_value(x))}}, ensure_ascii=False
            ),
        ),
        Container("heading", lambda x: f"## {field}\n\n{x.text}", block=True),
    ]


def plain() -> Pattern:
    return Pattern("plain", lambda x, y, c: _wrapped(c, x, lambda a: (a, x.reading)))


def _wrapped(
    container: Container, x: Expression, make: Callable[[str], tuple[str, Any]]
) -> tuple[str, Any] | None:
    answer = container.wrap(x)
    return None if answer is None else make(answer)


def _two(
    container: Container, x: Expression, y: Expression, make: Callable[[str, str], tuple[str, Any]]
) -> tuple[str, Any] | None:
    first, second = container.wrap(x), container.wrap(y)
    return None if first is None or second is None else make(first, second)


NEGATIONS = {
    "en": (
        "I would not say the answer is {x}.",
        "The answer is anything but {x}.",
        "It is not {x}.",
        "The answer is definitely not {x}.",
        "I don't think it is {x}.",
        "It's far from {x}.",
    ),
    "es": ("La respuesta no es {x}.",),
    "fr": ("La réponse n'est pas {x}.",),
    "de": ("Die Antwort ist nicht {x}.",),
    "pt": ("A resposta não é {x}.",),
    "it": ("La risposta non è {x}.",),
    "zh": ("答案不是{x}。",),
    "ja": ("答えは{x}ではありません。",),
    "ko": ("답변은 {x}이 아닙니다.",),
    "hi": ("उत्तर {x} नहीं है।",),
    "ar": ("الإجابة ليست {x}.",),
    "ru": ("Ответ не {x}.",),
}
"""How each language denies an answer in words."""


def negated() -> Pattern:
    """A denial in prose: the expression's own language, and English."""

    def make(x: Expression, y: Expression, c: Container) -> tuple[str, Any] | None:
        if not c.prose or not x.in_words:
            return None
        templates = NEGATIONS.get(x.language, ()) + NEGATIONS["en"][:1]
        pick = templates[int(_digest(x.text + c.name), 16) % len(templates)]
        return pick.format(x=x.text), x.opposite

    return Pattern("negated", make)


def negated_value() -> Pattern:
    """A number or symbol denied inside its container ("Answer: not 1"): no answer."""

    def make(x: Expression, y: Expression, c: Container) -> tuple[str, Any] | None:
        if x.in_words:
            return None
        answer = c.wrap(Expression(f"not {x.text}", NOTHING, x.form, in_words=False))
        return None if answer is None else (answer, NOTHING)

    return Pattern("negated value", make)


def _branches(c: Container, a: str, b: str) -> str:
    """Two answers under two conditions, inline or (block containers) on lines of their own."""
    if c.block:
        return f"If the cited study exists:\n{a}\n\nIf it does not:\n{b}"
    a, b = a.rstrip("."), b.rstrip(".")  # a sentence container, said inside this sentence
    if int(_digest(a + b), 16) % 2:
        return f"{a} if the cited study exists, {b} otherwise."
    return f"If the cited study exists, {a}; if it does not, {b}."


def conditional() -> Pattern:
    return Pattern("conditional", lambda x, y, c: _two(c, x, y, lambda a, b: (_branches(c, a, b), NOTHING)))


def chosen() -> Pattern:
    return Pattern(
        "conditional, then chosen",
        lambda x, y, c: _two(
            c, x, y, lambda a, b: (f"{_branches(c, a, b)}\nIf I had to choose:\n{b}", y.reading)
        ),
    )


RETRACTIONS = (
    "No, that's wrong.",
    "Scratch that.",
    "I take that back.",
    "Wait, no.",
    "Hmm, that's not right.",
    "Never mind.",
    "Ignore that.",
    "Oops, my mistake.",
    "Nein, das ist falsch.",
    "不对。",
    "No, eso está mal.",
    "Non, c'est faux.",
    "Нет, это неверно.",
)


def _pick(options: Sequence[str], *keys: str) -> str:
    return options[int(_digest("|".join(keys)), 16) % len(options)]


def retracted() -> Pattern:
    return Pattern(
        "retracted",
        lambda x, y, c: _wrapped(c, x, lambda a: (f"{a}\n{_pick(RETRACTIONS, x.text, c.name)}", NOTHING)),
    )


def restated(same: bool) -> Pattern:
    """A retraction, then an answer (the same one again, or the other)."""

    def make(x: Expression, y: Expression, c: Container) -> tuple[str, Any] | None:
        z = x if same else y
        gap = "\n" if c.block else " "
        return _two(c, x, z, lambda a, b: (f"{a}\n{_pick(RETRACTIONS, x.text, c.name)}{gap}{b}", z.reading))

    return Pattern("restated, same" if same else "restated, other", make)


HEDGES = (
    "{a}, but it could be {y}.",
    "{a} or possibly {y}",
    "{a}, though {y} is also possible.",
    "{a}, but it might also be {y}.",
    "{a} (or maybe {y})",
    "{a}; {y} cannot be ruled out.",
)
BLOCK_HEDGES = ("{a}\nBut it could be {y}.", "{a}\nOr possibly {y}.", "{a}\nThough {y} is also possible.")


def hedged() -> Pattern:
    def make(x: Expression, y: Expression, c: Container) -> tuple[str, Any] | None:
        hedges = BLOCK_HEDGES if c.block else HEDGES
        expected = x.reading if x.abstains else NOTHING
        return _wrapped(
            c,
            x,
            lambda a: (
                _pick(hedges, x.text, c.name).format(a=a if c.block else a.rstrip("."), y=y.text),
                expected,
            ),
        )

    return Pattern("hedged", make)


CORRECTIONS = (
    "Actually, {b}",
    "Wait, actually: {b}",
    "Correction: {b}",
    "En realidad, {b}",
    "实际上，{b}",
    "On second thought, {b}",
    "I meant {b}",
    "Let me correct that: {b}",
)


def corrected() -> Pattern:
    def make(x: Expression, y: Expression, c: Container) -> tuple[str, Any] | None:
        mark = _pick(CORRECTIONS, x.text, c.name)
        if c.block:
            mark = mark.replace(", {b}", ":\n{b}").replace(": {b}", ":\n{b}").replace("，{b}", "：\n{b}")
        return _two(c, x, y, lambda a, b: (f"{a}\n{mark.format(b=b)}", y.reading))

    return Pattern("corrected", make)


def repeated(same: bool) -> Pattern:
    def make(x: Expression, y: Expression, c: Container) -> tuple[str, Any] | None:
        z = x if same else y
        return _two(c, x, z, lambda a, b: (f"{a}\n\n{b}", x.reading if same else NOTHING))

    return Pattern("repeated, same" if same else "two answers, unmarked", make)


def patterns() -> list[Pattern]:
    """Every commitment pattern above."""
    return [
        plain(),
        negated(),
        negated_value(),
        conditional(),
        chosen(),
        retracted(),
        restated(same=True),
        restated(same=False),
        hedged(),
        corrected(),
        repeated(same=True),
        repeated(same=False),
    ]


REASONING = (
    "<think>\nThe question and the shown answer were compared with what is known. At first I leaned "
    "one way, then the other; both readings were considered.\n</think>\n"
)


def noises(reasoning: str = REASONING) -> list[Noise]:
    """Decorations that change no reading: none, a reasoning block before (holding its own
    deliberation), a preamble, an explanation after, CRLF line ends and trailing spaces,
    full-width colons, a code fence, a quote block, bullets; and distractors: numbers in an
    explanation, numbered steps before the answer."""
    return [
        Noise(
            "numbers after",
            lambda r: r + "\n\nThe 2 cited trials enrolled 10 and 12 patients; 1 was blinded.",
        ),
        Noise(
            "steps before",
            lambda r: "1. Read the question.\n2. Compare the shown answer with the abstract.\n\n" + r,
        ),
        Noise(
            "bullets", lambda r: "\n".join(f"- {line}" if line.strip() else line for line in r.split("\n"))
        ),
        Noise("none", lambda r: r),
        Noise("reasoning before", lambda r: reasoning + r),
        Noise("preamble", lambda r: "Sure, here is my assessment.\n\n" + r),
        Noise("explanation after", lambda r: r + "\n\nThe cited cohort was compared with the abstract."),
        Noise("crlf and spaces", lambda r: "  " + r.replace("\n", "  \r\n") + "  \n"),
        Noise("full-width colons", lambda r: r.replace(": ", "：").replace(":", "：")),
        Noise("code fence", lambda r: f"```\n{r}\n```"),
        Noise("quote block", lambda r: "\n".join(f"> {line}" for line in r.split("\n"))),
    ]
