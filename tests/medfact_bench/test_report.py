"""MedFact-Bench reports, every figure counted by hand (issue 16).

Two fixtures:
- twenty items in five components of UNEQUAL size (2, 3, 4, 5, 6) with different
  accuracies, so the macro accuracy (the paper's primary metric: the unweighted mean of the
  component accuracies) differs from the micro accuracy under every convention; the replies
  read differently under medhal, authors and strict, and the confusion matrices are
  asymmetric, so precision and recall differ (swapping gold and prediction changes them);
- a complete 14,274-row synthetic dataset in the Hub schema (rows written here), scored
  with `medhal score`: paper-comparable, with the published figures beside the run's own.

Every expected value is a number (a fraction) worked out by hand in the comments.
"""

from __future__ import annotations

import csv
import json
import math
from fractions import Fraction as F
from pathlib import Path

import pytest

import medfact_bench
from tests.medfact_bench.fixtures import FULL_SIZES, medhal_in_process, row, rows_of, write_predictions
from tests.tables import write_jsonl


def exact(s: int) -> str:
    return f"<think>weighed</think>\n<score>{s}</score>"  # read by all three


def bare(s: int) -> str:
    return f"<score>{s}</score>"  # no think block: medhal and authors, not strict


def decorated(s: int) -> str:
    return f"<think>weighed</think>\n<score>**{s}**</score>"  # medhal only (int('**2**') fails)


def drafted(first: int, final: int) -> str:
    # authors: the first block (inside the reasoning); medhal: the final one; strict: two tags, none
    return f"<think>draft <score>{first}</score></think>\n<score>{final}</score>"


NONE = "I cannot decide."  # INVALID everywhere

# idx: (component, gold, reply)      readings: medhal / authors / strict (S, N, C, - = INVALID)
ITEMS = [
    ("scifact", "SUPPORT", exact(2)),  # 0: S S S
    ("scifact", "NEI", decorated(0)),  # 1: N - -
    ("healthver", "CONTRADICT", exact(-2)),  # 2: C C C
    ("healthver", "SUPPORT", drafted(2, -1)),  # 3: C S -
    ("healthver", "NEI", exact(1)),  # 4: S S S
    ("medaesqa", "SUPPORT", bare(1)),  # 5: S S -
    ("medaesqa", "SUPPORT", exact(0)),  # 6: N N N
    ("medaesqa", "CONTRADICT", decorated(-1)),  # 7: C - -
    ("medaesqa", "NEI", exact(0)),  # 8: N N N
    ("pubmedqa-fact", "CONTRADICT", NONE),  # 9: - - -
    ("pubmedqa-fact", "CONTRADICT", exact(2)),  # 10: S S S
    ("pubmedqa-fact", "SUPPORT", exact(2)),  # 11: S S S
    ("pubmedqa-fact", "CONTRADICT", drafted(-2, 0)),  # 12: N C -
    ("pubmedqa-fact", "NEI", bare(0)),  # 13: N N -
    ("bioasq-fact", "SUPPORT", exact(1)),  # 14: S S S
    ("bioasq-fact", "SUPPORT", exact(-1)),  # 15: C C C
    ("bioasq-fact", "CONTRADICT", exact(-1)),  # 16: C C C
    ("bioasq-fact", "NEI", exact(-2)),  # 17: C C C
    ("bioasq-fact", "SUPPORT", decorated(2)),  # 18: S - -
    ("bioasq-fact", "CONTRADICT", exact(0)),  # 19: N N N
]

