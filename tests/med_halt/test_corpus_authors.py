"""The labelled Med-HALT reply corpus (replies.jsonl): well-formed, covering all seven sets,
and its `authors` column agrees with the authors' reading as restated in authors_oracle.py;
plus the oracle's scorer on real upstream outputs (shared data) against hand counts.

WHY: the corpus is the independent oracle for the project's three readers. Its labels were
written by hand; holding the `authors` column to a restatement of the authors' code catches a
slip before the corpus judges the project's readers, and the sample counts pin the scorer.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path

import pytest

from tests.med_halt.authors_oracle import SETS, authors_answer, recreate, score_set
from tests.tables import read_jsonl

CORPUS = Path(__file__).with_name("replies.jsonl")
MIN_CASES = 160
MIN_TINY_MODEL = 15
SHAPES = {
    "json",
    "python_dict",
    "code_fence",
    "reasoning_model",
    "truncated",
    "stop_here",
    "invented_examples",
    "curly_quotes",
    "null_value",
    "comma_value",
    "key_case",
    "nested",
    "no_dict",
    "boxed",
    "prose",
    "numbered_reasoning",
    "chatty",
    "refusal",
    "prompt_echo",
    "non_english",
    "empty_or_garbage",
    "tiny_model",
    "option_index",
    "bare_option",
    "hedge",
    # issue 31: Med-HALT equality, letters, other containers, several answer dicts
    "equality",
    "letter",
    "tag",
    "table",
    "function_call",
    "several_dicts",
    # issue 31: commitment (negation, conditionals, retractions, hedges, corrections), languages
    "commitment",
    "language",
}
FCT_SPELLINGS = (
    "correct_answer",
    "answer",
    "correct answer",
    "corrent_answer",
    "Correct Answer",
    "Answer",
    "Correct_answer",
    "Correct answer",
)


def _load() -> list[dict]:
    return read_jsonl(CORPUS)


CASES = _load()
IDS = [c["id"] for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_authors_column_matches_recreate(case: dict) -> None:
    assert case["expected"]["authors"] == authors_answer(case["set"], case["reply"])


def test_ids_are_unique_and_numbered() -> None:
    assert len(IDS) == len(set(IDS))
    assert all(re.fullmatch(r"mt-\d{3}", i) for i in IDS)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_case_is_well_formed(case: dict) -> None:
    # `choices` (optional): the item's options by index, as the reader is given them when
    # scoring a task (absent: the reader is not told the options).
    assert set(case) - {"choices"} == {"id", "set", "reply", "expected", "shape", "reason"}
    if "choices" in case:
        assert case["set"] in ("reasoning_FCT", "reasoning_nota", "reasoning_fake")
        assert all(k.isdigit() and isinstance(v, str) for k, v in case["choices"].items())
    assert case["set"] in SETS
    assert isinstance(case["reply"], str)
    assert set(case["expected"]) == {"medhal", "authors", "strict"}
    for convention in ("medhal", "strict"):
        value = case["expected"][convention]
        # medhal and strict give a stripped, non-empty answer or a format error.
        assert value is None or (isinstance(value, str) and value and value == value.strip())
    assert case["expected"]["authors"] is None or isinstance(case["expected"]["authors"], str)
    strict, medhal = case["expected"]["strict"], case["expected"]["medhal"]
    if strict is not None and "choices" not in case:
        assert medhal == strict
    elif strict is not None and medhal is not None:
        # With the item's options, medhal reads a dict's value against them (the option as
        # the item writes it, a letter or an index resolved); strict reads it as written.
        assert medhal == strict or medhal in case["choices"].values() or strict.endswith(medhal)
    assert case["shape"] in SHAPES
    assert case["reason"].strip()


def test_corpus_size_and_coverage() -> None:
    assert len(CASES) >= MIN_CASES
    shapes = Counter(c["shape"] for c in CASES)
    assert set(shapes) == SHAPES
    assert shapes["tiny_model"] >= MIN_TINY_MODEL
    assert {c["set"] for c in CASES} == set(SETS)
    fct_keys_used = {k for c in CASES if c["set"] == "reasoning_FCT" for k in recreate(c["reply"])}
    assert len(fct_keys_used & set(FCT_SPELLINGS)) >= 6
    for convention in ("medhal", "authors", "strict"):
        assert any(c["expected"][convention] is None for c in CASES)
        assert any(c["expected"][convention] is not None for c in CASES)


def test_recreate_examples() -> None:
    # evaluate.py lines 29-35: values stop at the first comma; keys lose backslashes; the
    # later duplicate wins; null is text.
    assert recreate('{"cop": "a, b"}') == {"cop": "a"}
    assert recreate('{"cop": "a", "cop": "c"}') == {"cop": "c"}
    assert recreate('{"cop": null}') == {"cop": "null"}
    assert recreate('{\\"cop\\": 1}') == {"cop": "1"}
    assert recreate("no dict here") == {}


# ---- the scorer on real upstream outputs -------------------------------------------------

# Expected counts per set for deepseek-r1-7b's sample outputs against the 16 sample rows.
# Computed by reading each output beside its row (ids match one to one, in order) and
# applying the authors' rule by hand, then confirmed with a one-off script (not kept) that
# compared lower-cased strings directly, without this module:
#   FCT: 6 empty outputs ({}) are exceptions; one 'correct_answer' equals its gold
#        ("Stress urinary incontinence"); the other 9 differ (one uses 'correct answer').
#   NOTA: gold is "None of the above" for all 16; 9 outputs say it, 6 say another option,
#         1 output is {} (exception).
#   fake: 4 outputs have cop "I do not know" (keyword); 12 name an option (no keyword).
#   pmid2title: 6 fake rows (gold Title "Unknown") answered "Unknown"; 10 others wrong.
#   pubmedlink2title: 3 outputs are {} (exception); 1 fake row answered "Unknown"; 12 wrong.
#   title2pubmedlink: 7 fake rows answered "Unknown" (gold url "Unknown"); 9 wrong.
#   abstract2pubmedlink: 5 fake rows answered "Unknown"; 1 fake row gave a URL; 10 real rows
#        wrong (11 wrong in all).
# score = (correct - 0.25 * wrong) / 100, e.g. NOTA (9 - 1.5) / 100 = 0.075.
SAMPLE_COUNTS = {
    "reasoning_FCT": (1, 9, 6, -0.0125),  # (1 - 2.25) / 100
    "reasoning_nota": (9, 6, 1, 0.075),
    "reasoning_fake": (4, 12, 0, 0.01),  # (4 - 3) / 100
    "IR_pmid2title": (6, 10, 0, 0.035),  # (6 - 2.5) / 100
    "IR_pubmedlink2title": (1, 12, 3, -0.02),  # (1 - 3) / 100
    "IR_title2pubmedlink": (7, 9, 0, 0.0475),  # (7 - 2.25) / 100
    "IR_abstract2pubmedlink": (5, 11, 0, 0.0225),  # (5 - 2.75) / 100
}


@pytest.fixture(scope="module")
def samples_dir() -> Path:
    root = os.environ.get("MEDHAL_SHARED_DATA")
    if not root:
        pytest.skip("MEDHAL_SHARED_DATA is not set")
    path = Path(root) / "medhalt" / "samples"
    assert path.is_dir(), f"MEDHAL_SHARED_DATA={root} has no medhalt/samples"
    return path


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


@pytest.mark.parametrize("set_name", list(SAMPLE_COUNTS))
def test_scorer_on_real_sample_outputs(samples_dir: Path, set_name: str) -> None:
    rows = _jsonl(samples_dir / f"{set_name}.jsonl")
    outputs = {o["id"]: o["output"] for o in _jsonl(samples_dir / f"{set_name}.deepseek-r1-7b.outputs.jsonl")}
    assert {r["id"] for r in rows} == set(outputs)
    correct, wrong, exception, score = SAMPLE_COUNTS[set_name]
    result = score_set(set_name, rows, outputs)
    assert (result["correct"], result["wrong"], result["exception"]) == (correct, wrong, exception)
    assert result["score"] == pytest.approx(score)
