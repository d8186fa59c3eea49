"""Property-based tests (hypothesis) of the three MedHallu readers.

- Arbitrary text never raises, and every reading is a label, an abstention only when
  allowed, or INVALID (None).
- Round trips that can fail: any decoration or reasoning-block wrapping of a bare digit
  (with or without an explanation after it) reads back that digit under `medhal`; the
  native format (one leading reasoning block, a bare or boxed digit) under `strict`; a
  second reasoning block or decoration makes `strict` INVALID; a verdict left inside an
  unclosed or closed reasoning block is never the answer; two different digits with
  nothing to choose between them are INVALID.
- `authors` equals the authors' rule restated here (their script, lines 78-85) and the
  independent oracle in tests/medhallu/authors_oracle.py.

Example counts are fixed, examples are derandomized and there is no deadline, so the
suite is bounded and not timing-sensitive. Linear time is a property of the code (no
nested quantifiers), not something asserted by timing here.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from medhal.kit.assets import AssetError
from medhallu.prompts import extract_prompts
from medhallu.replies import CONVENTIONS, read_all, read_authors, read_medhal, read_strict
from medhallu.scoring import score
from tests.medhallu.authors_oracle import authors_reading
from tests.properties import examples

F, H, N = "factual", "hallucinated", "not_sure"
DIGIT_LABEL = {0: F, 1: H, 2: N}

PROPERTY = settings(
    max_examples=examples(300),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# Text that looks like model output: prose, tags, boxes, labels, digits, negations, unicode.
TOKENS = [
    "<think>",
    "</think>",
    "<THINK>",
    "</Thinking>",
    "<reasoning>",
    "</reasoning>",
    "\\boxed{",
    "}",
    "{",
    "$",
    "\\text{",
    "Answer:",
    "Final answer:",
    "Digit:",
    "Verdict -",
    "Hallucination:",
    "Factual:",
    "yes",
    "no",
    "No,",
    "0",
    "1",
    "2",
    "10",
    "0.5",
    "1.",
    "2.",
    "(1)",
    "**",
    "__",
    "`",
    "```",
    "#",
    ">",
    "\n",
    " ",
    ",",
    ".",
    ";",
    ":",
    "not",
    "non",
    "n't",
    "never",
    "without",
    "free of",
    "hallucinated",
    "hallucination",
    "factual",
    "non-factual",
    "correct",
    "incorrect",
    "is",
    "the answer",
    "might",
    "probably",
    "therefore",
    "in conclusion",
    "not sure",
    "unsure",
    "I don't know",
    "cannot determine",
    "pass",
    "skip",
    "or",
    "/",
    "either",
    "Respuesta:",
    "é",
    "字",
    "\x00",
]
model_text = st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=8)), max_size=40).map("".join),
)
no_tags = st.text(
    alphabet=st.characters(blacklist_characters="<>", blacklist_categories=("Cs",)), max_size=80
)


# ------------------------------------------------------------------------ never raises


@PROPERTY
@given(model_text, st.booleans())
def test_arbitrary_text_never_raises(text, offered):
    readings = read_all(text, offered)
    assert set(readings) == set(CONVENTIONS)
    assert readings["medhal"] in (F, H, N, None) and readings["strict"] in (F, H, N, None)
    assert readings["authors"] in (F, H, N)  # the authors' rule never gives INVALID
    if not offered:
        assert readings["medhal"] != N and readings["strict"] != N


class _Item:
    answer_vocabulary = "digits"

    def __init__(self, label, parser, offered, not_sure_reward):
        self.label, self.parser, self.not_sure_offered, self.not_sure_reward = (
            label,
            parser,
            offered,
            not_sure_reward,
        )
        self.invalid_reward = 0.0
        self.binary_reward = False


@PROPERTY
@given(model_text, st.sampled_from([F, H]), st.sampled_from(CONVENTIONS), st.booleans())
def test_scoring_arbitrary_text_never_raises(text, gold, parser, offered):
    scored = score(_Item(gold, parser, offered, 0.5 if offered else 0.0), text)
    assert all(v in (0.0, 1.0) for k, v in scored.metrics.items() if k != "detection_reward")
    assert scored.metrics["detection_reward"] in (0.0, 0.5, 1.0)
    assert scored.metrics["correct"] <= scored.metrics["parsed"]
    assert scored.info["pred_label"] == scored.info["readings"][parser]


@PROPERTY
@given(model_text, st.booleans())
def test_offering_not_sure_only_adds_abstentions(text, offered):
    """Not offering "not sure" turns an abstention into INVALID and changes nothing else."""
    for reader in (read_medhal, read_strict):
        with_option, without = reader(text, True), reader(text, False)
        assert without == (None if with_option == N else with_option)
    assert read_authors(text, True) == read_authors(text, False)


def test_long_hostile_replies_are_read():
    """Large inputs of repeated openers (no timing asserted: this only shows they are read
    without recursion or errors)."""
    for reply in (
        "<think>" * 20_000,
        "not " * 20_000,
        "\\boxed{" * 20_000,
        "{" * 50_000,
        "1. " * 20_000,
        "Answer: " * 20_000,
        "a, " * 30_000 + "hallucinated",
        "</think>" * 20_000 + "1",
    ):
        readings = read_all(reply, True)
        assert readings["medhal"] in (F, H, N, None) and readings["authors"] in (F, H, N)
    assert read_medhal("</think>" * 20_000 + "1", True) == H


# -------------------------------------------------------------- medhal: digit round trips

DECORATIONS = [
    "{d}",
    "**{d}**",
    "*{d}*",
    "__{d}__",
    "`{d}`",
    "({d})",
    "'{d}'",
    '"{d}"',
    "# {d}",
    "> {d}",
    "```\n{d}\n```",
    "\\boxed{{{d}}}",
    "$\\boxed{{{d}}}$",
    "\\boxed{{\\text{{{d}}}}}",
    "\\boxed{{\\mathrm{{{d}}}}}",
    "\\boxed{{ {d} }}",
    "Answer: {d}",
    "answer:{d}",
    "Final answer: {d}",
    "Digit: {d}",
    "Your Judgement: {d}",
    "Judgment: **{d}**",
    "Verdict: {d}",
    "Output: {d}",
    "Label: {d}",
    "**Answer:** {d}",
    "Final answer: \\boxed{{{d}}}",
    "Answer:\n{d}",
    "The answer is {d}",
    "Final answer is {d}",
    "My verdict is **{d}**",
]
"""A bare digit as models decorate or label it."""
LAST_LINE_LABELS = ["Respuesta: {d}", "Antwort: {d}", "Réponse : {d}", "Ответ: {d}"]
"""`<word(s)>: <digit>` in any language: an answer when it is the last line."""

NEUTRAL_WORDS = [
    "the",
    "trial",
    "mechanism",
    "patients",
    "study",
    "was",
    "small",
    "dose",
    "weeks",
    "enrolled",
    "invented",
    "claim",
]
SEPARATORS = ["", ".", " -", " –", ",", "!", "\n", "\n\n"]


def reasoning_block(draw_case, tag: str, content: str) -> str:
    name = draw_case(tag)
    return f"<{name}>{content}</{name}>"


@st.composite
def reasoning_prefix(draw, max_blocks: int = 3) -> str:
    """Zero or more reasoning blocks (any tag, any letter case, any tag-free content), or a
    closing tag alone (the block was opened by the chat template), with blanks between."""

    def case(tag: str) -> str:
        return draw(st.sampled_from([tag, tag.upper(), tag.capitalize()]))

    blocks = []
    for _ in range(draw(st.integers(0, max_blocks))):
        tag = draw(st.sampled_from(["think", "thinking", "reasoning"]))
        if draw(st.booleans()) or blocks:
            blocks.append(reasoning_block(case, tag, draw(no_tags)))
        else:
            blocks.append(f"{draw(no_tags)}</{case(tag)}>")
        blocks.append(draw(st.sampled_from(["", "\n", "\n\n", " "])))
    return "".join(blocks)


@st.composite
def explanation(draw, words: list[str]) -> str:
    """Text after the verdict: a separator, then words (no digits, labels or colons)."""
    text = " ".join(draw(st.lists(st.sampled_from(words), min_size=1, max_size=12)))
    return draw(st.sampled_from(SEPARATORS)) + " " + text + draw(st.sampled_from(["", ".", "!"]))


@PROPERTY
@given(
    st.sampled_from([0, 1, 2]),
    st.booleans(),
    st.sampled_from(DECORATIONS),
    reasoning_prefix(),
    st.sampled_from(["", " ", "\n", "  \n"]),
    st.sampled_from(["", " ", "\n", "\n\n"]),
)
def test_medhal_reads_back_a_wrapped_digit(digit, offered, decoration, prefix, before, after):
    reply = f"{prefix}{before}{decoration.format(d=digit)}{after}"
    expected = DIGIT_LABEL[digit]
    assert read_medhal(reply, offered) == (None if expected == N and not offered else expected), reply


@PROPERTY
@given(st.sampled_from([0, 1]), st.sampled_from(DECORATIONS), reasoning_prefix(), st.data())
def test_medhal_digit_verdict_with_explanation(digit, decoration, prefix, data):
    """A reply that is a verdict followed by an explanation in neutral words reads as the
    verdict. The explanation is set off by punctuation or a line break: a digit followed
    by a word ("2 trials were cited") is a number of something, not a verdict."""
    explained = data.draw(explanation(NEUTRAL_WORDS).filter(lambda e: not e.startswith(" ")))
    reply = f"{prefix}{decoration.format(d=digit)}{explained}"
    assert read_medhal(reply, True) == DIGIT_LABEL[digit], reply


@PROPERTY
@given(st.sampled_from([0, 1]), st.sampled_from(DECORATIONS), reasoning_prefix(), st.sampled_from(SEPARATORS))
def test_medhal_a_digit_that_a_sentence_contradicts_is_no_verdict(digit, decoration, prefix, gap):
    """A digit, boxed, labelled or bare, then a sentence stating the other verdict ("Answer:
    0\n\nThe answer is hallucinated."): the reply names two answers and marks neither as
    its correction: INVALID (precision first; issue 31)."""
    other = "hallucinated" if digit == 0 else "factual"
    reply = f"{prefix}{decoration.format(d=digit)}{gap} The answer is {other}."
    assert read_medhal(reply, True) is None, reply


@PROPERTY
@given(st.sampled_from([0, 1, 2]), st.sampled_from(LAST_LINE_LABELS), reasoning_prefix(), st.data())
def test_medhal_last_line_label_in_any_language(digit, label, prefix, data):
    lead = " ".join(data.draw(st.lists(st.sampled_from(NEUTRAL_WORDS), max_size=8)))
    reply = f"{prefix}{lead}\n{label.format(d=digit)}"
    assert read_medhal(reply, True) == DIGIT_LABEL[digit], reply


@PROPERTY
@given(
    st.sampled_from([0, 1, 2]),
    st.sampled_from(DECORATIONS),
    no_tags,
    st.sampled_from(["think", "THINKING", "Reasoning"]),
    st.booleans(),
)
def test_verdict_inside_an_unclosed_block_is_invalid(digit, decoration, thinking, tag, answered_before):
    """An opening tag never closed (after the last closing one) means the model never answered."""
    earlier = f"<think>x</think>{decoration.format(d=digit)}\n" if answered_before else ""
    reply = f"{earlier}<{tag}>{thinking} {decoration.format(d=digit)}"
    assert read_medhal(reply, True) is None and read_strict(reply, True) is None, reply


@PROPERTY
@given(
    st.sampled_from([0, 1, 2]),
    st.sampled_from(DECORATIONS),
    no_tags,
    st.lists(st.sampled_from(NEUTRAL_WORDS), max_size=10),
)
def test_verdict_only_inside_reasoning_does_not_count(digit, decoration, thinking, after):
    reply = f"<think>{thinking} {decoration.format(d=digit)}</think>{' '.join(after)}"
    assert read_medhal(reply, True) is None, reply


@PROPERTY
@given(
    st.sampled_from([(0, 1), (1, 0)]),
    st.sampled_from([" or ", "/", " / ", " | ", " OR "]),
    st.sampled_from(["{d}", "**{d}**", "`{d}`", "Answer: {d}"]),
    reasoning_prefix(max_blocks=1),
)
def test_two_digits_with_nothing_to_choose_are_invalid(digits, joiner, decoration, prefix):
    first, second = digits
    second_text = "{d}" if decoration.startswith("Answer") else decoration
    reply = f"{prefix}{decoration.format(d=first)}{joiner}{second_text.format(d=second)}"
    assert read_medhal(reply, True) is None, reply


# ------------------------------------------------------------------------------- strict


@PROPERTY
@given(
    st.sampled_from([0, 1, 2]),
    st.booleans(),
    st.one_of(st.just(""), no_tags),
    st.sampled_from(["think", "THINK", "Thinking", "reasoning"]),
    st.booleans(),
    st.sampled_from(["{d}", "\\boxed{{{d}}}", "\\boxed{{ {d} }}", "\\boxed{{{d} }}"]),
    st.sampled_from(["", " ", "\n", "\n\n", " \t\n"]),
    st.sampled_from(["", " ", "\n", "\n\n"]),
)
def test_strict_reads_the_native_format(digit, offered, thinking, tag, with_block, form, gap, tail):
    block = f"{gap}<{tag}>{thinking}</{tag}>" if with_block else ""
    reply = f"{block}{gap}{form.format(d=digit)}{tail}"
    expected = DIGIT_LABEL[digit]
    assert read_strict(reply, offered) == (None if expected == N and not offered else expected), reply


@PROPERTY
@given(
    st.sampled_from([0, 1, 2]),
    no_tags,
    no_tags,
    st.sampled_from(["**{d}**", "({d})", "{d}.", "Answer: {d}", "Digit: {d}", "'{d}'", "$\\boxed{{{d}}}$"]),
)
def test_strict_refuses_more_than_the_native_format(digit, first, second, decorated):
    assert (
        read_strict(f"<think>{first}</think><think>{second}</think>{digit}", True) is None
    )  # one block only
    assert (
        read_strict(f"{first}</think>{digit}", True) is None
    )  # a closing tag alone is not the native format
    assert read_strict(f"<think>{first}</think>{decorated.format(d=digit)}", True) is None
    assert read_strict(f"{digit} <think>{first}</think>", True) is None


# ------------------------------------------------------------------------------ authors


def authors_rule(reply: str | None) -> str:
    """The authors' rule restated (detection_vllm_notsurecase.py @ 3c49c8b, lines 78-85, on
    the reply as collected: `.strip()`, line 246): the first rule whose substrings occur
    in the lower-cased reply decides."""
    text = (reply or "").strip().lower()
    rules = ((("1", "not", "non"), H), (("not sure", "pass", "skip", "2"), N))
    for substrings, label in rules:
        if any(s in text for s in substrings):
            return label
    return F


AUTHORS_TOKENS = [
    "1",
    "2",
    "not",
    "NOT",
    "non",
    "Non",
    "not sure",
    "pass",
    "PASS",
    "skip",
    "none",
    "cannot",
    "another",
    "note",
    "0",
    "sure",
    "factual",
    "hallucinated",
    " ",
    "\n",
    "\t",
    "<think>",
    "</think>",
]


@PROPERTY
@given(
    st.one_of(
        model_text,
        st.lists(st.sampled_from(AUTHORS_TOKENS), max_size=10).map("".join),
        st.text(alphabet="12nNotOTpaskiP \n", max_size=20),
    ),
    st.booleans(),
)
def test_authors_is_the_authors_rule(text, offered):
    assert read_authors(text, offered) == authors_rule(text) == authors_reading(text), repr(text)


def test_authors_rule_restatement_examples():
    # the restatement itself, on hand-checked cases
    assert [
        authors_rule(r) for r in ("not sure", "Pass", "unsure", "", "None", " 2 ", "0", "<think>1</think>0")
    ] == [
        H,
        N,
        F,
        F,
        H,
        N,
        F,
        H,
    ]


# --------------------------------------------------------------------- prompt asset


@PROPERTY
@given(model_text)
def test_prompt_asset_parser_raises_only_asset_error(text):
    try:
        extract_prompts(text, "asset.py")
    except AssetError as e:
        assert str(e).startswith("asset.py")
