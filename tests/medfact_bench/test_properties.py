"""Properties of the MedFact-Bench readers (hypothesis), and the authors' reading checked
against Med-V1's own code on real model outputs.

The authors' rules are restated here from their published code, not imported from the
package under test (ncbi-nlp/Med-V1 @ 9c6c22b207ec5ce93d6955be97034c796919f82e):
- `utils.py` lines 32-48, `parse_llm_output`: `not output` -> None (line 34); the first
  `<score>(.*?)</score>` match, DOTALL (line 38); its group `.strip()`ped (line 41), or ""
  when there is none; `int()` of that, None on ValueError/TypeError (lines 43-46).
- `training/grpo/verl/workers/reward_function/compute_score.py` lines 3-17,
  `is_legitimate_format`: each of the four lower-case tags exactly once (lines 5-9), and
  `re.compile(r'^<think>.*?</think>\\s*<score>.*?</score>$', re.DOTALL).match` (line 13).
The restated regexes are the authors' lazy ones; they only ever see short generated replies
and the 340 real outputs here.

Every property can fail: each compares a reader with an independent statement of what it
must return. Example counts are fixed, examples are derandomized and nothing is replayed
from a local database, so every machine runs the same examples; there is no deadline.
"""

from __future__ import annotations

import json
import re
import string
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from medfact_bench.replies import read_all, read_authors, read_medhal, read_strict
from tests.properties import examples

CHECKS = settings(
    max_examples=examples(300),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
THOROUGH = settings(CHECKS, max_examples=examples(1500))
"""For the equivalences with the authors' code: the readers are fast, and a quirk is often
one character in a near-miss reply, so these draw more examples."""
SCALE = (-2, -1, 0, 1, 2)

# --------------------------------------------------------------------- the authors' code


def parse_llm_output(output: str) -> dict | None:
    """utils.py lines 32-48, restated (rationale and score)."""
    if not output:
        return None
    think_match = re.search(r"<think>(.*?)</think>", output, re.DOTALL)
    score_match = re.search(r"<score>(.*?)</score>", output, re.DOTALL)
    rationale = think_match.group(1).strip() if think_match else ""
    score_str = score_match.group(1).strip() if score_match else ""
    try:
        score = int(score_str)
    except (ValueError, TypeError):
        score = None
    return {"rationale": rationale, "score": score}


def authors_score(output: str) -> int | None:
    """The `authors` convention: parse_llm_output's score when it is on the paper's scale
    (an integer off -2..2 has no label)."""
    parsed = parse_llm_output(output)
    return parsed["score"] if parsed is not None and parsed["score"] in SCALE else None


def is_legitimate_format(prediction: str) -> bool:
    """compute_score.py lines 3-17, restated."""
    if any(prediction.count(tag) != 1 for tag in ("<think>", "</think>", "<score>", "</score>")):
        return False
    return re.compile(r"^<think>.*?</think>\s*<score>.*?</score>$", re.DOTALL).match(prediction) is not None


def strict_score(output: str) -> int | None:
    """The `strict` convention: the format check, then the stripped body exactly one of the
    five scale points as written in the system prompt ('-2', '-1', '0', '1', '2')."""
    if not is_legitimate_format(output):
        return None
    body = re.search(r"<score>(.*?)</score>", output, re.DOTALL).group(1).strip()
    return int(body) if body in {"-2", "-1", "0", "1", "2"} else None


# ----------------------------------------------------------------------------- strategies

TOKENS = [
    "<think>",
    "</think>",
    "<score>",
    "</score>",
    "<THINK>",
    "</SCORE>",
    "<Score>",
    "<thinking>",
    "</reasoning>",
    "\\boxed{",
    "}",
    "Score:",
    "Final score:",
    "Answer:",
    "**",
    "`",
    "\n",
    " ",
    "0",
    "1",
    "2",
    "-1",
    "-2",
    "+2",
    "3",
    "1.5",
    "1.0",
    "or",
    "/",
    "−",
    "٢",
    "_",
    "(Strong Agreement)",
    "é",
    "字",
]
model_text = st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=8)), max_size=40).map("".join),
)
TAG = re.compile(r"<\s*/?\s*(?:think|thinking|reasoning|score)\s*>", re.IGNORECASE)
reasoning = st.text(max_size=120).filter(lambda t: not TAG.search(t))
"""Free reasoning text: anything but a reasoning or score tag (of any case or spacing)."""
blank = st.sampled_from(["", " ", "\n", "\n\n", "\t", " \n ", "\r\n"])
scale = st.sampled_from(SCALE)

