"""Reading a MedHallu verdict under the three conventions (medhal, authors, strict), on
every reply shape real models produce, and what a reading earns.

Expected labels are written by hand from the spec (plan: conventions.md, MedHallu) and,
for `authors`, from the authors' script (`Detection/detection_vllm_notsurecase.py` @
3c49c8b, lines 78-85: any '1'/'not'/'non' -> 1, else any 'not sure'/'pass'/'skip'/'2' ->
2, else 0, on the stripped, lower-cased raw reply).
"""

from __future__ import annotations

import pytest

from medhal.kit.replies import answer_text
from medhallu.replies import (
    CONVENTIONS,
    FACTUAL,
    HALLUCINATED,
    LABELS,
    NOT_SURE,
    READERS,
    read_all,
    read_authors,
    read_medhal,
    read_strict,
)
from medhallu.scoring import gold_reply, reward, score, wrong_reply

F, H, N, INVALID = FACTUAL, HALLUCINATED, NOT_SURE, None


def test_constants_and_registry():
    assert (F, H, N) == ("factual", "hallucinated", "not_sure")
    assert LABELS == ("factual", "hallucinated")
    assert CONVENTIONS == ("medhal", "authors", "strict")
    assert {"medhal": read_medhal, "authors": read_authors, "strict": read_strict} == READERS


# ----------------------------------------------------------------- the issue's table (#9)

ISSUE_TABLE = [
    ("\\boxed{1}", H),
    ("Final answer: \\boxed{0}", F),
    ("Digit: 1", H),
    ("No hallucination detected.", F),
    ("The answer isn't hallucinated.", F),
    ("Hallucination: No", F),
    ("This answer does not contain hallucinations.", F),
    (
        (
            "1. The question asks whether brisk walking lowers resting blood pressure. "
            "2. The answer matches the abstract. Therefore the answer is factual."
        ),
        F,
    ),
    ("0 or 1", INVALID),
]


@pytest.mark.parametrize(("reply", "label"), ISSUE_TABLE)
def test_issue_table_reads_as_a_human_reads_it(reply, label):
    assert read_medhal(reply, True) == label
    assert read_medhal(reply, False) == label  # none of them is an abstention


# ------------------------------------------------------------------------------ medhal

