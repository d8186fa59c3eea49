"""Tests written to kill mutants of `med_halt/scoring.py` that `make mutants` found alive
(reports/test-quality.md lists each one, killed or explained). Items are hand-made; every
expected outcome is worked out in the comments, not computed with the code under test.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field

from med_halt.replies import read_authors, read_medhal
from med_halt.scoring import gold_reply, grade, ir_normalized, wrong_reply

FCT, FAKE, P2T, T2L = "reasoning_FCT", "reasoning_fake", "IR_pmid2title", "IR_title2pubmedlink"
TITLE = "Sleep duration and exam scores of nursing students"


@dataclass(frozen=True)
class Item:
    """What grading reads of a task (the `Gradable` protocol), without verifiers."""

    test_set: str
    gold: str
    rule: str = "normalized"
    parser: str = "medhal"
    verdict_gold: str = ""
    decline_options: tuple[str, ...] = ()
    paper_exists: bool | None = None
    choices: dict[str, str] = field(default_factory=dict)


def _title_reply(title: str) -> object:
    return read_medhal(json.dumps({"paper_title": title}), ("paper_title",))


def test_a_link_answer_equal_to_a_gold_without_a_pubmed_id_is_right():
    # Neither text holds a PubMed id, so the two link forms cannot be compared by id; the
    # answer is the gold's own text (case and surrounding spaces aside): right.
    assert ir_normalized(" HTTPS://example.org/paper-7 ", "https://example.org/paper-7", True, None, False)
    assert not ir_normalized("https://example.org/paper-8", "https://example.org/paper-7", True, None, False)


def test_without_an_existence_flag_the_gold_says_whether_the_paper_exists():
    # paper_exists unknown (None): a gold other than "Unknown" means a real paper, graded by
    # its title (the same title is right, "Unknown" is wrong) ...
    real = Item(P2T, TITLE, paper_exists=None)
    assert grade(real, _title_reply(TITLE)).outcomes["ir_normalized"] == 1.0
    assert grade(real, _title_reply("Unknown")).outcomes["ir_normalized"] == 0.0
    # ... and the gold "Unknown" means a fake paper: an "Unknown"-like answer is right.
    fake = Item(P2T, "Unknown", paper_exists=None)
    assert grade(fake, _title_reply("Not found")).outcomes["ir_normalized"] == 1.0
    assert grade(fake, _title_reply(TITLE)).outcomes["ir_normalized"] == 0.0


def test_a_known_existence_flag_wins_over_the_gold_text():
    # The row says the paper exists; its gold happens to read "Unknown". Graded as a real
    # paper: only the gold text itself is right, a decline such as "Not found" is wrong
    # (graded as a fake paper it would be right).
    item = Item(P2T, "Unknown", paper_exists=True)
    assert grade(item, _title_reply("Not found")).outcomes["ir_normalized"] == 0.0
    assert grade(item, _title_reply("unknown")).outcomes["ir_normalized"] == 1.0


def _dict(reply: str) -> dict:
    return ast.literal_eval(reply)


def test_the_wrong_fct_reply_gives_the_opposite_verdict():
    # The gold verdict "yes" (the proposed answer was right): the wrong reply says "no", and
    # the other way round; the answer itself is never a gold text.
    for gold_verdict, wrong_verdict in (("yes", "no"), ("no", "yes")):
        reply = _dict(wrong_reply(Item(FCT, "Vitamin C", rule="exact", verdict_gold=gold_verdict)))
        assert reply["is_answer_correct"] == wrong_verdict
        assert reply["answer"] == "medhal wrong answer"
        right = _dict(gold_reply(Item(FCT, "Vitamin C", rule="exact", verdict_gold=gold_verdict)))
        assert (right["is_answer_correct"], right["answer"]) == (gold_verdict, "Vitamin C")


def test_the_gold_reply_to_a_fake_question_declines():
    # A fake question's gold is the row's decline option; the perfect reply says "I do not
    # know" whatever the option's wording.
    item = Item(
        FAKE,
        "None of these is a real drug",
        rule="decline",
        decline_options=("None of these is a real drug",),
    )
    assert _dict(gold_reply(item))["cop"] == "I do not know"


def test_an_empty_boxed_formula_is_no_answer():
    # "\boxed{$$}" and "\boxed{\(\)}" box an empty formula: nothing was answered, so the reply
    # is a format error (no answer read), not the answer "$$".
    for reply in ("The answer is \\boxed{$$}.", "The answer is \\boxed{\\(\\)}."):
        assert read_medhal(reply, ("cop",)).answer is None
    assert read_medhal("The answer is \\boxed{\\(Vitamin C\\)}.", ("cop",)).answer == "Vitamin C"


def test_an_authors_reading_that_finds_no_pair_records_no_method():
    # The authors' regex finds no quoted key-value pair in plain prose: nothing was read, so
    # no parse method is recorded (it lands in the trace as `parse_method`). A pair without the
    # answer key was read by the regex: its method is recorded, with no answer.
    assert read_authors("I cannot tell which option is right.", ("cop",)).method is None
    other_key = read_authors("{'why_correct': 'see above'}", ("cop",))
    assert (other_key.method, other_key.answer) == ("authors-regex", None)