# Unicode decimal digit families int() accepts (ASCII, Arabic-Indic, Devanagari, Bengali, fullwidth).
DIGIT_FAMILIES = (0x30, 0x660, 0x966, 0x9E6, 0xFF10)
WHITESPACE = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\u00a0", "\u2003", "\u3000"]


@st.composite
def int_like(draw) -> str:
    """A score body in the shapes int() may or may not accept: a sign, leading zeros,
    underscores (well or badly placed), Unicode digits and surrounding whitespace. Most are
    on the scale or next to it, so the readers' answers differ from INVALID often."""
    if draw(st.booleans()):  # one quirk at a time, on the scale
        return draw(st.sampled_from(["", "", "+", "-", "−", "0"])) + draw(st.sampled_from("0123٢２"))
    sign = draw(st.sampled_from(["", "", "", "+", "-", "-", "−", "--", "+-"]))
    digits = draw(
        st.one_of(st.sampled_from(["0", "1", "2", "3", "00", "01", "02"]), st.text("0123456789", max_size=5))
    )
    family = draw(st.sampled_from((0x30, 0x30, 0x30, *DIGIT_FAMILIES)))
    digits = "".join(chr(family + int(d)) for d in digits)
    if digits and draw(st.integers(0, 3)) == 0:
        at = draw(st.integers(0, len(digits)))
        digits = digits[:at] + draw(st.sampled_from(["_", "__", "."])) + digits[at:]
    pad = st.lists(st.sampled_from(WHITESPACE), max_size=3).map("".join)
    return draw(pad) + sign + digits + draw(st.sampled_from(["", "", "", "", ".0", "x", " 1"])) + draw(pad)


@st.composite
def reply_around(draw, body: st.SearchStrategy[str]) -> str:
    """A reply holding a score block with `body` (tags of any case), with arbitrary text
    (tags included) before and after it."""
    tag = draw(st.sampled_from(["score", "score", "SCORE", "Score"]))
    opening, closing = f"<{tag}>", draw(st.sampled_from([f"</{tag}>", "</score>"]))
    return draw(model_text) + opening + draw(body) + closing + draw(model_text)


@st.composite
def two_blocks(draw) -> str:
    """Two score blocks, either maybe inside a think block: which one a reader takes shows."""
    first, second = draw(int_like()), draw(int_like())
    gap = draw(st.sampled_from(["", " ", "</think>", "\n", " then "]))
    opening = draw(st.sampled_from(["", "<think>"]))
    return f"{opening}<score>{first}</score>{gap}<score>{second}</score>{draw(blank)}"


@st.composite
def near_exact(draw) -> str:
    """The exact format, or one small step away from it: text or blanks before `<think>`,
    a bad score body, extra newlines or text at the end, a second tag."""
    lead = draw(st.sampled_from(["", "", "", " ", "\n", "x"]))
    think = draw(st.one_of(reasoning, st.sampled_from(["<think>", "<score>1</score>", "</score>"])))
    end = draw(st.sampled_from(["", "", "\n", "\n\n", " ", "x", "<score>1</score>"]))
    return f"{lead}<think>{think}</think>{draw(blank)}<score>{draw(int_like())}</score>{end}"


# ------------------------------------------------------------------------------ properties