MEDHAL_SHAPES = [
    # bare digits and punctuation
    ("0", F),
    ("1", H),
    ("2", N),
    ("0.", F),
    ("1.\n", H),
    ("  1  ", H),
    ("'1'", H),
    ('"0"', F),
    ("`0`", F),
    ("**1**", H),
    ("__1__", H),
    ("(1)", H),
    ("# 1", H),
    ("> 0", F),
    ("```\n1\n```", H),
    # 1. the last \boxed{}, content unwrapped
    ("\\boxed{\\text{1}}", H),
    ("\\boxed{\\mathrm{0}}", F),
    ("\\boxed{$1$}", H),
    ("$\\boxed{0}$", F),
    ("\\boxed{ 1 }", H),
    ("\\boxed{\\text{hallucinated}}", H),
    ("\\boxed{\\text{factual}}", F),
    ("First I thought \\boxed{0}, but the trial size is invented: \\boxed{1}", H),
    # 2. labelled answers (the last one wins)
    ("Answer: 1", H),
    ("answer:0", F),
    ("Final answer: 0", F),
    ("Verdict: 1", H),
    ("Judgement: 0", F),
    ("Judgment: 1", H),
    ("Output: 0", F),
    ("Digit: 1", H),
    ("Classification: 1", H),
    ("Label: 0", F),
    ("Prediction: 1", H),
    ("Your Judgement: 0", F),
    ("Judgment: **1**", H),
    ("Final verdict: 0", F),
    ("Final answer: 2", N),
    ("Verdict - 0", F),
    ("**Answer:** 1", H),
    ("**Final Answer:** **0**", F),
    ("Answer:\n1", H),
    ("Answer:\n\n**0**", F),
    ("Answer: hallucinated", H),
    ("Verdict: factual", F),
    ("Final answer: not hallucinated", F),
    ("The knowledge is thin.\nAnswer: 0\nOn second thought the trial size is invented.\nFinal answer: 1", H),
    ("After checking the numbers, the answer is 1.", H),
    ("Hallucination: yes", H),
    ("Hallucination: no", F),
    ("Hallucinated: yes", H),
    ("Hallucinated: no", F),
    ("Factual: yes", F),
    ("Factual: no", H),
    # a last line `<word(s)>: <digit>` in any language
    ("Respuesta: 1", H),
    ("Antwort: 0", F),
    ("Réponse : 1", H),
    # 3. a reply that IS a verdict, optionally explained; never a numbered list
    ("1 (hallucinated)", H),
    ("0 (factual)", F),
    ("2 (not sure)", N),
    ("0\n\nThe answer agrees with the knowledge; nothing is hallucinated.", F),
    ("1 - the mechanism is invented", H),
    ("1) The question asks about recovery. 2) The answer invents a trial. So the answer is hallucinated.", H),
    # 4. word verdicts, negation scope, hedges, concluding sentences
    ("factual", F),
    ("Factual.", F),
    ("Hallucinated", H),
    ("Hallucinated.", H),
    ("The answer is hallucinated.", H),
    ("It is a hallucination.", H),
    ("This is a hallucination.", H),
    ("The response is a hallucination.", H),
    ("The answer contains hallucinations.", H),
    ("It contains hallucination.", H),
    ("Non-factual", H),
    ("nonfactual", H),
    ("The answer is not factual.", H),
    ("The answer is fabricated.", H),
    ("The answer is incorrect.", H),
    ("The answer is inaccurate.", H),
    ("The answer is false.", H),
    ("The answer is factual.", F),
    ("The answer is factually correct.", F),
    ("The answer is accurate.", F),
    ("The answer is correct.", F),
    ("Not hallucinated.", F),
    ("non-hallucinated", F),
    ("The answer is not a hallucination.", F),
    ("No hallucinations found.", F),
    ("No hallucination present.", F),
    ("The answer is free of hallucinations.", F),
    ("The answer is written without hallucination.", F),
    ("There are no hallucinations.", F),
    ("The answer might be hallucinated.", H),
    ("The answer is probably factual.", F),
    ("At first it looks hallucinated. Therefore the answer is factual.", F),
    ("The answer is factual. Thus, the answer is hallucinated.", H),
    ("In conclusion, the answer is hallucinated. Earlier I said it is factual.", H),
    # A verdict turned into doubt by "though"/"but" ("1, but I am not sure", mh-285): an
    # abstention (issue 31: before, a definite verdict ranked above the doubt that follows it).
    ("The answer is hallucinated, though I am not sure.", N),
    # 5. abstention (offered)
    ("not sure", N),
    ("Not sure.", N),
    ("unsure", N),
    ("I'm uncertain about this one.", N),
    ("I don't know", N),
    ("I do not know.", N),
    ("It cannot be determined.", N),
    ("I cannot determine this.", N),
    ("I can't tell.", N),
    ("Pass", N),
    ("skip", N),
    ("Not sure whether it is factual", N),
    ("I am not sure; it might be hallucinated.", N),  # abstention > hedged verdict
    # reasoning blocks
    ("<think>The knowledge says 14% vs 9%, so 1 looks wrong.</think>0", F),
    ("<think>Let me weigh 0 against 1.</think>\n\nAnswer: 1", H),
    ("<think>a</think><think>b</think>hallucinated", H),
    ("<think>a</think>b</think>1", H),
    ("Reasoning that a template opened for us.</think>\n1", H),
    ("</think>0", F),
    ("<THINK>upper case tags</THINK> 0", F),
    ("<Think>x</Think>1", H),
    ("<thinking>x</thinking>1", H),
    ("<REASONING>x</REASONING>0", F),
    ("<think>Answer: 1</think>The answer is factual.", F),
]

MEDHAL_INVALID = [
    "",
    "   ",
    "<think>I think the answer is 1",  # unclosed reasoning: never answered
    "<think>done</think>",  # nothing after the reasoning
    "<thinking>x</thinking>",
    "<think>The answer is hallucinated.</think>",  # a verdict only inside the reasoning
    "<think>a</think>1<think>b",  # re-opened after the last closing tag
    "0.5",
    "10",
    "3",
    "The study enrolled 40 patients.",
    "I cannot answer medical questions.",
    "Sure! Here is a poem about the sea.",
    # two definite verdicts with nothing to choose between them
    "0 or 1",
    "1 or 0",
    "0/1",
    "It is either factual or hallucinated",
    "The answer is hallucinated. The answer is factual.",
    # verdict words doubted or denied without an alternative
    "I'm not sure hallucination is the right word.",
    "Das ist nicht unbedingt halluziniert.",
]

