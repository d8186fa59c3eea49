"""Comparing runs: is a difference real, and are the runs comparable at all?

Runs of one benchmark over the same tasks (the same task ids, and each task's content the
same: a digest of its data, so the same idx holding another item is caught) are compared
PAIRED, on per-task means over rollouts: for each headline statistic, the difference to the first
run with a cluster bootstrap interval that resamples the same clusters for both runs
(what the runs share cancels, so the interval is much narrower than for independent
runs), and for accuracy an exact McNemar test on the items where exactly one run is
right. Runs over different tasks are compared unpaired (independent draws), and the
table says so. Runs whose environment version, reading convention, taskset options (all
but `shard`), prompt assets, dataset revision or sampling differ are flagged (and fail
`medhal report --strict-compare`): their difference is partly the code's or the setting's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from medhal.reports import metrics as m
from medhal.kit.outcomes import CONVENTIONS
from medhal.reports.provenance import run_code, run_options
from medhal.reports.report import Run, _shifted, _statistics

UNCOMPARED_OPTIONS = ("shard", "dataset_path", "parser")
"""Options left out of a run's `options` identity: `shard` (the shards of one run differ in
it), `dataset_path` (where the file lies; its content is compared by the dataset's sha256)
and `parser` (compared on its own, as `convention`)."""


def _prompt_and_data(report: Mapping[str, Any]) -> tuple[str, str]:
    data = report.get("provenance", {}).get("data")
    records = (
        data
        if isinstance(data, list)
        else list(data.values())
        if isinstance(data, dict) and "code" not in data
        else [data]
    )
    prompts, datasets = [], []
    for record in records:
        if not isinstance(record, dict):
            continue
        prompts.append(
            repr(
                {
                    k: record.get(k)
                    for k in ("prompt", "prompt_assets", "prompt_version", "num_shots", "shot_seed")
                }
            )
        )
        datasets.append(
            repr({k: record.get(k) for k in ("dataset", "config", "revision", "sha256", "test_set")})
        )
    return "|".join(sorted(prompts)), "|".join(sorted(datasets))


def identity(report: Mapping[str, Any]) -> dict[str, str]:
    """What must agree for two runs to measure the same thing: the environment's and medhal's
    versions, the reading convention, every taskset option but where the data lies and the
    shard (any of them may change the items or the scoring rule), the prompt, the dataset
    and the sampling."""
    code = run_code(report)
    prompt, dataset = _prompt_and_data(report)
    medhal = str(code.get("medhal", "unknown"))
    return {
        "environment_version": str(code.get("environment_version", "unknown")),
        "medhal_version": ".".join(medhal.split(".")[:2]),
        "convention": str(report.get("convention")),
        "options": repr(
            sorted((k, repr(v)) for k, v in run_options(report).items() if k not in UNCOMPARED_OPTIONS)
        ),
        "prompt": prompt,
        "dataset": dataset,
        "sampling": repr(sorted(_sampling(report).items())),
    }


def mismatches(reports: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """For each report, the compared fields in which it differs from the first."""
    first = identity(reports[0])
    return [[k for k, v in identity(r).items() if v != first[k]] for r in reports]


PROMPT_KEYS = ("prompt", "prompt_assets", "prompt_version", "num_shots", "shot_seed")
DATASET_KEYS = ("dataset", "config", "revision", "sha256", "test_set")


def _settings(records: Any, keys: Sequence[str] | None = None) -> dict[str, Any]:
    """Settings by name from one record or a list of them (a run with several records, one
    per test set say, gives each value seen), only `keys` when given."""
    merged: dict[str, list[Any]] = {}
    for one in [records] if isinstance(records, dict) else records if isinstance(records, list) else []:
        if not isinstance(one, dict):
            continue
        for key in keys or one:
            seen = merged.setdefault(key, [])
            if one.get(key) not in seen:
                seen.append(one.get(key))
    return {k: v[0] if len(v) == 1 else v for k, v in merged.items()}


def _data_records(report: Mapping[str, Any]) -> list[Any]:
    data = report.get("provenance", {}).get("data")
    if isinstance(data, list):
        return data
    if isinstance(data, dict) and "code" not in data:
        return [v for vs in data.values() for v in (vs if isinstance(vs, list) else [vs])]
    return [data]


def _sampling(report: Mapping[str, Any]) -> dict[str, Any]:
    """The run's sampling settings by name, those set only (null is unset, as absent is): what
    `identity` compares and `differences` lists, so a flag always names what differs."""
    settings = _settings(report.get("provenance", {}).get("sampling"))
    return {k: v for k, v in settings.items() if v is not None}


def _compared(report: Mapping[str, Any], fld: str) -> dict[str, Any]:
    if fld == "sampling":
        return _sampling(report)
    if fld in ("prompt", "dataset"):
        return _settings(_data_records(report), PROMPT_KEYS if fld == "prompt" else DATASET_KEYS)
    return {"": identity(report).get(fld)}


def differences(first: Mapping[str, Any], report: Mapping[str, Any], fields: Sequence[str]) -> list[dict[str, Any]]:
    """What differs, value by value, in each of `fields` (as `mismatches` names them): for
    sampling, prompt and dataset each setting with both values (None: not set), for the
    versions and the reading convention the two values."""
    out: list[dict[str, Any]] = []
    for fld in fields:
        a, b = _compared(first, fld), _compared(report, fld)
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                out.append({"field": fld, "setting": key or None, "first": a.get(key), "this": b.get(key)})
    return out


def run_warnings(report: Mapping[str, Any]) -> list[str]:
    """What a reader of a comparison must know about one run, as its own report says it."""
    from medhal.reports.markdown import completeness_problems

    warnings = []
    if report.get("demo_prompts"):
        warnings.append("demo prompts: a pipeline check, not benchmark results")
    warnings += [f"incomplete: {p}" for p in completeness_problems(report)]
    if report.get("n_errors"):
        warnings.append(f"{report['n_errors']} of {report['n']} rollouts failed (counted wrong)")
    return warnings


def compare_runs(runs: Sequence[Run], reports: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The comparison of each run with the first, per benchmark (runs of different
    benchmarks are not compared)."""
    base_run = runs[0]
    spec = base_run.spec
    statistics = _statistics(spec)
    headline = [name for name in ("accuracy", *spec.headline) if name in statistics]
    headline = list(dict.fromkeys(headline))
    rows: list[dict[str, Any]] = []
    flags = mismatches(reports)
    for i, (run, report) in enumerate(zip(runs, reports, strict=True)):
        row: dict[str, Any] = {
            "run": report["source"],
            "models": report["provenance"].get("models"),
            "n": report["n"],
            "convention": report["convention"],
            "code": run_code(report),
            "figures": {name: report["conventions"][report["convention"]].get(name) for name in headline},
            "intervals": {
                name: report["conventions"][report["convention"]].get(f"{name}_ci") for name in headline
            },
            "differs_in": flags[i],
            "differences": differences(reports[0], report, flags[i]),
            "warnings": run_warnings(report),
        }
        if i > 0:
            row.update(_difference(base_run, run, headline, statistics))
            row["difference"] = {
                name: (row["figures"][name] - rows[0]["figures"][name])
                if row["figures"][name] is not None and rows[0]["figures"][name] is not None
                else None
                for name in headline
            }
        rows.append(row)
    return {"benchmark": spec.benchmark, "title": spec.title, "headline": headline, "runs": rows}


def _difference(a: Run, b: Run, names: list[str], statistics: Mapping[str, m.Statistic]) -> dict[str, Any]:
    if a.items is None or b.items is None:
        raise ValueError("runs were read without their items; read them with keep_items=True to compare")
    # Item rows: correct under each convention, then the run's own-convention columns.
    start, width = len(CONVENTIONS), len(a.spec.columns.names)
    own = {name: _shifted(statistics[name], start, width) for name in names}
    # Paired on per-item means: a task's rollouts are one item, whatever k each run has.
    means_a, means_b = a.items.means(), b.items.means()
    try:
        pairing = m.pair_runs(means_a, means_b)
    except ValueError as e:
        table_a, table_b = _cluster_table(a), _cluster_table(b)
        intervals = {name: m.unpaired_difference_ci(table_a, table_b, stat) for name, stat in own.items()}
        return {"paired": False, "why_unpaired": str(e), "difference_ci": _lists(intervals), "mcnemar": None}
    sums_a, sums_b = pairing.cluster_sums()
    intervals = m.paired_difference_cis(sums_a, sums_b, own)
    convention = CONVENTIONS.index(a.convention or "medhal")
    b_count, c_count = pairing.signs(convention)
    # One rollout per task in both runs: McNemar's test on the items right in one run only.
    # More: the same exact binomial test on the signs of the per-item differences of mean
    # correctness (a sign test; McNemar's is its 0/1 case).
    one_each = len(means_a) == len(a.items) and len(means_b) == len(b.items)
    return {
        "paired": True,
        "difference_ci": _lists(intervals),
        "mcnemar": {
            "right_only_in_first": b_count,
            "right_only_in_this": c_count,
            "p_value": m.mcnemar_exact(b_count, c_count),
            "test": "mcnemar" if one_each else "sign",
        },
    }


def _cluster_table(run: Run) -> np.ndarray:
    """Per-cluster sums of a run's item rows (for unpaired draws)."""
    assert run.items is not None
    items, codes, rows = run.items._sorted()
    labels = codes.copy()
    loose = labels < 0
    if loose.any():  # an item without a cluster is its own, with all its rollouts
        labels[loose] = codes.max(initial=-1) + 1 + np.unique(items[loose], return_inverse=True)[1].ravel()
    _, dense = np.unique(labels, return_inverse=True)
    out = np.zeros((int(dense.max(initial=-1)) + 1, rows.shape[1]))
    np.add.at(out, dense.ravel(), rows)
    return out


def _lists(intervals: Mapping[str, tuple[float, float]]) -> dict[str, list[float]]:
    return {name: [lo, hi] for name, (lo, hi) in intervals.items()}