@CHECKS
@given(model_text)
def test_readers_never_raise_and_strict_implies_the_others(text):
    """Any text: each reader returns INVALID or a point of the scale, and a reply in the
    exact format (strict reads it) reads the same under medhal and the authors' rule."""
    readings = read_all(text)
    assert readings == {
        "medhal": read_medhal(text),
        "authors": read_authors(text),
        "strict": read_strict(text),
    }
    assert all(v is None or (type(v) is int and v in SCALE) for v in readings.values()), readings
    if readings["strict"] is not None:
        assert readings["medhal"] == readings["authors"] == readings["strict"]


@CHECKS
@given(reasoning, scale, blank, blank, st.sampled_from(["", "\n"]))
def test_exact_format_reads_back_under_all_three(think, value, gap, pad, end):
    """Any -2..2 score written in the format the prompt asks for, whatever the reasoning
    says (short of a tag), the whitespace between the blocks and around the score, and one
    final newline: every convention reads that score."""
    reply = f"<think>{think}</think>{gap}<score>{pad}{value}{pad}</score>{end}"
    assert read_all(reply) == {"medhal": value, "authors": value, "strict": value}


@CHECKS
@given(reasoning, st.integers().filter(lambda v: v not in SCALE), blank)
def test_a_score_off_the_scale_is_invalid_under_all_three(think, value, pad):
    """An integer outside -2..2 has no label in the paper, however it is written."""
    reply = f"<think>{think}</think>\n<score>{pad}{value}{pad}</score>"
    assert read_all(reply) == {"medhal": None, "authors": None, "strict": None}


@CHECKS
@given(reasoning, scale, model_text)
def test_the_authors_take_the_first_score_block(before, value, rest):
    """Whatever follows the first `<score>n</score>` (more blocks, tags, text), the authors'
    reading is n (utils.py line 38: `re.search`, the first match)."""
    assert read_authors(f"{before}<score>{value}</score>{rest}") == value


SIGNS = {2: ["", "+"], 1: ["", "+"], 0: ["", "+", "-"], -1: ["-", "−"], -2: ["-", "−"]}
WRAPPERS = [
    ("", ""),
    ("**", "**"),
    ("*", "*"),
    ("***", "***"),
    ("__", "__"),
    ("`", "`"),
    ("'", "'"),
    ('"', '"'),
    ("(", ")"),
    ("[", "]"),
    ("**(", ")**"),
]
EXPLANATION = st.text(alphabet=string.ascii_letters + " ,;:!?()/'-", max_size=40)
"""What models write after the number: words and punctuation, no digit (a second number
would make the body ambiguous: `1 or 2`, `1/2`)."""


SCALE_WORDS = {
    2: "Strong Agreement",
    1: "Partial Agreement",
    0: "Neutral / Unrelated",
    -1: "Partial Contradiction",
    -2: "Strong Contradiction",
}
"""Each point of the scale in the prompt's words."""


@st.composite
def decorated(draw, value: int) -> str:
    sign = draw(st.sampled_from(SIGNS[value]))
    number = f"{sign}{abs(value)}{draw(st.sampled_from(['', '', '.0', '.00']))}"
    opening, closing = draw(st.sampled_from(WRAPPERS))
    words = SCALE_WORDS[value]  # the scale's own words for this point (other words: see below)
    explanation = draw(st.sampled_from(["", f" ({words})", f" - {words}", f" {words}"]))
    explanation += draw(st.one_of(st.just(""), EXPLANATION.map(lambda t: " " + t)))
    return f"{draw(blank)}{opening}{number}{closing}{explanation}{draw(blank)}"


@CHECKS
@given(
    st.data(),
    reasoning,
    scale,
    st.sampled_from(["score", "Score", "SCORE", " score "]),
    blank,
    st.sampled_from(["", "\n", "\nI hope this helps.", " (on the -2..2 scale)"]),
)
def test_any_decoration_of_the_score_reads_back_under_medhal(data, think, value, tag, gap, after):
    """The score body decorated as models write it (markdown emphasis, quotes, brackets, a
    sign, a `.0`, the scale's own words or any explanation after it), in a tag of any case,
    with text after the block: medhal reads the score."""
    body = data.draw(decorated(value))
    reply = f"<think>{think}</think>{gap}<{tag}>{body}</{tag}>{after}"
    assert read_medhal(reply) == value, (reply, body)