MEDHAL_FOREIGN_WORDS = [
    # Verdict words in other languages are read (issue 31; before, INVALID without a digit).
    ("Alucinado", H),
    ("Halluziniert", H),
    ("Faktisch", F),
    ("虚构", H),
    ("Nicht faktisch.", H),
    ("答案：不是幻觉", F),
    ("Réponse : hallucinée", H),
]


@pytest.mark.parametrize(("reply", "label"), MEDHAL_FOREIGN_WORDS)
def test_medhal_reads_verdict_words_in_other_languages(reply, label):
    assert read_medhal(reply, True) == label


@pytest.mark.parametrize(("reply", "label"), MEDHAL_SHAPES)
def test_medhal_reads_every_shape(reply, label):
    assert read_medhal(reply, True) == label


@pytest.mark.parametrize("reply", MEDHAL_INVALID)
def test_medhal_invalid(reply):
    assert read_medhal(reply, True) is None
    assert read_medhal(reply, False) is None


def test_none_reply_is_invalid_under_medhal_and_strict():
    assert read_medhal(None, True) is None and read_strict(None, True) is None
    assert read_authors(None, True) == F  # the authors' rule on an empty reply


@pytest.mark.parametrize(
    "reply",
    [
        "2",
        "not sure",
        "Unsure.",
        "Answer: 2",
        "<think>hmm</think>I don't know",
        "pass",
        "\\boxed{2}",
        "2 (not sure)",
    ],
)
def test_abstention_is_invalid_when_not_offered(reply):
    assert read_medhal(reply, True) == N
    assert read_medhal(reply, False) is None


def test_verdicts_unaffected_by_the_not_sure_option():
    for reply, label in MEDHAL_SHAPES:
        if label != N:
            assert read_medhal(reply, False) == label, reply


def test_medhal_hedge_does_not_reach_into_the_next_clause():
    assert read_medhal("The answer might be hallucinated, but it is factual.", True) == F


@pytest.mark.parametrize("reply", ["No, the answer is hallucinated.", "Not quite: it is hallucinated."])
def test_medhal_negation_stays_in_its_clause(reply):
    assert read_medhal(reply, True) == H


@pytest.mark.parametrize(
    ("reply", "label"), [("No, it is factual.", F), ("No. The answer is hallucinated.", H)]
)
def test_medhal_negation_before_an_adjective_verdict_or_sentence(reply, label):
    assert read_medhal(reply, True) == label


@pytest.mark.parametrize(
    ("phrase", "label"),
    [
        ("not sure", N),
        ("I don't know", N),
        ("hallucinated", H),
        ("not hallucinated", F),
        ("factual", F),
        ("non-factual", H),
    ],
)
@pytest.mark.parametrize("offered", [True, False])
def test_documented_word_verdicts(phrase, label, offered):
    assert read_medhal(f"The answer is {phrase}.", offered) == (None if label == N and not offered else label)


def test_answer_text():
    assert answer_text("<think>x</think> 1") == " 1"
    assert answer_text("<think>x") is None
    assert answer_text("plain") == "plain"
    assert answer_text("<THINKING>x</THINKING>**1**") == "1"


# ----------------------------------------------------------------------------- authors

AUTHORS = [
    # (reply, reading) by lines 78-85 of the authors' script
    ("0", F),
    ("1", H),
    ("2", N),
    ("", F),
    ("   ", F),
    ("not sure", H),  # 'not' is tested first, so "not sure" is never 2
    ("Not sure.", H),
    ("unsure", F),
    ("I don't know", F),
    ("I do not know", H),
    ("Pass", N),
    ("skip", N),
    ("The answer is hallucinated.", F),
    ("Hallucinated", F),
    ("Not hallucinated.", H),
    ("non-hallucinated", H),
    ("None", H),
    ("I cannot answer medical questions.", H),
    ("Another answer", H),
    ("<think>The trial had 1 arm.</think>0", H),  # reasoning is not removed
    ("<think>a</think><think>b</think>hallucinated", F),
    ("\\boxed{0}", F),
    ("\\boxed{1}", H),
    ("Answer: 2", N),
    ("2 (not sure)", H),
    ("10", H),
    ("0.5", F),
    ("3", F),
    ("<think>checking the numbers", F),
    ("Factual: no", F),
    ("Hallucination: No", F),
    ("0 or 1", H),
]