# Right answers by component (idx right):
#   medhal : scifact 0,1 = 2/2; healthver 2 = 1/3; medaesqa 5,7,8 = 3/4; pubmedqa 11,13 = 2/5;
#            bioasq 14,16,18 = 3/6
#   authors: scifact 0 = 1/2; healthver 2,3 = 2/3; medaesqa 5,8 = 2/4; pubmedqa 11,12,13 = 3/5;
#            bioasq 14,16 = 2/6
#   strict : scifact 0 = 1/2; healthver 2 = 1/3; medaesqa 8 = 1/4; pubmedqa 11 = 1/5; bioasq 14,16 = 2/6
COMPONENT_ACCURACY = {
    "medhal": {
        "scifact": F(2, 2),
        "healthver": F(1, 3),
        "medaesqa": F(3, 4),
        "pubmedqa-fact": F(2, 5),
        "bioasq-fact": F(3, 6),
    },
    "authors": {
        "scifact": F(1, 2),
        "healthver": F(2, 3),
        "medaesqa": F(2, 4),
        "pubmedqa-fact": F(3, 5),
        "bioasq-fact": F(2, 6),
    },
    "strict": {
        "scifact": F(1, 2),
        "healthver": F(1, 3),
        "medaesqa": F(1, 4),
        "pubmedqa-fact": F(1, 5),
        "bioasq-fact": F(2, 6),
    },
}
SIZES = {"scifact": 2, "healthver": 3, "medaesqa": 4, "pubmedqa-fact": 5, "bioasq-fact": 6}
FIGURES = {
    # micro = right / 20; macro = mean of the five component accuracies (sixtieths):
    #   medhal : 11/20; (60 + 20 + 45 + 24 + 30) / 60 / 5 = 179/300
    #   authors: 10/20; (30 + 40 + 30 + 36 + 20) / 60 / 5 = 156/300
    #   strict :  6/20; (30 + 20 + 15 + 12 + 20) / 60 / 5 =  97/300
    # parse rate: INVALID are idx 9 (medhal); 1, 7, 9, 18 (authors); 1, 3, 5, 7, 9, 12, 13, 18 (strict)
    "medhal": {"accuracy": F(11, 20), "macro_accuracy": F(179, 300), "parse_rate": F(19, 20)},
    "authors": {"accuracy": F(10, 20), "macro_accuracy": F(156, 300), "parse_rate": F(16, 20)},
    "strict": {"accuracy": F(6, 20), "macro_accuracy": F(97, 300), "parse_rate": F(12, 20)},
}
CONFUSION = {
    # rows gold, columns predicted; from the readings column above.
    "medhal": {
        "SUPPORT": {
            "SUPPORT": 5,
            "NEI": 1,
            "CONTRADICT": 2,
            "INVALID": 0,
            "ERROR": 0,
        },  # 0,5,11,14,18 | 6 | 3,15
        "NEI": {"SUPPORT": 1, "NEI": 3, "CONTRADICT": 1, "INVALID": 0, "ERROR": 0},  # 4 | 1,8,13 | 17
        "CONTRADICT": {
            "SUPPORT": 1,
            "NEI": 2,
            "CONTRADICT": 3,
            "INVALID": 1,
            "ERROR": 0,
        },  # 10 | 12,19 | 2,7,16 | 9
    },
    "authors": {
        "SUPPORT": {
            "SUPPORT": 5,
            "NEI": 1,
            "CONTRADICT": 1,
            "INVALID": 1,
            "ERROR": 0,
        },  # 0,3,5,11,14 | 6 | 15 | 18
        "NEI": {"SUPPORT": 1, "NEI": 2, "CONTRADICT": 1, "INVALID": 1, "ERROR": 0},  # 4 | 8,13 | 17 | 1
        "CONTRADICT": {
            "SUPPORT": 1,
            "NEI": 1,
            "CONTRADICT": 3,
            "INVALID": 2,
            "ERROR": 0,
        },  # 10 | 19 | 2,12,16 | 7,9
    },
    "strict": {
        "SUPPORT": {
            "SUPPORT": 3,
            "NEI": 1,
            "CONTRADICT": 1,
            "INVALID": 3,
            "ERROR": 0,
        },  # 0,11,14 | 6 | 15 | 3,5,18
        "NEI": {"SUPPORT": 1, "NEI": 1, "CONTRADICT": 1, "INVALID": 2, "ERROR": 0},  # 4 | 8 | 17 | 1,13
        "CONTRADICT": {
            "SUPPORT": 1,
            "NEI": 1,
            "CONTRADICT": 2,
            "INVALID": 3,
            "ERROR": 0,
        },  # 10 | 19 | 2,16 | 7,9,12
    },
}
CLASSES = {
    # precision = TP / predicted (column sum), recall = TP / gold (row sum, INVALID included),
    # F1 = 2 TP / (predicted + gold). Column sums: medhal S 7, N 6, C 6; authors 7, 4, 5; strict 5, 3, 4.
    # Row sums (support): S 8, N 5, C 7 under every convention.
    "medhal": {
        "SUPPORT": (F(5, 7), F(5, 8), F(10, 15), 8),
        "NEI": (F(3, 6), F(3, 5), F(6, 11), 5),
        "CONTRADICT": (F(3, 6), F(3, 7), F(6, 13), 7),
    },
    "authors": {
        "SUPPORT": (F(5, 7), F(5, 8), F(10, 15), 8),
        "NEI": (F(2, 4), F(2, 5), F(4, 9), 5),
        "CONTRADICT": (F(3, 5), F(3, 7), F(6, 12), 7),
    },
    "strict": {
        "SUPPORT": (F(3, 5), F(3, 8), F(6, 13), 8),
        "NEI": (F(1, 3), F(1, 5), F(2, 8), 5),
        "CONTRADICT": (F(2, 4), F(2, 7), F(4, 11), 7),
    },
}