@CHECKS
@given(reasoning, scale, scale, st.sampled_from(["{n} ({w})", "{n} - {w}", "{w} ({n})", "**{n}** {w}"]))
def test_a_number_and_scale_words_that_disagree_are_no_score(think, value, other, shape):
    """A number with the scale's words for another point names two scores: no score under
    medhal (the same words for the same point read as that point)."""
    body = shape.format(n=value, w=SCALE_WORDS[other])
    reply = f"<think>{think}</think><score>{body}</score>"
    assert read_medhal(reply) == (value if value == other else None), reply


@THOROUGH
@given(st.one_of(model_text, reply_around(int_like()), reply_around(st.text(max_size=20)), two_blocks()))
def test_authors_reading_is_parse_llm_output(text):
    """The `authors` reader equals Med-V1's parse_llm_output (restated above) kept on the
    scale: first block, case-sensitive tags, think block included, int()'s rules for signs,
    leading zeros, underscores, Unicode digits and whitespace."""
    assert read_authors(text) == authors_score(text)


@THOROUGH
@given(st.one_of(model_text, near_exact(), near_exact(), two_blocks()))
def test_strict_reading_is_the_authors_format_check(text):
    assert read_strict(text) == strict_score(text)


@pytest.mark.parametrize(
    "body, value",
    [
        ("+2", 2),
        ("-0", 0),
        ("002", 2),
        ("\u0661", 1),
        ("\uff12", 2),
        ("1_0", None),
        ("0_1", 1),
        (" \u2003-1\n", -1),
        ("1.0", None),
        ("2 (Strong Agreement)", None),
        ("1__0", None),
        ("_1", None),
    ],
)
def test_int_quirks_of_the_authors_reading(body, value):
    """int() accepts a sign, leading zeros, Unicode decimal digits and single underscores
    between digits ('1_0' is 10, off the scale; '0_1' is 1); not a decimal point or words."""
    reply = f"<think>x</think><score>{body}</score>"
    assert authors_score(reply) == value  # the restated oracle agrees with the table ...
    assert read_authors(reply) == value  # ... and so does the reader


# ---------------------------------------------------------------- real Med-V1 outputs


def test_real_med_v1_outputs(shared_data):
    """The 340 raw outputs of Med-V1-L3B on the example inputs (shared data). Under
    `authors` every reply reads exactly as Med-V1's parse_llm_output reads it.

    Reading them shows why medhal and strict read them the same way: every one is exactly
    `<think>…</think>\\n<score>n</score>` (one of each tag, the reply starts with `<think>`
    and ends with `</score>`, a single newline between the blocks, n one of -2..2), so no
    reply differs under medhal (0 of 340) or strict (0 of 340). Counting the score blocks
    in the file by hand (`grep -o '<score>[^<]*</score>' | sort | uniq -c`): 125 zeros,
    91 twos, 65 minus twos, 51 ones and 8 minus ones."""
    path = shared_data / "medfact/medv1_l3b_outputs.jsonl"
    outputs = [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
    assert len(outputs) == 340
    assert [o["idx"] for o in outputs] == list(range(340))
    replies = [o["raw_output"] for o in outputs]
    authors = [read_authors(r) for r in replies]
    assert authors == [parse_llm_output(r)["score"] for r in replies]  # no reply off the scale, none unread
    assert Counter(authors) == {0: 125, 2: 91, -2: 65, 1: 51, -1: 8}
    differ_medhal = [i for i, r in enumerate(replies) if read_medhal(r) != authors[i]]
    differ_strict = [i for i, r in enumerate(replies) if read_strict(r) != authors[i]]
    assert (len(differ_medhal), len(differ_strict)) == (0, 0), (differ_medhal, differ_strict)
    assert all(is_legitimate_format(r) for r in replies)