@pytest.mark.parametrize(("reply", "label"), AUTHORS)
def test_authors_reading(reply, label):
    assert read_authors(reply, True) == label
    assert read_authors(reply, False) == label  # one rule whether or not "not sure" was offered


# ------------------------------------------------------------------------------ strict

STRICT = [
    ("0", F),
    ("1", H),
    ("2", N),
    ("  1 \n", H),
    ("\\boxed{1}", H),
    ("\\boxed{ 0 }", F),
    ("\\boxed{2}", N),
    ("<think>x</think>\n1", H),
    ("<think>weighing</think>\\boxed{0}", F),
    ("  <think>x</think>0", F),
    ("<THINK>x</THINK>1", H),
]
STRICT_INVALID = [
    "",
    "1.",
    "**1**",
    "(1)",
    "'1'",
    "Answer: 1",
    "Digit: 1",
    "1 (hallucinated)",
    "hallucinated",
    "not sure",
    "10",
    "\\boxed{\\text{1}}",
    "$\\boxed{1}$",
    "Final answer: \\boxed{0}",
    "<think>a</think><think>b</think>1",  # only ONE leading block is removed
    "x</think>1",  # a closing tag without its block is not the native format
    "<think>unclosed 1",
    "1 <think>x</think>",
    "0 or 1",
]


@pytest.mark.parametrize(("reply", "label"), STRICT)
def test_strict_reads_only_the_exact_format(reply, label):
    assert read_strict(reply, True) == label


@pytest.mark.parametrize("reply", STRICT_INVALID)
def test_strict_invalid(reply):
    assert read_strict(reply, True) is None
    assert read_strict(reply, False) is None


def test_strict_two_only_when_offered():
    assert read_strict("2", False) is None and read_strict("\\boxed{2}", False) is None
    assert read_strict("1", False) == H and read_strict("\\boxed{0}", False) == F


# --------------------------------------------------------------------------- read_all


def test_read_all_reads_every_convention():
    assert read_all("not sure", True) == {"medhal": N, "authors": H, "strict": None}
    assert read_all("not sure", False) == {"medhal": None, "authors": H, "strict": None}
    assert read_all("<think>1?</think>0", True) == {"medhal": F, "authors": H, "strict": F}
    assert read_all("The answer is hallucinated.", True) == {"medhal": H, "authors": F, "strict": None}


# --------------------------------------------------------------------- scoring a reading


@pytest.mark.parametrize(
    ("label", "gold", "not_sure_reward", "expected"),
    [
        (H, H, 0.0, 1.0),
        (F, F, 0.0, 1.0),
        (F, H, 0.0, 0.0),
        (H, F, 0.5, 0.0),
        (None, F, 0.5, 0.0),
        (N, F, 0.0, 0.0),
        (N, H, 0.3, 0.3),
    ],
)
def test_reward(label, gold, not_sure_reward, expected):
    assert reward(label, gold, not_sure_reward) == expected


@pytest.mark.parametrize(("label", "expected"), [(None, -0.5), (F, 1.0), (H, 0.0), (N, 0.25)])
def test_invalid_reward_prices_only_a_reply_without_a_verdict(label, expected):
    assert reward(label, F, 0.25, invalid_reward=-0.5) == expected


class Item:
    """What `score` needs of a task's data (the `Gradable` protocol)."""

    answer_vocabulary = "digits"

    def __init__(
        self,
        label: str,
        parser: str = "medhal",
        offered: bool = True,
        not_sure_reward: float = 0.0,
        invalid_reward: float = 0.0,
    ):
        self.label, self.parser, self.not_sure_offered = label, parser, offered
        self.not_sure_reward, self.invalid_reward = not_sure_reward, invalid_reward
        self.binary_reward = False


