"""Benchmark reports from saved rollouts: report.json, report.md and PNG plots.

A benchmark describes its report with a small `ReportSpec` (where the gold and the
predicted labels live, how to group, which rates to show, and optionally a function for
its own figures); everything else is shared here. Rollouts are streamed from disk and
reduced to compact `Item`s, so memory grows with the number of items, not the size of
the trace file. An errored rollout is an item too: it predicts ERROR, counts as wrong
and stays in every denominator.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medhal import metrics as m
from medhal.traces import TraceFileError, TraceRecord, iter_traces


@dataclass(slots=True)
class Item:
    """One rollout, reduced to what reports compute with."""

    idx: int
    groups: dict[str, str]
    gold: str | None
    pred: str
    """A class label, `INVALID` (unparseable reply) or `ERROR` (no reply)."""
    correct: float
    parsed: bool
    values: dict[str, Any]
    """The spec's rate metrics and `item_values`, as recorded on the trace."""
    cluster: str | None
    error: str | None


@dataclass(frozen=True)
class ReportSpec:
    benchmark: str
    """The environment id; every trace's `task.data.benchmark` must equal it."""
    title: str
    task_type: str
    """The Task class name; traces of any other `task.type` are rejected."""
    gold_field: str | None = None
    """TaskData field with the gold class (None: no confusion matrix)."""
    pred_key: str | None = None
    """`trace.info` key with the predicted class (absent or None means INVALID)."""
    classes: tuple[str, ...] = ()
    pred_only_classes: tuple[str, ...] = ()
    """Predicted labels that are never gold (e.g. an abstention): extra confusion columns."""
    correct_metric: str = "correct"
    """Metric (or unit-weight reward) that is 1.0 when the item is answered correctly."""
    parsed_metric: str = "parsed"
    """Metric that is 1.0 when the reply could be parsed."""
    rate_metrics: tuple[str, ...] = ()
    """Other 0/1 metrics reported as rates (over the items that record them)."""
    item_values: tuple[str, ...] = ()
    """`trace.info` keys the benchmark's own `figures` function reads from each item."""
    group_fields: tuple[str, ...] = ()
    """TaskData fields to break results down by; the first defines the macro average."""
    cluster_field: str | None = None
    """TaskData field naming the source an item shares with others (bootstrap clusters)."""
    full_size: int | None = None
    """Item count of the complete benchmark; the macro figure is flagged paper-comparable
    only when a report covers exactly this many distinct items."""
    figures: Callable[[list[Item]], dict[str, Any]] | None = None
    """The benchmark's own figures for a list of items (overall and per group)."""
    headline: tuple[str, ...] = ("micro_accuracy", "macro_accuracy")
    """Keys shown in the summary and in comparisons of several runs."""
    notes: tuple[str, ...] = ()
    """Lines printed under the report (e.g. how an ambiguous grouping was resolved)."""


# ---------------------------------------------------------------------------- reading


def to_item(record: TraceRecord, spec: ReportSpec) -> Item:
    data = record.data
    benchmark = data.get("benchmark")
    if benchmark != spec.benchmark:
        raise TraceFileError(
            f"{record.where}: field 'task.data.benchmark' is {benchmark!r}, but this report is "
            f"for {spec.benchmark!r} (a row from another benchmark?)"
        )
    if record.task_type is not None and record.task_type != spec.task_type:
        raise TraceFileError(
            f"{record.where}: field 'task.type' is {record.task_type!r}; {spec.benchmark} "
            f"traces have task type {spec.task_type!r}"
        )
    try:
        groups = {f: str(data[f]) for f in spec.group_fields}
        idx = data["idx"]
        gold = str(data[spec.gold_field]) if spec.gold_field else None
        cluster = str(data[spec.cluster_field]) if spec.cluster_field else None
    except KeyError as e:
        raise TraceFileError(f"{record.where}: field 'task.data.{e.args[0]}' is missing") from e
    if isinstance(idx, bool) or not isinstance(idx, int):
        raise TraceFileError(f"{record.where}: field 'task.data.idx' is {idx!r}, not an integer")
    if gold is not None and spec.classes and gold not in spec.classes:
        raise TraceFileError(
            f"{record.where}: field 'task.data.{spec.gold_field}' is {gold!r}, not one of {list(spec.classes)}"
        )
    if record.errored:
        return Item(idx, groups, gold, m.ERROR, 0.0, False, {}, cluster, record.error_message)
    metrics = {**record.rewards, **record.metrics}
    if spec.correct_metric not in metrics:
        raise TraceFileError(
            f"{record.where}: field 'metrics.{spec.correct_metric}' is missing from a rollout "
            "without errors (was it scored?)"
        )
    pred = record.info.get(spec.pred_key) if spec.pred_key else None
    pred = str(pred) if pred is not None else m.INVALID
    if gold is not None and spec.classes and pred not in (*spec.classes, *spec.pred_only_classes, m.INVALID):
        raise TraceFileError(
            f"{record.where}: field 'info.{spec.pred_key}' is {pred!r}, not one of "
            f"{[*spec.classes, *spec.pred_only_classes]} or null"
        )

    def number(key: str) -> float:
        value = metrics[key]
        if isinstance(value, (int, float)):
            return float(value)
        raise TraceFileError(f"{record.where}: field 'metrics.{key}' is {value!r}, not a number")

    values = {k: number(k) for k in spec.rate_metrics if k in metrics}
    values.update({k: record.info[k] for k in spec.item_values if k in record.info})
    return Item(
        idx,
        groups,
        gold,
        pred,
        number(spec.correct_metric),
        bool(number(spec.parsed_metric)) if spec.parsed_metric in metrics else False,
        values,
        cluster,
        None,
    )