def close(value: float, expected: F) -> bool:
    return math.isclose(value, float(expected), rel_tol=0, abs_tol=1e-12)


@pytest.fixture(scope="module")
def hand_counted(tmp_path_factory) -> dict[str, tuple[dict, str]]:
    """The twenty items scored once per convention: {parser: (report.json, report.md)}."""
    tmp = tmp_path_factory.mktemp("hand")
    dataset = write_jsonl(tmp / "d.jsonl", rows_of([(c, g) for c, g, _ in ITEMS]))
    predictions = write_predictions(tmp / "p.jsonl", {i: reply for i, (_, _, reply) in enumerate(ITEMS)})
    out = {}
    for parser in ("medhal", "authors", "strict"):
        proc = medhal_in_process(
            "score",
            "medfact-bench",
            "--dataset-path",
            str(dataset),
            "--predictions",
            str(predictions),
            "-o",
            str(tmp / parser),
            "--no-plots",
            "--taskset.parser",
            parser,
        )
        assert proc.returncode == 0, proc.stderr
        out[parser] = (
            json.loads((tmp / parser / "report.json").read_text()),
            (tmp / parser / "report.md").read_text(),
        )
    return out


@pytest.mark.parametrize("parser", ["medhal", "authors", "strict"])
def test_macro_and_micro_accuracy_by_hand(hand_counted, parser):
    report, _ = hand_counted[parser]
    assert report["convention"] == parser
    assert report["n"] == 20 and report["n_errors"] == 0
    assert close(report["micro_accuracy"], FIGURES[parser]["accuracy"])
    assert close(report["macro_accuracy"], FIGURES[parser]["macro_accuracy"])
    assert report["macro_accuracy"] != report["micro_accuracy"]
    assert close(report["parse_rate"], FIGURES[parser]["parse_rate"])
    assert report["macro_over"] == "dataset"
    assert report["macro_groups"] == ["scifact", "healthver", "medaesqa", "pubmedqa-fact", "bioasq-fact"]
    # Every convention's figures are in every run's report, whichever convention it ran under.
    for convention, figures in FIGURES.items():
        for name, expected in figures.items():
            assert close(report["conventions"][convention][name], expected), (convention, name)
    groups = report["groups"]["dataset"]
    assert list(groups) == ["scifact", "healthver", "medaesqa", "pubmedqa-fact", "bioasq-fact"]
    for component, size in SIZES.items():
        assert groups[component]["n"] == size
        assert close(groups[component]["accuracy"], COMPONENT_ACCURACY[parser][component])
        for convention in FIGURES:
            got = groups[component]["conventions"][convention]["accuracy"]
            assert close(got, COMPONENT_ACCURACY[convention][component]), (component, convention)


