"""The `medhal` reading on MedHallu's generated reply families (`tests/medhallu/families.py`):
precision on every case, recall per family stated.

WHY (issue 31): a reader tuned to listed shapes fails on the next one; the families apply
each rule of human reading to every answer form, container, language and decoration. The
precision test is the one that matters for a reward: no generated reply is read as an
answer other than the one a careful human reads (INVALID is allowed: it costs recall, not
trust). Recall is stated per family below, as floors a change may raise, never lower
without saying why. The whole corpus (about 110,000 replies) runs in `make test-slow`; a
fixed sample of it, spread over every pattern and container, in `make test`.
"""

from __future__ import annotations

import pytest

from medhallu.replies import read_medhal
from tests.families import Case, assert_covers, assert_precise, judge, sample
from tests.medhallu.families import corpus

RECALL = {
    # The share of replies a human reads an answer from that the reading reads, per
    # commitment pattern, on the whole corpus (measured: 100% for each when written).
    "pattern plain": 0.99,
    "pattern negated": 0.99,
    "pattern conditional, then chosen": 0.99,
    "pattern restated, same": 0.99,
    "pattern restated, other": 0.99,
    "pattern hedged": 0.99,
    "pattern corrected": 0.99,
    "pattern repeated, same": 0.99,
}
SAMPLE = 1500

CASES = corpus()


def read(case: Case) -> str | None:
    return read_medhal(case.reply, case.options["not_sure_offered"])


def test_the_corpus_covers_every_family() -> None:
    """Thousands of replies, every pattern, container, language and noise present."""
    assert_covers(CASES, RECALL, size=50_000, expressions=15, containers=15)


def test_precision_on_a_fixed_sample() -> None:
    assert_precise(judge(sample(CASES, SAMPLE), read), RECALL)


@pytest.mark.slow(reason="about 110,000 generated replies through the reader: a minute on a quiet machine")
def test_precision_on_the_whole_corpus() -> None:
    outcome = judge(CASES, read)
    print(outcome.table())
    assert_precise(outcome, RECALL)
