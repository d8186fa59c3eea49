"""End to end: `eval medfact-bench` with the in-process harness against a scripted
endpoint, `medhal report` on its output, and `medhal score` on hand-made predictions."""

import json
import re

from medhal.scripted_endpoint import Fault
from tests.conftest import run_eval, run_medhal
from tests.medfact_fixtures import rows
from tests.tables import write_jsonl, write_parquet

SCORE = {"SUPPORT": 2, "NEI": 0, "CONTRADICT": -1}


def drug(body) -> int:
    return int(re.search(r"Drug (\d+)", body["messages"][-1]["content"]).group(1))


def test_eval_then_report(tmp_path, endpoint):
    data = rows(15)
    path = write_parquet(tmp_path / "d.parquet", data)

    def script(body, n):
        i = drug(body)
        if i == 4:
            return Fault("500")  # every attempt fails: the rollout errors
        if i % 5 == 3:
            return "I cannot decide."  # INVALID
        if i % 5 == 1:
            return "<think>x</think><score>-2</score>"  # parsed, maybe wrong
        return f"<think>x</think><score>{SCORE[data[i]['label']]}</score>"  # right

    ep = endpoint(script)
    out = tmp_path / "run"
    traces = run_eval("medfact-bench", ep.base_url, out, "--taskset.dataset-path", str(path), "-c", "4")
    assert sorted(t["task"]["data"]["idx"] for t in traces) == list(range(15))
    # The system prompt is sent unchanged as the system message.
    assert all(r["messages"][0] == {"role": "system", "content": data[0]["system_prompt"]} for r in ep.requests)
    by_idx = {t["task"]["data"]["idx"]: t for t in traces}
    failed = by_idx[4]
    assert failed["stop_condition"] == "error" and failed["rewards"] == {}
    assert failed["errors"][-1]["type"] == "ProviderError" and failed["errors"][-1]["status_code"] == 500
    assert by_idx[3]["rewards"] == {"accuracy": 0.0} and by_idx[3]["info"]["pred_label"] is None
    assert by_idx[0]["rewards"] == {"accuracy": 1.0} and by_idx[0]["info"] == {"parsed_score": 2, "pred_label": "SUPPORT"}

    proc = run_medhal("report", str(out))
    assert proc.returncode == 1, proc.stderr  # one errored rollout > --max-error-rate 0
    assert "1 of 15 rollouts failed" in proc.stderr and "ProviderError" in proc.stderr
    report = json.loads((out / "report.json").read_text())
    # Hand count: idx 0,2,5,7,10,12,14 (i%5 in {0,2,4}, minus idx 4) answer right; idx 1,6,11 answer
    # -2 (right only when gold is CONTRADICT: idx 11); 3,8,13 invalid; 4 errored.
    right = {0, 2, 5, 7, 9, 10, 12, 14, 11}
    assert report["n"] == 15 and report["n_errors"] == 1
    assert report["micro_accuracy"] == len(right) / 15
    assert report["parse_rate"] == 11 / 15
    assert report["confusion"]["NEI"]["ERROR"] == 1  # idx 4 has gold NEI
    assert sum(row["INVALID"] for row in report["confusion"].values()) == 3
    comp = report["groups"]["dataset"]
    assert comp["bioasq-fact"]["n"] == 3 and comp["bioasq-fact"]["n_errors"] == 1
    assert report["macro_accuracy"] == sum(g["accuracy"] for g in comp.values()) / 5
    assert report["provenance"]["data"]["sha256"] and report["provenance"]["models"] == {"scripted": 15}
    assert {"confusion.png", "by_dataset.png"} <= set(report["plots"])
    assert (out / "report.md").read_text().startswith("## MedFact-Bench")
    assert run_medhal("report", str(out), "--max-error-rate", "0.1").returncode == 0


