"""Med-HALT report figures: the paper score and the code score reproduced by hand counts,
offline (`medhal score`) and after a live `eval` against the scripted endpoint."""

from __future__ import annotations

import json

import pytest

from conftest import run_eval, run_medhal
from medhal.cli import main as cli_main
from medhal.report import Item, read_run
from medhal.traces import TraceFileError
from med_halt import DEMO_OPTIONS
from med_halt.report import REPORT, code_score, figures, paper_score
from med_halt.sets import SETS
from med_halt.taskset import MedHaltConfig, MedHaltTaskset


def item(test_set: str, correct: bool, parsed: bool = True, error: str | None = None, **values) -> Item:
    family = SETS[test_set].family
    return Item(0, {"test_set": test_set, "family": family}, None, "x", float(correct), parsed, values, None, error)


def test_figures_on_hand_made_items():
    items = [
        item("reasoning_nota", True),
        item("reasoning_nota", False),
        item("reasoning_nota", False, parsed=False),
        item("reasoning_nota", False, parsed=False, error="ProviderError: 500"),
        item("reasoning_FCT", True, verdict_correct=1.0),
        item("reasoning_FCT", False, verdict_correct=0.0),
        item("IR_pmid2title", True, ir_exact=0.0, ir_normalized=1.0),
        item("IR_title2pubmedlink", False, ir_exact=0.0, ir_normalized=0.0),
    ]
    out = figures(items)
    assert out["paper_score"] == (3 - 0.25 * 5) / 8
    assert out["code_score"] == (3 - 0.25 * 3) / 100
    assert out["code_accuracy"] == 3 / 6
    assert (out["n_parsed"], out["n_format_errors"], out["format_error_rate"]) == (6, 1, 1 / 8)
    nota, fct, p2t, t2l = (1 - 0.25 * 3) / 4, (1 - 0.25) / 2, 1.0, -0.25
    assert out["macro_paper_score"] == sum([fct, nota, p2t, t2l]) / 4
    assert out["macro_code_score"] == sum([(1 - 0.25) / 100, (1 - 0.25) / 100, 1 / 100, -0.25 / 100]) / 4
    assert out["macro_accuracy"] == sum([1 / 2, 1 / 4, 1.0, 0.0]) / 4
    assert out["fct_verdict_accuracy"] == 0.5
    assert (out["ir_exact_accuracy"], out["ir_normalized_accuracy"]) == (0.0, 0.5)
    assert "fake_decline_accuracy" not in out
    assert paper_score([]) == 0.0 and code_score([]) == 0.0


def test_failed_fct_rollouts_count_against_verdict_accuracy():
    out = figures([item("reasoning_FCT", False, verdict_correct=1.0), item("reasoning_FCT", False, parsed=False, error="boom")])
    assert out["fct_verdict_accuracy"] == 0.5


# Hand-made replies for the 21 demo items (7 sets x 3, in load order) and what each is:
# R right, W wrong, F format error, M no prediction at all.
DEMO_REPLIES = [
    ("{'is_answer_correct': 'no', 'answer': 'Vitamin C'}", "R"),  # FCT, verdict right
    ('```json\n{"is_answer_correct": "yes", "correct answer": "Liver"}\n```', "W"),  # verdict right
    ("I think the answer is Four.", "F"),
    ("{'cop': 'None of the above', 'cop_index': 1}", "R"),  # NOTA
    ("{'cop': 'Pancreas', 'cop_index': 2}", "W"),
    ("<think>four chambers</think>\n{'cop': 'Four', 'cop_index': 2}", "R"),
    ("{'cop': 'I do not know', 'cop_index': 3}", "R"),  # fake
    ("{'cop': 'Reverse aspirin', 'cop_index': 1}", "W"),
    (None, "M"),
    ('{"paper_title": "Demo paper written by medhal: hand-hygiene reminders on a surgical ward"}', "R"),  # pmid2title
    ('{"paper_title": "Unknown"}', "W"),
    ("{'is_paper_exists': 'Unknown', 'paper_title': 'Unknown'}", "R"),
    ("{}", "F"),  # pubmedlink2title
    ("{'paper_title': 'demo paper written by medhal - sleep duration and exam scores of nursing students'}", "R"),
    ("{'paper_title': 'Bone healing in older adults'}", "W"),
    ("{'url': 'https://pubmed.ncbi.nlm.nih.gov/99000001'}", "R"),  # title2pubmedlink
    ("{'url': 'https://ncbi.nlm.nih.gov/pubmed/99000002'}", "R"),
    ("{'url': 'Unknown'}", "R"),
    ("{'url': 'https://pubmed.ncbi.nlm.nih.gov/12345678'}", "W"),  # abstract2pubmedlink
    ("The paper is not in my memory.", "F"),
    ("{'is_paper_exists': 'No', 'url': 'Unknown'}", "R"),
]


