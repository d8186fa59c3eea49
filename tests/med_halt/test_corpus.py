"""Every case of the hand-labelled Med-HALT reply corpus (`tests/med_halt/replies.jsonl`)
reads as labelled under all three conventions, through `med_halt.replies.read_all` with the
set's own answer keys (`med_halt.benchmark.SETS[set].answer_keys`) and, where the case gives
them, the item's options by index (`choices`, which only the `medhal` reading uses).

WHY: the corpus was labelled by hand, independently of the readers, so it judges them;
one test per (case, convention), so a disagreement names the case and the convention.
Neither side is adjusted to make the other pass: a failing case is for the lead to settle
(is the label or the reader wrong?).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from med_halt.benchmark import SETS
from med_halt.replies import CONVENTIONS, read_all
from tests.tables import read_jsonl

CORPUS = Path(__file__).with_name("replies.jsonl")


def _cases() -> list[dict]:
    return read_jsonl(CORPUS)


CASES = _cases()
PAIRS = [(case, convention) for case in CASES for convention in CONVENTIONS]


def test_the_corpus_is_labelled_for_every_convention_and_set():
    assert len(CASES) >= 100
    assert len({c["id"] for c in CASES}) == len(CASES)
    assert {c["set"] for c in CASES} == set(SETS)
    for case in CASES:
        assert set(case["expected"]) == set(CONVENTIONS), case["id"]
        assert all(v is None or isinstance(v, str) for v in case["expected"].values()), case["id"]


@pytest.mark.parametrize(("case", "convention"), PAIRS, ids=[f"{c['id']}-{conv}" for c, conv in PAIRS])
def test_case_reads_as_labelled(case, convention):
    reading = read_all(case["reply"], SETS[case["set"]].answer_keys, case.get("choices"))[convention]
    assert reading.answer == case["expected"][convention], (
        case["id"],
        case["shape"],
        case["reason"],
        case["reply"],
    )
