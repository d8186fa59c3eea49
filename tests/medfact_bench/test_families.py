"""MedFact-Bench's generated reply families (`families.py` beside this file) read by the
`medhal` reading: every score a careful human reads no other way (precision), and how many
of the readable ones are read (recall, stated per pattern in `RECALL`). Why families: see
`tests/families.py`. The 185,000 replies run in `make test-slow`, a spread sample in
`make test`.
"""

from __future__ import annotations

import pytest

from medfact_bench.replies import read_medhal
from tests.families import Case, assert_covers, assert_precise, judge, sample
from tests.medfact_bench.families import corpus

PATTERNS_READ = (
    "plain",
    "conditional, then chosen",
    "restated, same",
    "restated, other",
    "hedged",
    "corrected",
)
RECALL = {f"pattern {name}": 0.99 for name in (*PATTERNS_READ, "repeated, same")}
"""Recall floors per commitment pattern over the whole corpus (each measured at 100% when
written). No "negated" floor: a denied score leaves four points, so no reply of it is readable."""
SAMPLE = 1500

CASES = corpus()


def read(case: Case) -> int | None:
    return read_medhal(case.reply)


def test_the_corpus_covers_every_family() -> None:
    """Thousands of replies, every pattern, container, language and noise present."""
    assert_covers(CASES, RECALL, size=100_000, expressions=25, containers=15)
    assert {c.expected for c in CASES} == {2, 1, 0, -1, -2, None}


def test_precision_on_a_fixed_sample() -> None:
    assert_precise(judge(sample(CASES, SAMPLE), read), RECALL)


@pytest.mark.slow(reason="about 185,000 generated replies through the reader: two minutes on a quiet machine")
def test_precision_on_the_whole_corpus() -> None:
    outcome = judge(CASES, read)
    print(outcome.table())
    assert_precise(outcome, RECALL)