@pytest.mark.parametrize("parser", ["medhal", "authors", "strict"])
def test_confusion_and_per_class_figures_by_hand(hand_counted, parser):
    report, markdown = hand_counted[parser]
    assert report["confusion"] == CONFUSION[parser]
    assert list(report["classes"]) == ["SUPPORT", "NEI", "CONTRADICT"]
    for label, (precision, recall, f1, support) in CLASSES[parser].items():
        figures = report["classes"][label]
        assert close(figures["precision"], precision), (label, "precision")
        assert close(figures["recall"], recall), (label, "recall")
        assert close(figures["f1"], f1), (label, "f1")
        assert figures["support"] == support
        assert precision != recall  # the fixture separates them: swapping gold and prediction shows
    assert f"### Per class ({parser} reading)" in markdown


def test_a_partial_run_is_not_paper_comparable(hand_counted):
    """20 of 14,274 items: complete as a run (every selected task once), but not the
    benchmark, so no published figure is shown beside it."""
    report, markdown = hand_counted["medhal"]
    assert (report["n_expected"], report["complete"], report["paper_comparable"]) == (20, True, False)
    assert report["published"] == []
    assert "Published figures" not in markdown


# --------------------------------------------------------------- a complete synthetic run

RIGHT_SCORE = {"SUPPORT": 2, "NEI": 0, "CONTRADICT": -2}
WRONG_SCORE = {"SUPPORT": -1, "NEI": 1, "CONTRADICT": 0}
RIGHT = {"scifact": 210, "healthver": 398, "medaesqa": 6402, "pubmedqa-fact": 275, "bioasq-fact": 2569}
"""Right answers per component; the rest of each component is answered wrong. Accuracies:
210/340 = .6176, 398/903 = .4408, 6402/9106 = .7031, 275/500 = .55, 2569/3425 = .7501,
chosen so that each published figure is either well inside or well outside the run's 95%
interval (half-width about 1.96 * sqrt(p(1-p)/n): .052, .032, .0094, .044, .0145)."""
ACCURACY = {c: F(RIGHT[c], FULL_SIZES[c]) for c in RIGHT}
MACRO = sum(ACCURACY.values()) / 5  # (.617647 + .440753 + .703053 + .55 + .750073) / 5 = .612305
MICRO = F(sum(RIGHT.values()), 14274)  # 9854/14274 = .690346
INSIDE = {
    # |published - run| against the half-widths above:
    ("Llama-3.2-3B-Instruct", "scifact"),  # .600 vs .6176 (.018 < .052)
    ("Qwen2.5-3B-Instruct", "scifact"),  # .638 (.020 < .052); the next, .812, is .19 away
    ("Llama-3.2-3B-Instruct", "healthver"),  # .435 vs .4408 (.006 < .032)
    ("Qwen2.5-3B-Instruct", "healthver"),  # .447 (.006); the next, .575, is .13 away
    ("GPT-5", "medaesqa"),  # .703 vs .7031 (.000 < .0094)
    ("GPT-4o-mini", "medaesqa"),  # .704 (.001); .687 and .717 are .016 and .014 away: outside
    ("Llama-3.2-3B-Instruct", "pubmedqa-fact"),  # .550 vs .55; .470 is .08 away: outside
    ("o3-mini", "bioasq-fact"),  # .747 vs .7501 (.003 < .0145)
    ("GPT-5", "bioasq-fact"),  # .753 (.003); .771 and .725 are .021 and .025 away: outside
}
# Every macro figure (.511 to .736) is over .09 from .6123, whose half-width is about
# 1.96 * sqrt(sum of the component variances) / 5 = .015: all outside.