@dataclass
class RunSummary:
    """What a report needs besides the items: where they came from."""

    path: str
    items: list[Item] = field(default_factory=list)
    provenance: list[dict[str, Any]] = field(default_factory=list)
    models: Counter = field(default_factory=Counter)
    sampling: list[dict[str, Any]] = field(default_factory=list)
    verifiers_versions: Counter = field(default_factory=Counter)


def read_run(path: str | Path, spec: ReportSpec) -> RunSummary:
    summary = RunSummary(path=str(path))
    seen_provenance: set[str] = set()
    seen_sampling: set[str] = set()
    for record in iter_traces(path):
        summary.items.append(to_item(record, spec))
        prov = record.data.get("provenance")
        key = json.dumps(prov, sort_keys=True)
        if prov is not None and key not in seen_provenance:
            seen_provenance.add(key)
            summary.provenance.append(prov)
        skey = json.dumps(record.sampling, sort_keys=True)
        if skey not in seen_sampling:
            seen_sampling.add(skey)
            summary.sampling.append(record.sampling)
        summary.models[record.model or "unknown"] += 1
        summary.verifiers_versions[record.verifiers_version or "unknown"] += 1
    return summary


# ---------------------------------------------------------------------------- figures


def group_figures(items: list[Item], spec: ReportSpec) -> dict[str, Any]:
    """The figures every benchmark reports for a set of items, plus its own."""
    n = len(items)
    correct = [i.correct for i in items]
    clusters = [i.cluster for i in items] if spec.cluster_field else None
    out: dict[str, Any] = {
        "n": n,
        "n_errors": sum(1 for i in items if i.error is not None),
        "accuracy": m.mean(correct),
        "accuracy_ci": list(m.bootstrap_mean_ci(correct, clusters)),
        "parse_rate": m.mean([float(i.parsed) for i in items]),
    }
    out["error_rate"] = m.safe_div(out["n_errors"], n)
    for name in spec.rate_metrics:
        # Errored rollouts count as 0, so a rate never silently loses its failures.
        scored = [i.values[name] for i in items if name in i.values]
        if scored:
            errored = [0.0 for i in items if i.error is not None]
            out[name] = m.mean(scored + errored)
            out[f"{name}_n"] = len(scored) + len(errored)
    if spec.figures is not None:
        out.update(spec.figures(items))
    return out


def build_report(summary: RunSummary, spec: ReportSpec) -> dict[str, Any]:
    items = summary.items
    overall = group_figures(items, spec)
    groups: dict[str, dict[str, Any]] = {}
    for fld in spec.group_fields:
        values = sorted({i.groups[fld] for i in items})
        groups[fld] = {v: group_figures([i for i in items if i.groups[fld] == v], spec) for v in values}
    primary = groups.get(spec.group_fields[0], {}) if spec.group_fields else {}
    macro = m.mean([g["accuracy"] for g in primary.values()]) if primary else overall["accuracy"]
    distinct = len({i.idx for i in items})
    report: dict[str, Any] = {
        "benchmark": spec.benchmark,
        "title": spec.title,
        "source": summary.path,
        "n": overall["n"],
        "n_errors": overall["n_errors"],
        "error_rate": overall["error_rate"],
        "micro_accuracy": overall["accuracy"],
        "micro_accuracy_ci": overall["accuracy_ci"],
        "macro_accuracy": macro,
        "macro_over": spec.group_fields[0] if spec.group_fields else None,
        "paper_comparable": spec.full_size is not None and distinct == spec.full_size,
        "parse_rate": overall["parse_rate"],
        "overall": overall,
        "groups": groups,
    }
    if spec.gold_field and spec.classes:
        gold = [i.gold for i in items]
        pred = [i.pred for i in items]
        report["classes"] = {c: v for c, v in m.per_class_prf(gold, pred, spec.classes).items()}
        columns = (*spec.pred_only_classes, m.INVALID, m.ERROR)
        report["confusion"] = m.confusion(gold, pred, spec.classes, columns)
    report["errors"] = dict(Counter(i.error for i in items if i.error is not None).most_common())
    report["provenance"] = {
        "data": summary.provenance[0] if len(summary.provenance) == 1 else summary.provenance,
        "models": dict(summary.models),
        "sampling": summary.sampling[0] if len(summary.sampling) == 1 else summary.sampling,
        "verifiers": dict(summary.verifiers_versions),
    }
    report["notes"] = list(spec.notes)
    return report


