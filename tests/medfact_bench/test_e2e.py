"""End to end: `eval medfact-bench` with the in-process harness against a scripted
endpoint, `medhal report` on its output, and `medhal score` on hand-made predictions."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import run_eval
from tests.medfact_bench.fixtures import medhal_in_process, rows, write_predictions
from tests.running import medhal_main
from tests.scripted_endpoint import Fault
from tests.tables import write_jsonl, write_parquet

SCORE = {"SUPPORT": 2, "NEI": 0, "CONTRADICT": -1}


def drug(body) -> int:
    return int(re.search(r"Drug (\d+)", body["messages"][-1]["content"]).group(1))


def test_eval_then_report(tmp_path, endpoint):
    data = rows(15)  # row i: component i % 5, gold i % 3 (SUPPORT, NEI, CONTRADICT)
    path = write_parquet(tmp_path / "d.parquet", data)

    def script(body, n):
        i = drug(body)
        if i == 4:
            return Fault("500")  # every attempt fails: the rollout errors
        if i % 5 == 3:
            return "I cannot decide."  # INVALID
        if i % 5 == 1:
            return "<think>x</think><score>-2</score>"  # parsed, right only for gold CONTRADICT
        return f"<think>x</think><score>{SCORE[data[i]['label']]}</score>"  # right

    ep = endpoint(script)
    out = tmp_path / "run"
    traces = run_eval("medfact-bench", ep.base_url, out, "--taskset.dataset-path", str(path), "-c", "4")
    assert sorted(t["task"]["data"]["idx"] for t in traces) == list(range(15))
    # The system prompt is sent unchanged as the system message.
    assert all(
        r["messages"][0] == {"role": "system", "content": data[0]["system_prompt"]} for r in ep.requests
    )
    by_idx = {t["task"]["data"]["idx"]: t for t in traces}
    failed = by_idx[4]
    assert failed["stop_condition"] == "error" and failed["rewards"] == {}
    assert failed["errors"][-1]["type"] == "ProviderError" and failed["errors"][-1]["status_code"] == 500
    assert by_idx[3]["rewards"] == {"accuracy": 0.0} and by_idx[3]["info"]["pred_label"] is None
    assert by_idx[3]["info"]["readings"] == {"medhal": None, "authors": None, "strict": None}
    assert by_idx[0]["rewards"] == {"accuracy": 1.0}
    assert by_idx[0]["info"] == {
        "readings": {"medhal": "SUPPORT", "authors": "SUPPORT", "strict": "SUPPORT"},
        "scores": {"medhal": 2, "authors": 2, "strict": 2},
        "parsed_score": 2,
        "pred_label": "SUPPORT",
    }
    assert by_idx[0]["metrics"]["correct_strict"] == 1.0 and by_idx[0]["metrics"]["parsed"] == 1.0

    proc = medhal_main("report", str(out))
    assert proc.returncode == 1, proc.stderr  # one errored rollout > --max-error-rate 0
    assert "1 of 15 rollouts failed" in proc.stderr and "ProviderError" in proc.stderr
    report = json.loads((out / "report.json").read_text())
    # Hand count: i % 5 in {0, 2, 4} answer right (0, 2, 5, 7, 9, 10, 12, 14; 4 errored); i % 5 == 1
    # answer -2, right only for gold CONTRADICT (11 of 1, 6, 11); 3, 8, 13 INVALID; 4 errored.
    assert report["n"] == 15 and report["n_errors"] == 1
    assert report["micro_accuracy"] == 9 / 15
    assert report["parse_rate"] == 11 / 15
    # Components of three: scifact 3/3, healthver 1/3, medaesqa 3/3, pubmedqa-fact 0/3, bioasq-fact 2/3.
    assert report["macro_accuracy"] == pytest.approx((1 + 1 / 3 + 1 + 0 + 2 / 3) / 5)
    comp = report["groups"]["dataset"]
    assert [(c, g["n"]) for c, g in comp.items()] == [
        ("scifact", 3),
        ("healthver", 3),
        ("medaesqa", 3),
        ("pubmedqa-fact", 3),
        ("bioasq-fact", 3),
    ]
    assert comp["bioasq-fact"]["error_rate"] == 1 / 3 and comp["healthver"]["accuracy"] == 1 / 3
    assert report["confusion"]["NEI"]["ERROR"] == 1  # idx 4 has gold NEI
    assert sum(row["INVALID"] for row in report["confusion"].values()) == 3
    # Every reply is in the exact format or unreadable: the three conventions agree.
    assert {c: f["accuracy"] for c, f in report["conventions"].items()} == {
        "medhal": 9 / 15,
        "authors": 9 / 15,
        "strict": 9 / 15,
    }
    assert report["provenance"]["data"]["sha256"] and report["provenance"]["models"] == {"scripted": 15}
    assert {"confusion.png", "by_dataset.png"} <= set(report["plots"])
    assert (out / "report.md").read_text().startswith("## MedFact-Bench")
    assert medhal_main("report", str(out), "--max-error-rate", "0.1").returncode == 0


def test_score_predictions_matches_hand_count(tmp_path):
    data = rows(12)  # gold i % 3: SUPPORT, NEI, CONTRADICT
    path = write_parquet(tmp_path / "d.parquet", data)
    replies = {
        0: "<think>a</think><score>2</score>",  # gold SUPPORT -> right
        1: "<score>0</score>",  # gold NEI -> right (strict: INVALID, no think block)
        2: "<think>a</think><score>1</score>",  # gold CONTRADICT -> SUPPORT, wrong
        3: "<think>a</think><score>9</score>",  # INVALID (off the scale)
        4: "<think>a</think><score>-2</score>",  # gold NEI -> CONTRADICT, wrong
        5: "<think>a</think><score>-1</score>",  # gold CONTRADICT -> right
        6: "no tags at all",  # INVALID
        7: "<think>a</think><score>0</score>",  # gold NEI -> right
        8: "<think>a</think><score>-2</score>",  # gold CONTRADICT -> right
        9: "<think>a</think><score>1</score>",  # gold SUPPORT -> right
        10: "<think>a</think><score>2</score>",  # gold NEI -> wrong
    }  # idx 11 (gold CONTRADICT) has no prediction
    out = tmp_path / "scored"
    proc = medhal_main(
        "score",
        "medfact-bench",
        "--dataset-path",
        str(path),
        "--predictions",
        str(write_predictions(tmp_path / "preds.jsonl", replies)),
        "-o",
        str(out),
    )
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
    # strict reads what has a think block and a score on the scale: 0, 2, 4, 5, 7, 8, 9, 10 (8 of 12;
    # the errored item counts as unread), and of those 0, 5, 7, 8, 9 are right.
    assert report["conventions"]["strict"]["parse_rate"] == 8 / 12
    assert report["conventions"]["strict"]["accuracy"] == 5 / 12
    assert report["conventions"]["authors"]["accuracy"] == 6 / 12
    assert report["errors"] == {"MissingPrediction: no prediction for idx #": 1}
    lines = (out / "traces.jsonl").read_text().splitlines()
    assert len(lines) == 12


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"idx": 0, "reply": "x"}\n{"idx": 0, "reply": "y"}\n', "preds.jsonl:2: duplicate idx 0"),
        ('{"idx": 7, "reply": "x"}\n', "preds.jsonl:1: idx 7 is not a task"),
        ('{"idx": 1}\n', "preds.jsonl:1: field 'reply' must be a string"),
        ('{"idx": "1", "reply": "x"}\n', "preds.jsonl:1: field 'idx' must be an integer"),
        ('{"idx": 1, "reply": "x"\n', "preds.jsonl:1: not valid JSON"),
    ],
)
def test_score_rejects_bad_prediction_files(tmp_path, text, message):
    path = write_jsonl(tmp_path / "d.jsonl", rows(3))
    preds = tmp_path / "preds.jsonl"
    preds.write_text(text)
    proc = medhal_in_process(
        "score",
        "medfact-bench",
        "--dataset-path",
        str(path),
        "--predictions",
        str(preds),
        "-o",
        str(tmp_path / "o"),
    )
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_score_passes_environment_options(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", rows(10))
    preds = write_predictions(tmp_path / "p.jsonl", {0: "<score>-1</score>", 1: "<score>2</score>"})
    out = tmp_path / "o"
    proc = medhal_in_process(
        "score",
        "medfact-bench",
        "--dataset-path",
        str(path),
        "--predictions",
        str(preds),
        "-o",
        str(out),
        "--taskset.subset",
        "healthver",
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads((out / "report.json").read_text())
    # healthver rows are 1 (gold NEI) and 6 (gold SUPPORT): -1 on the first is wrong, 2 on the second right.
    assert report["n"] == 2 and report["micro_accuracy"] == 0.5
    bad = medhal_in_process(
        "score",
        "medfact-bench",
        "--dataset-path",
        str(path),
        "--predictions",
        str(preds),
        "-o",
        str(out),
        "--taskset.split",
        "train",
    )
    assert bad.returncode == 2
    assert "invalid options for medfact-bench: option split" in bad.stderr and "'train'" in bad.stderr, (
        bad.stderr
    )


def test_score_under_another_convention(tmp_path):
    """`--taskset.parser authors` makes the authors' reading the run's: a draft score in the
    reasoning then wins (first block), and the trace records the run's convention."""
    path = write_jsonl(tmp_path / "d.jsonl", rows(3))  # gold SUPPORT, NEI, CONTRADICT
    replies = dict.fromkeys(range(3), "<think>first <score>2</score></think><score>-2</score>")
    preds = write_predictions(tmp_path / "p.jsonl", replies)
    results = {}
    for parser in ("medhal", "authors", "strict"):
        out = tmp_path / parser
        proc = medhal_in_process(
            "score",
            "medfact-bench",
            "--dataset-path",
            str(path),
            "--predictions",
            str(preds),
            "-o",
            str(out),
            "--no-plots",
            "--taskset.parser",
            parser,
        )
        assert proc.returncode == 0, proc.stderr
        report = json.loads((out / "report.json").read_text())
        traces = [json.loads(line) for line in (out / "traces.jsonl").read_text().splitlines()]
        assert {t["task"]["data"]["parser"] for t in traces} == {parser}
        results[parser] = (report["convention"], report["micro_accuracy"], report["parse_rate"])
    # medhal reads -2 (right for idx 2 only), authors 2 (right for idx 0 only), strict nothing.
    assert results == {
        "medhal": ("medhal", 1 / 3, 1.0),
        "authors": ("authors", 1 / 3, 1.0),
        "strict": ("strict", 0.0, 0.0),
    }