def full_items() -> list[tuple[str, str, int]]:
    """(component, gold, score replied) for the 14,274 items: labels cycle within each
    component, the first RIGHT[c] items are answered right."""
    items = []
    for component, size in FULL_SIZES.items():
        for j in range(size):
            gold = ("SUPPORT", "NEI", "CONTRADICT")[j % 3]
            items.append((component, gold, (RIGHT_SCORE if j < RIGHT[component] else WRONG_SCORE)[gold]))
    return items


@pytest.fixture(scope="module")
def full_run(tmp_path_factory) -> Path:
    """`medhal score` over a complete synthetic benchmark (about a minute on a shared machine)."""
    tmp = tmp_path_factory.mktemp("full")
    items = full_items()
    assert len(items) == 14274
    prompt = "Rate the article against the claim from -2 to 2 (a test prompt of ours)."
    dataset = tmp / "medfact_full.jsonl"
    with open(dataset, "w", encoding="utf-8") as f:
        for i, (component, gold, _) in enumerate(items):
            f.write(json.dumps(row(i, component, gold, prompt)) + "\n")
    predictions = write_predictions(tmp / "p.jsonl", {i: exact(s) for i, (_, _, s) in enumerate(items)})
    out = tmp / "run"
    proc = medhal_in_process(
        "score",
        "medfact-bench",
        "--dataset-path",
        str(dataset),
        "--predictions",
        str(predictions),
        "-o",
        str(out),
        "--no-plots",
    )
    assert proc.returncode == 0, proc.stderr
    return out


def published_csv() -> list[dict]:
    path = Path(medfact_bench.__file__).parent / "published.csv"
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_complete_run_shows_published_figures(full_run):
    report = json.loads((full_run / "report.json").read_text())
    assert (report["n"], report["n_expected"], report["n_distinct"], report["n_errors"]) == (
        14274,
        14274,
        14274,
        0,
    )
    assert report["complete"] is True and report["paper_comparable"] is True
    assert close(report["macro_accuracy"], MACRO) and close(report["micro_accuracy"], MICRO)
    assert close(report["conventions"]["authors"]["macro_accuracy"], MACRO)
    for component, size in FULL_SIZES.items():
        assert report["groups"]["dataset"][component]["n"] == size
    expected = []
    for line in (line for line in published_csv() if line["kind"] == "paper"):
        group = line["group"]
        run = ACCURACY[group] if group else MACRO
        inside = (line["model"], group) in INSIDE
        expected.append(
            (
                line["model"],
                line["statistic"],
                group,
                float(line["value"]),
                float(run),
                inside,
                line["source"],
            )
        )
    assert len(expected) == 54  # nine models: macro and five components each
    got = [
        (r["model"], r["statistic"], r["group"], r["published"], r["run"], r["inside_ci"], r["source"])
        for r in report["published"]
        if r["kind"] == "paper"
    ]
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g[:4] == e[:4] and g[5:] == e[5:], (g, e)
        assert math.isclose(g[4], e[4], abs_tol=1e-12), (g, e)
    for r in report["published"]:
        if r["run_ci"] is not None:
            low, high = r["run_ci"]
            assert low <= r["run"] <= high
            assert r["inside_ci"] == (low <= r["published"] <= high)
    assert "### Published figures" in (full_run / "report.md").read_text()