# ---------------------------------------------------------------------------- markdown


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, float) for v in value):
        return f"[{value[0]:.3f}, {value[1]:.3f}]"
    return str(value)


def _table(header: list[str], rows: Iterable[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in rows]
    return lines


def _scalar_keys(figures: dict[str, Any]) -> list[str]:
    skip = {"n", "n_errors", "accuracy", "accuracy_ci"}
    return [k for k, v in figures.items() if k not in skip and not k.endswith("_n") and isinstance(v, (int, float))]


def to_markdown(report: dict[str, Any], spec: ReportSpec) -> str:
    lines = [f"## {report['title']}", "", f"Source: `{report['source']}`", ""]
    head = [["n", report["n"]], ["errors", report["n_errors"]]]
    head += [[k, report[k] if k in report else report["overall"].get(k)] for k in spec.headline]
    head += [["micro accuracy 95% CI", report["micro_accuracy_ci"]], ["parse rate", report["parse_rate"]]]
    if report["macro_over"]:
        head.append(["macro over", report["macro_over"]])
    head.append(["paper-comparable (complete set)", report["paper_comparable"]])
    lines += _table(["figure", "value"], head) + [""]
    extra = _scalar_keys(report["overall"])
    for fld, values in report["groups"].items():
        keys = ["n", "n_errors", "accuracy", "accuracy_ci", *[k for k in extra if k not in ("error_rate",)]]
        lines += [f"### By {fld}", ""]
        lines += _table([fld, *keys], [[v, *[g.get(k, "") for k in keys]] for v, g in values.items()])
        lines.append("")
    if "classes" in report:
        lines += ["### Per class", ""]
        lines += _table(
            ["class", "precision", "recall", "f1", "support"],
            [[c, v["precision"], v["recall"], v["f1"], v["support"]] for c, v in report["classes"].items()],
        )
        columns = list(next(iter(report["confusion"].values())).keys())
        lines += ["", "### Confusion (rows: gold, columns: predicted)", ""]
        lines += _table(["gold \\ pred", *columns], [[g, *row.values()] for g, row in report["confusion"].items()])
        lines.append("")
    if report["errors"]:
        lines += ["### Errored rollouts (kept in every denominator, scored wrong)", ""]
        lines += _table(["count", "error"], [[c, e[:160]] for e, c in report["errors"].items()])
        lines.append("")
    if report["notes"]:
        lines += [f"- {note}" for note in report["notes"]] + [""]
    prov = report["provenance"]
    lines += ["### Provenance", "", "```json", json.dumps(prov, indent=1, sort_keys=True), "```", ""]
    return "\n".join(lines)


def comparison_markdown(reports: list[dict[str, Any]], specs: list[ReportSpec]) -> str:
    """One table per benchmark (its own headline figures as columns), a row per run."""
    lines = ["## Comparison", ""]
    by_benchmark: dict[str, list[tuple[dict[str, Any], ReportSpec]]] = {}
    for report, spec in zip(reports, specs):
        by_benchmark.setdefault(report["benchmark"], []).append((report, spec))
    for benchmark, runs in by_benchmark.items():
        keys = list(runs[0][1].headline)
        rows = [
            [", ".join(r["provenance"]["models"]), r["n"], r["n_errors"],
             *[r.get(k, r["overall"].get(k, "")) for k in keys], r["parse_rate"], r["source"]]
            for r, _ in runs
        ]
        lines += [f"### {runs[0][0]['title']}", ""]
        lines += _table(["model", "n", "errors", *keys, "parse_rate", "run"], rows) + [""]
    return "\n".join(lines)