def test_score_records_every_convention_and_follows_the_runs():
    scored = score(Item(H), "not sure")
    assert scored.metrics == {
        "correct_medhal": 0.0,
        "parsed_medhal": 1.0,
        "correct_authors": 1.0,
        "parsed_authors": 1.0,  # 'not' -> 1 under the authors' rule
        "correct_strict": 0.0,
        "parsed_strict": 0.0,
        "correct": 0.0,
        "parsed": 1.0,
        "not_sure": 1.0,
        "detection_reward": 0.0,
    }
    assert scored.info == {"readings": {"medhal": N, "authors": H, "strict": None}, "pred_label": N}
    authors = score(Item(H, parser="authors"), "not sure")
    assert (authors.metrics["correct"], authors.metrics["not_sure"], authors.metrics["detection_reward"]) == (
        1.0,
        0.0,
        1.0,
    )
    assert authors.info["pred_label"] == H
    strict = score(Item(H, parser="strict"), "Answer: 1")
    assert (strict.metrics["correct"], strict.metrics["parsed"], strict.metrics["detection_reward"]) == (
        0.0,
        0.0,
        0.0,
    )
    assert strict.metrics["correct_medhal"] == 1.0 and strict.info["pred_label"] is None
    abstained = score(Item(F, not_sure_reward=0.25), "2")
    assert abstained.metrics["detection_reward"] == 0.25 and abstained.metrics["correct"] == 0.0
    binary = score(Item(F, offered=False), "2")
    assert (
        binary.metrics["parsed"] == 0.0
        and binary.metrics["not_sure"] == 0.0
        and binary.metrics["detection_reward"] == 0.0
    )
    assert binary.metrics["parsed_authors"] == 1.0 and binary.info["readings"]["authors"] == N


def test_gold_and_wrong_replies():
    assert (gold_reply(Item(F)), wrong_reply(Item(F))) == ("0", "1")
    assert (gold_reply(Item(H)), wrong_reply(Item(H))) == ("1", "0")


# ================================================================== edge cases, one by one
# Every expected reading is written by hand, as a careful human reads the reply; most such cases
# live in the labelled corpus (replies.jsonl, mh-230 to mh-257). These check the windows of an
# adjective verdict from the inside, and the limits of the labelled-answer and conditional
# readings.


@pytest.mark.parametrize(
    ("reply", "label"),
    [
        # The copula may stand up to three words before the adjective ("is" ... "accurate"),
        # and a negation between them flips it.
        ("The answer is not entirely accurate.", HALLUCINATED),
        ("The answer is very clearly correct.", FACTUAL),
        # The subject may stand up to four words before the copula ("answer" ... "is").
        ("The answer given above is wrong.", HALLUCINATED),
        # A typographic apostrophe negates like a straight one.
        ("The answer isn’t correct.", HALLUCINATED),
        ("It doesn’t contain a hallucination.", FACTUAL),
    ],
)
def test_an_adjective_said_of_the_answer_within_its_windows_is_a_verdict(reply, label):
    assert read_medhal(reply, True) == label


def test_a_reply_naming_verdicts_more_than_mentions_read_times_is_a_runaway():
    # MENTIONS_READ verdicts are read; one more, and the reply repeats itself: no reading.
    from medhal.kit.commitment import MENTIONS_READ

    assert read_medhal("Answer: 1\n" * MENTIONS_READ, True) == HALLUCINATED
    assert read_medhal("Answer: 1\n" * (MENTIONS_READ + 1), True) is None


def test_a_later_labelled_answer_wins_only_when_marked_as_the_correction():
    # A yes/no label (hallucinated) then a later labelled answer (0): two answers; the later
    # one wins when the text before it marks it as a correction ("On reflection").
    assert read_medhal("Hallucination: yes\nAnswer: 0", True) is None
    assert read_medhal("Hallucination: yes\nOn reflection, Answer: 0", True) == FACTUAL


@pytest.mark.parametrize(
    "reply",
    [
        "If the abstract gave no dose I would be unsure.",
        "If the abstract gave no dose, I would be unsure.",
        "If the abstract gave no dose, which it does not say in the part that was shown, I would be unsure.",
        "I would be unsure if the abstract gave no dose.",
    ],
)
def test_a_conditional_abstention_is_no_abstention(reply):
    # A condition anywhere earlier in the sentence, or after the abstention in it, makes it
    # hypothetical (issue 31: before, only within 40 characters before it).
    assert read_medhal(reply, True) is None