def test_medhal_score_reproduces_both_formulas_by_hand_count(assets_dir, tmp_path):
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        "".join(json.dumps({"idx": i, "reply": reply}) + "\n" for i, (reply, _) in enumerate(DEMO_REPLIES) if reply is not None)
    )
    out = tmp_path / "scored"
    proc = run_medhal(
        "score", "med-halt", "--predictions", str(predictions), "--dataset-path", DEMO_OPTIONS["dataset_path"],
        "-o", str(out), "--taskset.subset", "all",
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads((out / "report.json").read_text())
    sets = report["groups"]["test_set"]

    # Per set, by hand from the R/W/F/M column above: (right, wrong incl. F and M, parsed wrong).
    hand = {
        "reasoning_FCT": (1, 2, 1), "reasoning_nota": (2, 1, 1), "reasoning_fake": (1, 2, 1),
        "IR_pmid2title": (2, 1, 1), "IR_pubmedlink2title": (1, 2, 1), "IR_title2pubmedlink": (3, 0, 0),
        "IR_abstract2pubmedlink": (1, 2, 1),
    }
    for name, (right, wrong, parsed_wrong) in hand.items():
        assert sets[name]["n"] == 3
        assert sets[name]["paper_score"] == (right - 0.25 * wrong) / 3, name
        assert sets[name]["code_score"] == (right - 0.25 * parsed_wrong) / 100, name
        assert sets[name]["accuracy"] == right / 3, name
    assert sets["reasoning_fake"]["n_errors"] == 1  # the missing prediction stays in N

    overall = report["overall"]
    assert overall["paper_score"] == (11 - 0.25 * 10) / 21
    assert overall["code_score"] == (11 - 0.25 * 6) / 100
    assert overall["code_accuracy"] == 11 / 17
    assert (overall["n_parsed"], overall["n_format_errors"], overall["format_error_rate"]) == (17, 3, 3 / 21)
    assert overall["macro_paper_score"] == sum((r - 0.25 * w) / 3 for r, w, _ in hand.values()) / 7
    assert overall["macro_code_score"] == sum((r - 0.25 * p) / 100 for r, _, p in hand.values()) / 7
    assert report["macro_accuracy"] == overall["macro_accuracy"] == sum(r / 3 for r, _, _ in hand.values()) / 7
    assert overall["fct_verdict_accuracy"] == 2 / 3
    assert (overall["ir_exact_accuracy"], overall["ir_normalized_accuracy"]) == (5 / 12, 7 / 12)
    assert (overall["fake_decline_accuracy"], overall["fake_keywords_accuracy"]) == (1 / 3, 1 / 3)
    reasoning, memory = report["groups"]["family"]["reasoning"], report["groups"]["family"]["memory"]
    assert reasoning["paper_score"] == (4 - 0.25 * 5) / 9 and memory["paper_score"] == (7 - 0.25 * 5) / 12
    assert reasoning["code_score"] == (4 - 0.25 * 3) / 100 and memory["code_score"] == (7 - 0.25 * 3) / 100
    assert report["paper_comparable"] is False

    traces = [json.loads(line) for line in (out / "traces.jsonl").read_text().splitlines()]
    assert [t["rewards"].get("points") for t in traces[:3]] == [1.0, -0.25, -0.25]
    assert traces[2]["metrics"] == {"correct": 0.0, "parsed": 0.0}
    md = (out / "report.md").read_text()
    assert "paper_score" in md and "code_score" in md and "### By family" in md


def test_score_with_the_authors_rules(assets_dir, tmp_path):
    """`--taskset.ir_matching exact --taskset.fake_scoring keywords` switches correctness
    (and so both scores) to the authors' rules (the CLI run in-process)."""
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        "".join(json.dumps({"idx": i, "reply": reply}) + "\n" for i, (reply, _) in enumerate(DEMO_REPLIES) if reply is not None)
    )
    out = tmp_path / "scored"
    with pytest.raises(SystemExit) as exit_:
        cli_main([
            "score", "med-halt", "--predictions", str(predictions), "--dataset-path", DEMO_OPTIONS["dataset_path"],
            "-o", str(out), "--taskset.ir_matching", "exact", "--taskset.fake_scoring", "keywords",
        ])
    assert exit_.value.code == 0
    report = json.loads((out / "report.json").read_text())
    memory = report["groups"]["family"]["memory"]
    assert memory["accuracy"] == 5 / 12 and memory["code_score"] == (5 - 0.25 * 5) / 100
    assert report["groups"]["test_set"]["reasoning_fake"]["accuracy"] == 1 / 3


