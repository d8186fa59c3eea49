"""The `medhal` reading on Med-HALT's generated reply families (`tests/med_halt/families.py`):
precision on every case, recall per family stated.

WHY: as for MedHallu (`tests/medhallu/test_families.py`): no generated reply may be read as
another answer than a careful human reads; recall floors per family. Med-HALT adds the IR
families (titles), judged on the title read as the IR sets compare titles. Whole corpus in
`make test-slow`, a fixed spread sample in `make test`.
"""

from __future__ import annotations

import pytest

from med_halt.replies import read_medhal
from med_halt.rows import normalize_text
from tests.families import NOTHING, Case, assert_covers, assert_precise, judge, sample
from tests.med_halt.families import OPTIONS, corpus, ir_corpus

RECALL = {
    # The share of replies a human reads an answer from that the reading reads, per
    # commitment pattern, on the whole multiple-choice corpus (measured when written:
    # 97.8% to 98.3%; what is missed is mostly a dict a noise made unparseable, full-width
    # colons, read as no answer).
    "pattern plain": 0.97,
    "pattern conditional, then chosen": 0.97,
    "pattern restated, same": 0.97,
    "pattern restated, other": 0.97,
    "pattern corrected": 0.97,
    "pattern repeated, same": 0.97,
}
IR_RECALL = {  # measured when written: 98.9% each
    "pattern plain": 0.98,
    "pattern corrected": 0.98,
    "pattern repeated, same": 0.98,
    "pattern restated, other": 0.98,
}
SAMPLE = 1500
SAMPLE_FLOOR = 0.9
"""The fixed sample's recall per pattern (fewer replies per family: a looser floor)."""

CASES = corpus()
IR_CASES = [
    Case(
        c.reply,
        normalize_text(c.expected) if c.expected else c.expected,
        c.expression,
        c.container,
        c.pattern,
        c.noise,
    )
    for c in ir_corpus()
]


def read(case: Case) -> str | None:
    return read_medhal(case.reply, ("cop",), OPTIONS).answer


def read_ir(case: Case) -> str | None:
    """The title read, as the IR sets compare titles (`normalize_text`: case, punctuation
    and spacing aside; a noise may write a title's colon full-width)."""
    answer = read_medhal(case.reply, ("paper_title",)).answer
    return None if answer is None else normalize_text(answer)


def test_the_corpus_covers_every_family() -> None:
    """Thousands of replies, every pattern, container, language and noise present."""
    assert_covers(
        CASES,
        RECALL,
        size=50_000,
        expressions=10,
        containers=30,
        more_patterns=("negated", "hedged"),
        nothing=NOTHING,
    )
    assert len(IR_CASES) > 5_000


def test_precision_on_a_fixed_sample() -> None:
    assert_precise(judge(sample(CASES, SAMPLE), read), dict.fromkeys(RECALL, SAMPLE_FLOOR))


def test_ir_precision_on_a_fixed_sample() -> None:
    assert_precise(judge(sample(IR_CASES, SAMPLE // 3), read_ir), dict.fromkeys(IR_RECALL, SAMPLE_FLOOR))


@pytest.mark.slow(reason="about 155,000 generated replies through the reader: minutes on a quiet machine")
def test_precision_on_the_whole_corpus() -> None:
    outcome = judge(CASES, read)
    print(outcome.table())
    assert_precise(outcome, RECALL)


@pytest.mark.slow(reason="the IR families through the reader")
def test_ir_precision_on_the_whole_corpus() -> None:
    outcome = judge(IR_CASES, read_ir)
    print(outcome.table())
    assert_precise(outcome, IR_RECALL)
