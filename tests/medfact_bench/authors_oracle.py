"""The Med-V1 / MedFact-Bench authors' reading rules, restated for tests.

WHY: the `authors` convention reproduces how the authors' code turns a reply into a score,
and `strict` reproduces their RL format check. This oracle imports nothing from the project;
the corpus tests hold the project's readers to it. The regexes are the authors' own, used
literally: this module only ever runs on the corpus's short replies.

Source: ncbi-nlp/Med-V1 @ 9c6c22b207ec5ce93d6955be97034c796919f82e
  - `utils.py`, `parse_llm_output`, lines 32-48 (the reading);
  - `training/grpo/verl/workers/reward_function/compute_score.py`, `is_legitimate_format`,
    lines 3-17 (the format check) and `compute_score`, lines 26-32 (its score read).
"""

from __future__ import annotations

import re

AUTHORS_COMMIT = "9c6c22b207ec5ce93d6955be97034c796919f82e"

# utils.py lines 37-38 (compute_score.py line 26 uses the same score pattern): first match,
# DOTALL, lower-case tags only.
THINK_BLOCK = re.compile(r"<think>(.*?)</think>", re.DOTALL)
SCORE_BLOCK = re.compile(r"<score>(.*?)</score>", re.DOTALL)
# compute_score.py line 13. `.match` anchors at the start; `$` also matches before one final "\n".
WHOLE_REPLY = re.compile(r"^<think>.*?</think>\s*<score>.*?</score>$", re.DOTALL)

# The five points of the paper's scale; any other integer has no label.
SCALE = (-2, -1, 0, 1, 2)


def parse_llm_output(output: str) -> dict | None:
    """utils.py lines 32-48: None for an empty reply; else the first think body and the first
    score body, each `.strip()`ped, the score through `int()` (None when int() raises
    ValueError/TypeError). int() accepts '+2', '-0', '01', Unicode decimal digits and
    underscores between digits ('1_0' is 10); a string of more than 4300 digits raises
    ValueError under CPython's default limit and so gives None."""
    if not output:
        return None
    think = THINK_BLOCK.search(output)
    score = SCORE_BLOCK.search(output)
    rationale = think.group(1).strip() if think else ""
    score_text = score.group(1).strip() if score else ""
    try:
        value = int(score_text)
    except (ValueError, TypeError):
        value = None
    return {"rationale": rationale, "score": value}


def authors_score(reply: str) -> int | None:
    """The `authors` reading: parse_llm_output's score, kept only when it is on the scale
    (the paper maps -2..2 to labels; any other integer has none, so it is INVALID here)."""
    parsed = parse_llm_output(reply)
    if parsed is None or parsed["score"] not in SCALE:
        return None
    return parsed["score"]


def is_legitimate_format(prediction: str) -> bool:
    """compute_score.py lines 3-17: exactly one each of the four lower-case tags, and the
    whole reply is a think block, optional whitespace, a score block, nothing after (bar
    one final newline, which `$` tolerates)."""
    for tag in ("<think>", "</think>", "<score>", "</score>"):
        if prediction.count(tag) != 1:
            return False
    return WHOLE_REPLY.match(prediction) is not None


def strict_score(reply: str) -> int | None:
    """The `strict` reading: the authors' format check, then the score body, stripped, must
    be exactly one of '-2', '-1', '0', '1', '2' (tighter than int(), which compute_score.py
    line 29 uses: no '+2', '-0', '02' or non-ASCII digits)."""
    if not is_legitimate_format(reply):
        return None
    body = SCORE_BLOCK.search(reply).group(1).strip()
    if body not in {str(v) for v in SCALE}:
        return None
    return int(body)