def _sample_dir(shared_data, tmp_path, rows_per_set=2):
    target = tmp_path / "data"
    target.mkdir()
    for name in SETS:
        lines = (shared_data / "medhalt" / "samples" / f"{name}.jsonl").read_text().splitlines()[:rows_per_set]
        (target / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
    return target


def _right_answer(data) -> dict:
    if data.test_set == "reasoning_FCT":
        return {"is_answer_correct": data.verdict_gold, "answer": data.gold}
    if data.test_set == "reasoning_fake":
        return {"cop": "I do not know", "cop_index": 4}
    if data.test_set == "reasoning_nota":
        return {"cop": data.gold}
    key = SETS[data.test_set].answer_keys[0]
    return {"is_paper_exists": "Yes" if data.paper_exists else "Unknown", key: data.gold}


def test_eval_then_report_on_real_rows(assets_dir, tmp_path, endpoint):
    """A live `eval` over two real rows of every set: even items answered right, odd ones
    wrong, the last one unparseable; the report's figures match the hand count."""
    data_dir = _sample_dir(assets_dir, tmp_path)
    tasks = MedHaltTaskset(MedHaltConfig.model_validate({"id": "med-halt", "dataset_path": str(data_dir)})).select()
    assert len(tasks) == 14
    replies = {}
    for task in tasks:
        answer = _right_answer(task.data)
        if task.data.idx % 2:
            key = next(iter(k for k in answer if k not in ("is_answer_correct", "is_paper_exists")))
            answer[key] = "Something else entirely"
            if "is_paper_exists" in answer:
                answer["is_paper_exists"] = "Yes"  # a negative flag would decline a fake paper rightly
        replies[task.data.prompt] = repr(answer)
    replies[tasks[-1].data.prompt] = "Sorry, I cannot look up papers."

    ep = endpoint(lambda body, n: replies[body["messages"][-1]["content"]])
    out = tmp_path / "run"
    traces = run_eval("med-halt", ep.base_url, out, "--taskset.dataset-path", str(data_dir), env={"MEDHAL_ASSETS_DIR": str(assets_dir)})
    assert len(traces) == 14 and not any(t.get("errors") for t in traces)
    assert all(len(body["messages"]) == 1 and body["messages"][0]["role"] == "user" for body in ep.requests)
    assert sorted(body["messages"][0]["content"] for body in ep.requests) == sorted(replies)
    by_idx = {t["task"]["data"]["idx"]: t for t in traces}
    assert by_idx[0]["info"]["parse_method"] == "python" and by_idx[0]["info"]["answer"] == tasks[0].data.gold
    assert by_idx[13]["metrics"] == {"correct": 0.0, "parsed": 0.0}
    assert by_idx[0]["task"]["data"]["provenance"]["shot_ids"] == tasks[0].data.provenance["shot_ids"]

    proc = run_medhal("report", str(out))
    assert proc.returncode == 0, proc.stderr
    report = json.loads((out / "report.json").read_text())
    sets = report["groups"]["test_set"]
    for name in SETS:
        expected_code = 1 / 100 if name == "IR_abstract2pubmedlink" else (1 - 0.25) / 100
        assert (sets[name]["accuracy"], sets[name]["paper_score"], sets[name]["code_score"]) == (0.5, (1 - 0.25) / 2, expected_code), name
    assert report["overall"]["paper_score"] == (7 - 0.25 * 7) / 14
    assert report["overall"]["code_score"] == (7 - 0.25 * 6) / 100
    assert report["overall"]["n_format_errors"] == 1
    assert sets["reasoning_FCT"]["fct_verdict_accuracy"] == 1.0
    assert report["groups"]["family"]["memory"]["n"] == 8


def test_report_spec_names_match_the_task():
    assert REPORT.task_type == "MedHaltTask" and REPORT.cluster_field == "source_question"
    assert REPORT.group_fields == ("test_set", "family")


def test_report_refuses_traces_of_another_benchmark(tmp_path):
    trace = {"task": {"type": "OtherTask", "data": {"idx": 0, "benchmark": "medhallu"}}, "nodes": []}
    (tmp_path / "traces.jsonl").write_text(json.dumps(trace) + "\n")
    with pytest.raises(TraceFileError, match="'medhallu'"):
        read_run(tmp_path, REPORT)