def test_a_complete_run_at_the_pin_also_shows_the_replication_and_the_baseline(full_run):
    """The run's dataset is a local file (no revision): the replication's setting. Its gold
    labels cycle within each component, so its class counts are not the benchmark's, and the
    gold-count rows say they differ."""
    report = json.loads((full_run / "report.json").read_text())
    kinds = {}
    for r in report["published"]:
        kinds.setdefault(r["kind"], []).append(r)
    assert list(kinds) == ["paper", "replication", "baseline"]
    assert len(kinds["replication"]) == 2 * 8 + 3
    gold = {
        label: sum(1 for _, g, _ in full_items() if g == label) for label in ("SUPPORT", "NEI", "CONTRADICT")
    }
    assert gold == {"SUPPORT": 4760, "NEI": 4758, "CONTRADICT": 4756}
    counts = {
        r["group"]: (r["published"], r["run"], r["equal"])
        for r in kinds["replication"]
        if r["model"] == "gold labels"
    }
    assert counts == {
        "SUPPORT": (10118, 4760, False),
        "NEI": (2988, 4758, False),
        "CONTRADICT": (1168, 4756, False),
    }
    qwen_scifact = next(
        r for r in kinds["replication"] if r["model"] == "Qwen2.5-3B-Instruct" and r["group"] == "scifact"
    )
    assert (qwen_scifact["published"], qwen_scifact["reading"]) == (round(213 / 340, 4), "authors")
    assert close(qwen_scifact["run"], ACCURACY["scifact"])
    [baseline] = kinds["baseline"]
    assert (baseline["model"], baseline["published"]) == ("a constant SUPPORT reply", 0.7088)
    assert close(baseline["run"], MICRO)


@pytest.mark.parametrize("component", ["scifact", "pubmedqa-fact"])
def test_component_interval_is_a_95_percent_interval(full_run, component):
    """The bootstrap interval of a component accuracy against the normal approximation
    p ± 1.96 sqrt(p(1-p)/n): scifact .6176 ± .0517, pubmedqa .55 ± .0436. They agree
    within .004; a 90% interval (1.645 instead of 1.96) would be .008 and .007 narrower."""
    report = json.loads((full_run / "report.json").read_text())
    p, n = float(ACCURACY[component]), FULL_SIZES[component]
    half = 1.96 * math.sqrt(p * (1 - p) / n)
    low, high = report["groups"]["dataset"][component]["conventions"]["authors"]["accuracy_ci"]
    assert abs(low - (p - half)) < 0.004 and abs(high - (p + half)) < 0.004, (low, high, p - half, p + half)


def test_missing_task_hides_published_figures(full_run, tmp_path):
    """The same run with its last trace gone: incomplete, not comparable, no published rows."""
    lines = (full_run / "traces.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "traces.jsonl").write_text("".join(lines[:-1]), encoding="utf-8")
    proc = medhal_in_process("report", str(tmp_path / "run"), "-o", str(tmp_path / "out"), "--no-plots")
    assert proc.returncode == 1  # an incomplete run fails the gate without --allow-incomplete
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert (report["n"], report["n_missing"], report["missing_idx"]) == (14273, 1, [14273])
    assert report["complete"] is False and report["paper_comparable"] is False
    assert report["published"] == []
    assert "Published figures" not in (tmp_path / "out" / "report.md").read_text()


def test_one_component_is_not_paper_comparable(full_run, tmp_path):
    """`--taskset.subset scifact` of the complete file: a complete run of its 340 tasks, but
    not of the benchmark."""
    dataset = full_run.parent / "medfact_full.jsonl"  # the report shows only the path's last parts
    shown = json.loads((full_run / "report.json").read_text())["provenance"]["data"]["path"]
    assert shown == f"…/{dataset.parent.name}/{dataset.name}"
    dataset = str(dataset)
    predictions = write_predictions(
        tmp_path / "p.jsonl",
        {
            i: exact(RIGHT_SCORE[g] if i < 210 else WRONG_SCORE[g])
            for i, (_, g, _) in enumerate(full_items()[:340])
        },
    )
    proc = medhal_in_process(
        "score",
        "medfact-bench",
        "--dataset-path",
        dataset,
        "--predictions",
        str(predictions),
        "-o",
        str(tmp_path / "out"),
        "--no-plots",
        "--taskset.subset",
        "scifact",
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert (report["n"], report["complete"], report["paper_comparable"]) == (340, True, False)
    assert close(report["micro_accuracy"], F(210, 340)) and close(report["macro_accuracy"], F(210, 340))
    assert report["macro_groups"] == ["scifact"]
    assert report["published"] == []
    assert "Published figures" not in (tmp_path / "out" / "report.md").read_text()