def test_score_predictions_matches_hand_count(tmp_path):
    data = rows(12)
    path = write_parquet(tmp_path / "d.parquet", data)
    replies = {
        0: "<think>a</think><score>2</score>",  # gold SUPPORT -> right
        1: "<score>0</score>",  # gold NEI -> right, not strict
        2: "<think>a</think><score>1</score>",  # gold CONTRADICT -> SUPPORT, wrong
        3: "<think>a</think><score>9</score>",  # INVALID
        4: "<think>a</think><score>-2</score>",  # gold NEI -> CONTRADICT, wrong
        5: "<think>a</think><score>-1</score>",  # gold CONTRADICT -> right
        6: "no tags at all",  # INVALID
        7: "<think>a</think><score>0</score>",  # gold NEI -> right
        8: "<think>a</think><score>-2</score>",  # gold CONTRADICT -> right
        9: "<think>a</think><score>1</score>",  # gold SUPPORT -> right
        10: "<think>a</think><score>2</score>",  # gold NEI -> wrong
    }  # idx 11 (gold CONTRADICT) has no prediction
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"idx": i, "reply": r}) + "\n" for i, r in replies.items()))
    out = tmp_path / "scored"
    proc = run_medhal("score", "medfact-bench", "--dataset-path", str(path), "--predictions", str(preds), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "1 of 12 tasks had no prediction" in proc.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["n"] == 12 and report["n_errors"] == 1
    assert report["micro_accuracy"] == 6 / 12  # idx 0, 1, 5, 7, 8, 9
    assert report["parse_rate"] == 9 / 12
    assert report["confusion"] == {
        "SUPPORT": {"SUPPORT": 2, "NEI": 0, "CONTRADICT": 0, "INVALID": 2, "ERROR": 0},
        "NEI": {"SUPPORT": 1, "NEI": 2, "CONTRADICT": 1, "INVALID": 0, "ERROR": 0},
        "CONTRADICT": {"SUPPORT": 1, "NEI": 0, "CONTRADICT": 2, "INVALID": 0, "ERROR": 1},
    }
    assert report["overall"]["strict_format"] == 9 / 12  # structure only; the errored item counts as 0
    assert report["errors"] == {"MissingPrediction: no prediction for idx 11": 1}
    lines = (out / "traces.jsonl").read_text().splitlines()
    assert len(lines) == 12


def test_score_rejects_bad_prediction_files(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", rows(3))
    cases = [
        ('{"idx": 0, "reply": "x"}\n{"idx": 0, "reply": "y"}\n', "preds.jsonl:2: duplicate idx 0"),
        ('{"idx": 7, "reply": "x"}\n', "preds.jsonl:1: idx 7 is not a task"),
        ('{"idx": 1}\n', "preds.jsonl:1: field 'reply' must be a string"),
        ('{"idx": "1", "reply": "x"}\n', "preds.jsonl:1: field 'idx' must be an integer"),
        ('{"idx": 1, "reply": "x"\n', "preds.jsonl:1: not valid JSON"),
    ]
    for text, message in cases:
        preds = tmp_path / "preds.jsonl"
        preds.write_text(text)
        proc = run_medhal("score", "medfact-bench", "--dataset-path", str(path), "--predictions", str(preds), "-o", str(tmp_path / "o"))
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr


def test_score_passes_environment_options(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", rows(10))
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"idx": 0, "reply": "<score>-1</score>"}\n{"idx": 1, "reply": "<score>2</score>"}\n')
    out = tmp_path / "o"
    proc = run_medhal("score", "medfact-bench", "--dataset-path", str(path), "--predictions", str(preds), "-o", str(out), "--taskset.subset", "healthver")
    assert proc.returncode == 0, proc.stderr
    report = json.loads((out / "report.json").read_text())
    # healthver rows are 1 (gold NEI) and 6 (gold SUPPORT): -1 on the first is wrong, 2 on the second right.
    assert report["n"] == 2 and report["micro_accuracy"] == 0.5
    bad = run_medhal("score", "medfact-bench", "--dataset-path", str(path), "--predictions", str(preds), "-o", str(out), "--taskset.split", "train")
    assert bad.returncode != 0 and "evaluation-only" in (bad.stderr + bad.stdout)


def test_report_compares_several_runs(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", rows(6))
    runs = []
    for name, score in (("all-support", 2), ("all-nei", 0)):
        preds = tmp_path / f"{name}.jsonl"
        preds.write_text("".join(json.dumps({"idx": i, "reply": f"<score>{score}</score>"}) + "\n" for i in range(6)))
        out = tmp_path / name
        proc = run_medhal("score", "medfact-bench", "--dataset-path", str(path), "--predictions", str(preds), "-o", str(out), "--model", name)
        assert proc.returncode == 0, proc.stderr
        runs.append(out)
    cmp = tmp_path / "cmp"
    proc = run_medhal("report", *map(str, runs), "-o", str(cmp))
    assert proc.returncode == 0, proc.stderr
    reports = json.loads((cmp / "comparison.json").read_text())
    # Gold labels cycle SUPPORT, NEI, CONTRADICT: each constant answer is right on 2 of 6.
    assert [(list(r["provenance"]["models"]), r["micro_accuracy"]) for r in reports] == [(["all-support"], 2 / 6), (["all-nei"], 2 / 6)]
    table = (cmp / "comparison.md").read_text()
    assert "| all-support | 6 | 0 |" in table and "| all-nei | 6 | 0 |" in table
    assert {p.name for p in (cmp / "run1").iterdir()} >= {"report.json", "report.md", "confusion.png"}
