"""Majority votes over a task's rollouts vote on what Med-HALT's rule compares (issue 33
item 1): one answer spelt two ways ("Vitamin C" and "vitamin c", "I do not know" and "I
don't know", an IR title with and without its final period) is one answer, so a task right
in two of three rollouts has a majority, and it is right. Rollouts are made with `medhal
score` (three scorings of the 21 demo items, one reply each), joined into one run of three
rollouts per task as `eval -r 3` writes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from med_halt.benchmark import DEMO_DIR
from tests.med_halt.test_report import DEMO_REPLIES, write_predictions
from tests.running import medhal_main

TITLE = "Demo paper written by medhal: hand-hygiene reminders on a surgical ward"
# Per idx, the replies of rollouts 2 and 3 where they differ from DEMO_REPLIES (rollout 1).
VARIANTS = {
    # FCT, gold "Vitamin C": the gold in lower case, then a wrong answer.
    0: (
        "{'is_answer_correct': 'no', 'answer': 'vitamin c'}",
        "{'is_answer_correct': 'no', 'answer': 'Liver'}",
    ),
    # NOTA, gold "None of the above": lower case with a trailing blank, then a wrong option.
    3: ("{'cop': 'none of the above ', 'cop_index': 1}", "{'cop': 'Pancreas', 'cop_index': 2}"),
    # NOTA, gold "None of the above": the wrong option twice, spelt two ways: a wrong majority.
    4: ("{'cop': 'pancreas', 'cop_index': 2}", "{'cop': 'None of the above', 'cop_index': 1}"),
    # Fake question: "I don't know" declines as "I do not know" does (the decline rule).
    6: ("{'cop': \"I don't know\", 'cop_index': 3}", "{'cop': 'Reverse aspirin', 'cop_index': 1}"),
    # pmid2title: the title with a final period (the normalized rule), then "Unknown".
    9: (json.dumps({"paper_title": TITLE + "."}), json.dumps({"paper_title": "Unknown"})),
}


def three_rollouts(tmp_path: Path) -> Path:
    """A run directory of the 21 demo items x 3 rollouts, each trace with its own id."""
    lines = []
    for rollout in range(3):
        replies = list(DEMO_REPLIES)
        for idx, variants in VARIANTS.items():
            replies[idx] = DEMO_REPLIES[idx] if rollout == 0 else variants[rollout - 1]
        out = tmp_path / f"scored{rollout}"
        predictions = write_predictions(tmp_path / f"predictions{rollout}.jsonl", replies)
        proc = medhal_main(
            "score", "med-halt", "--predictions", str(predictions), "--dataset-path", str(DEMO_DIR),
            "-o", str(out), "--no-plots", "--taskset.subset", "all", "--taskset.prompts", "demo",
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        for line in (out / "traces.jsonl").read_text().splitlines():
            trace = json.loads(line)
            trace["id"] = f"{trace['task']['data']['idx']}-{rollout}"
            lines.append(json.dumps(trace) + "\n")
    run = tmp_path / "run"
    run.mkdir()
    (run / "traces.jsonl").write_text("".join(lines))
    (run / "config.toml").write_text("num_rollouts = 3\n")
    return run


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    run = three_rollouts(tmp_path_factory.mktemp("majority"))
    proc = medhal_main("report", str(run), "--no-plots", "--allow-incomplete", "--max-error-rate", "1")
    assert proc.returncode == 0, proc.stderr
    return json.loads((run / "report.json").read_text())


def test_the_rollouts_are_right_as_written(report):
    per_item = report["per_item"]
    assert report["complete"] and per_item["rollouts"] == [3] * 21
    mean = dict(zip(per_item["idx"], per_item["mean_correct"], strict=True))
    # 0, 3, 6, 9: right, right (another spelling), wrong; 4: wrong, wrong (another spelling), right.
    assert [mean[i] for i in (0, 3, 6, 9)] == pytest.approx([2 / 3] * 4)
    assert mean[4] == pytest.approx(1 / 3)


def test_one_answer_spelt_two_ways_is_one_vote(report):
    # Rollout 1 alone (medhal reading): right on 0, 3, 5, 6, 9, 11, 13, 15, 16, 17, 20, i.e.
    # 11 of 21. The other rollouts repeat it except at 0, 3, 4, 6 and 9: 0, 3, 6 and 9 are
    # right in two rollouts of three, one answer spelt two ways (a majority, right); 4 is
    # wrong in two, "Pancreas" spelt two ways (a majority, wrong). So the majority is right
    # on the same 11 tasks. Voting on the raw text splits 0, 3, 6 and 9 three ways (a tie,
    # wrong): 7 of 21.
    assert report["rollouts"]["majority_accuracy"] == pytest.approx(11 / 21)
