"""Tests written to kill mutants of `medfact_bench/replies.py` that `make mutants` found alive
(reports/test-quality.md lists each one, killed or explained). Every expected reading is
written by hand from the rule quoted in the comment.
"""

from __future__ import annotations

import pytest

from medfact_bench.replies import read_medhal


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        # A "final score" stated in prose settles the reading over earlier labelled scores.
        ("Score: 1\nOn reflection the final score is 2.", 2),
        ("The score is -1 at first.\nThe final score is 0.", 0),
        # Without "final", two different stated scores leave nothing to choose: INVALID.
        ("Score: 1\nOn reflection the score is 2.", None),
    ],
)
def test_a_final_score_stated_in_prose_settles_the_reading(reply, score):
    assert read_medhal(reply) == score