def test_report_compares_several_runs(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", rows(6))
    runs = []
    for name, score in (("all-support", 2), ("all-nei", 0)):
        preds = write_predictions(
            tmp_path / f"{name}.jsonl", dict.fromkeys(range(6), f"<score>{score}</score>")
        )
        out = tmp_path / name
        proc = medhal_in_process(
            "score",
            "medfact-bench",
            "--dataset-path",
            str(path),
            "--predictions",
            str(preds),
            "-o",
            str(out),
            "--model",
            name,
        )
        assert proc.returncode == 0, proc.stderr
        runs.append(out)
    cmp = tmp_path / "cmp"
    proc = medhal_main("report", *map(str, runs), "-o", str(cmp))
    assert proc.returncode == 0, proc.stderr
    (comparison,) = json.loads((cmp / "comparison.json").read_text())
    assert comparison["benchmark"] == "medfact-bench"
    # Gold labels cycle SUPPORT, NEI, CONTRADICT: each constant answer is right on 2 of 6.
    first, second = comparison["runs"]
    assert [(r["models"], r["n"], r["figures"]) for r in (first, second)] == [
        ({"all-support": 6}, 6, {"accuracy": 2 / 6, "parse_rate": 1.0}),
        ({"all-nei": 6}, 6, {"accuracy": 2 / 6, "parse_rate": 1.0}),
    ]
    # Paired on the same items: all-support is right on idx 0 and 3 only, all-nei on 1 and 4 only.
    assert second["mcnemar"] == {
        "right_only_in_first": 2,
        "right_only_in_this": 2,
        "p_value": 1.0,
        "test": "mcnemar",
    }
    assert second["difference"] == {"accuracy": 0.0, "parse_rate": 0.0}
    table = (cmp / "comparison.md").read_text()
    from medhal.kit.provenance import package_version

    version = package_version("medfact-bench")  # the comparison names the scoring code's version
    assert (
        f"| all-support | 6 | medhal | {version} | 0.333" in table
        and f"| all-nei | 6 | medhal | {version} | 0.333" in table
    )
    assert {p.name for p in (cmp / "run1").iterdir()} >= {"report.json", "report.md", "confusion.png"}
