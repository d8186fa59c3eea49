"""Benchmark reports from saved rollouts: figures under every reading convention, with
intervals, completeness checks and provenance.

A benchmark describes its report with a `ReportSpec` (`medhal.kit.report_spec`): the counts it adds up for each item,
named (a NamedTuple such as MedHallu's `tp`, `pred_pos`; every report also counts `n`,
`correct`, `parsed` and `error` itself), the statistics it reports as functions of the
totals (an accuracy, an F1, a score), its groups and clusters. Everything else is shared
here. Rollouts are streamed from disk into per-cluster column sums (`RunSums`: a few bytes
a task where a benchmark names no source, a row of sums per large source cluster; never the
width of a trace) and a log of about 30 bytes per rollout (`RolloutLog`: which task, which
trace, right, reward, label read), and every interval is a cluster bootstrap over those
sums: the rollouts of a task (`eval -r k`) are resampled together. An errored rollout is an item too:
it predicts ERROR, counts as wrong and stays in every denominator.

A report also says whether the run is whole: the tasks the run selected (`n_expected`
and the selection recorded on every trace) against the task ids present, as sets (missing
ids, ids outside the selection), rollouts per task against those asked for, the same
trace twice, and traces whose provenance (data, options, code versions) differs from the
rest.

This module, and everything it imports, stays free of verifiers and of environments'
tasksets: reading a report is cheap.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import math
import re
from array import array
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from medhal.kit.outcomes import CONVENTIONS, READINGS, correct_key, parsed_key
from medhal.kit.report_spec import BASE_COLUMNS, ItemView, Ratio, ReportSpec, Statistic
from medhal.kit.shards import parse_shard
from medhal.reports import metrics as m
from medhal.reports.headline import lead_block
from medhal.reports.items import ItemLog
from medhal.reports.prime_rl import Expected
from medhal.reports.published import comparison as published_comparison
from medhal.reports.run_sums import RunSums
from medhal.reports.traces import (
    MAX_MAGNITUDE,
    TraceFileError,
    TraceRecord,
    configured_rollouts,
    iter_traces,
    resolve_trace_file,
)

_OUTCOME_KEYS = {c: (correct_key(c), parsed_key(c)) for c in CONVENTIONS}


BASE_LABELS = {
    "accuracy": "accuracy",
    "parse_rate": "replies read",
    "error_rate": "failed rollouts",
    "n_errors": "failed rollouts (count)",
}
"""Names for the figures every report has."""


def figure_labels(spec: ReportSpec) -> dict[str, str]:
    """Code name -> a reader's name for every figure of a report, the macro ones included
    ("accuracy, mean over test_set")."""
    labels = {**BASE_LABELS, **spec.figure_labels}
    if spec.macro_field:
        for name in spec.macro_statistics:
            labels[f"macro_{name}"] = f"{labels.get(name, name)}, mean over {spec.macro_field}"
    return labels


# ------------------------------------------------------------------------------ reading


def normalize_error(message: str) -> str:
    """Errors grouped by message, with the numbers in them masked (an idx, a byte count)."""
    return re.sub(r"\d+", "#", message)[:300]


def reply_shape(reply: str | None) -> str:
    """How an unreadable reply looks: whitespace collapsed, cut at 120 characters."""
    text = " ".join((reply or "").split())
    return (text[:117] + "...") if len(text) > 120 else text or "(empty reply)"


class TopCounts:
    """The most frequent keys of a stream in bounded memory (space-saving: when full, the
    rarest key is replaced and its count inherited). A key's own sightings since it came in
    (its count less what it inherited) are a true lower bound, and exact for a key that
    inherited nothing: `top` gives those, never the inflated count, and says which are
    exact. A key's example is the smallest seen since it came in, so a report does not depend on
    the order in which concurrent rollouts finished and were written."""

    def __init__(self, capacity: int = 1000) -> None:
        self.capacity = capacity
        self.counts: dict[str, int] = {}
        """Sightings plus what was inherited: an upper bound of each key's count."""
        self.inherited: dict[str, int] = {}
        self.example: dict[str, int] = {}
        self.total = 0

    def add(self, key: str, example: int) -> None:
        self.total += 1
        if key in self.counts:
            self.counts[key] += 1
            if example < self.example[key]:
                self.example[key] = example
            return
        if len(self.counts) >= self.capacity:
            rarest = min(self.counts, key=self.counts.__getitem__)
            inherited = self.counts.pop(rarest)
            self.example.pop(rarest)
            self.inherited.pop(rarest, None)
            self.counts[key] = inherited + 1
            self.inherited[key] = inherited
        else:
            self.counts[key] = 1
        self.example[key] = example

    def top(self, k: int) -> list[tuple[str, int, int, bool]]:
        """The k keys seen most surely, as (key, count, an example, exact): count is the
        key's own sightings (exact, or a lower bound where `exact` is False); ranked by it,
        exact counts first on a tie, then by key."""
        inherited = self.inherited
        ranked = sorted(
            (
                (key, count - inherited.get(key, 0), key not in inherited)
                for key, count in self.counts.items()
            ),
            key=lambda row: (-row[1], not row[2], row[0]),
        )[:k]
        return [(key, count, self.example[key], exact) for key, count, exact in ranked]


class SeenIds:
    """Which task ids a run has, in a bit per id, to count duplicates and gaps."""

    def __init__(self) -> None:
        self.flags = bytearray()
        self.n_distinct = 0
        self.n_duplicates = 0

    def add(self, idx: int) -> None:
        if idx < 0 or idx > 50_000_000:
            raise ValueError(f"task idx {idx} is out of range (0..50,000,000)")
        if idx >= len(self.flags):
            self.flags.extend(bytes(max(idx + 1 - len(self.flags), len(self.flags))))
        if self.flags[idx]:
            self.n_duplicates += 1
        else:
            self.flags[idx] = 1
            self.n_distinct += 1

    def ids(self) -> np.ndarray:
        """Every id seen, ascending."""
        return np.flatnonzero(np.frombuffer(bytes(self.flags), dtype=np.uint8))

    def missing(self, expected: Iterable[int], limit: int = 20) -> list[int]:
        """The first `limit` of the `expected` ids not seen."""
        out = []
        for i in expected:
            if i >= len(self.flags) or not self.flags[i]:
                out.append(i)
                if len(out) == limit:
                    break
        return out


def _encode_other(value: Any) -> str:
    return repr(value)


_canonical = msgspec.json.Encoder(order="sorted", enc_hook=_encode_other).encode


class DistinctValues:
    """The distinct values of a stream of JSON values (provenance blocks, selections,
    sampling settings), in order of first appearance: the first `keep` kept, every one
    counted. Membership goes by a digest of the value's canonical JSON, so each value costs
    one encoding whatever the number of distinct values before it (a list membership test
    compares it with all of them: quadratic in a file whose every trace carries its own
    block). A value equal to the one before it, the usual case, is not encoded at all."""

    _NOTHING = object()

    def __init__(self, keep: int = 20) -> None:
        self.keep = keep
        self.values: list[Any] = []
        self._digests: set[bytes] = set()
        self._last: Any = self._NOTHING

    def add(self, value: Any) -> None:
        last = self._last
        if last is not self._NOTHING and type(value) is type(last) and value == last:
            return
        digest = hashlib.blake2b(_canonical(value), digest_size=16).digest()
        if digest not in self._digests:
            self._digests.add(digest)
            if len(self.values) < self.keep:
                self.values.append(value)
        self._last = value

    def __len__(self) -> int:
        return len(self._digests)


@dataclass
class Run:
    """A run reduced to what its report needs, built one trace at a time."""

    spec: ReportSpec
    path: str
    keep_items: bool = False
    """Also keep per-item rows, for paired comparisons with other runs."""
    merged: bool = False
    """Several run directories read as one run: every shard of the selection is expected."""
    convention: str | None = None
    n: int = 0
    overall: m.ClusterSums | None = None
    groups: dict[str, dict[str, m.ClusterSums]] = field(default_factory=dict)
    pairs: Counter[tuple[Hashable, Hashable]] = field(default_factory=Counter)
    errors: TopCounts = field(default_factory=lambda: TopCounts(200))
    unreadable: TopCounts = field(default_factory=TopCounts)
    truncated: TopCounts = field(default_factory=lambda: TopCounts(2))
    """Final replies the token limit cut, by where (`medhal.kit.reasoning`: before the answer,
    in the answer; exact, two keys at most)."""
    seen: SeenIds = field(default_factory=SeenIds)
    selections: DistinctValues = field(default_factory=DistinctValues)
    selection_bases: DistinctValues = field(default_factory=DistinctValues)
    """The selections without their shard keys: one for a whole run, or for the shards of one."""
    shards: set[str | None] = field(default_factory=set)
    provenance: dict[str, DistinctValues] = field(default_factory=dict)
    models: Counter[str] = field(default_factory=Counter)
    sampling: DistinctValues = field(default_factory=DistinctValues)
    items: m.ItemTable | None = None
    rollouts_per_task: int | None = None
    """Rollouts per task the run was asked for (`num_rollouts` in eval's config.toml,
    `rollouts_per_example` in vf-eval's metadata.json), when known; else the report reads it
    from the traces (the most any task has)."""
    rollouts_source: str | None = None
    """The file `rollouts_per_task` comes from."""
    rollouts_conflict: bool = False
    """Run directories read as one run asked for different rollouts per task."""
    rollouts: RolloutLog = field(default_factory=lambda: RolloutLog())
    view: ItemLog | None = None
    """Every rollout as report.html's per-item view shows it (None: no item view)."""
    expected: Expected | None = None
    """What prime-rl's files say of the run that its traces do not (the run is one eval
    epoch of a prime-rl run: its tasks were loaded without `select`, so they carry no
    selection); None for any other run."""
    sums: RunSums = field(init=False, repr=False)
    """The per-cluster sums `overall` and `groups` are made from (see `flush`)."""
    _last_selection: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        spec = self.spec
        self.sums = RunSums(
            len(spec.columns.names),
            len(spec.macro_groups),
            spec.group_fields,
            task_clusters=not spec.cluster_field,
        )
        self.overall = m.ClusterSums(self.sums.overall_width)
        if self.keep_items:
            self.items = m.ItemTable(len(CONVENTIONS) + len(spec.columns.names))

    # -- one trace ----------------------------------------------------------------------
    def add(self, record: TraceRecord) -> None:
        """Fold one trace into the run. Per-trace work is where a report's time goes, so
        the metrics are merged once per trace, rows are joined as tuples, and a cluster's
        sums move from one interned state to the next (`RunSums`)."""
        spec, data = self.spec, record.data
        idx, convention = self._identify(record)
        groups = {f: self._text(data, f, record) for f in spec.group_fields}
        # Without a source field the task is the cluster: its rollouts are resampled together.
        cluster = self._text(data, spec.cluster_field, record) if spec.cluster_field else idx
        gold = self._text(data, spec.gold_field, record) if spec.gold_field else None
        if gold is not None and spec.classes and gold not in spec.classes:
            raise TraceFileError(
                f"{record.where}: field 'task.data.{spec.gold_field}' is {gold!r}, "
                f"not one of {list(spec.classes)}"
            )
        views = self._views(record, gold)
        rows = [self._row(views[c]) for c in CONVENTIONS]
        own = rows[CONVENTIONS.index(convention)]
        every = rows[0] + rows[1] + rows[2] if len(rows) == 3 else sum(rows, ())
        macro_group = self._macro_group(groups, record)
        try:
            finite = math.isfinite(sum(every))  # one C-level sum: NaN and infinities show
        except TypeError:
            finite = False
        if not finite:
            every = self._finite(every, record)
        self.sums.add(cluster, tuple(groups.values()), every, macro_group)
        if self.view is not None:
            self.view.add(record, idx, tuple(groups.values()), views)
        view = views[convention]
        if self.items is not None:
            item_cluster = cluster if spec.cluster_field else None
            row = [float(views[c].correct) for c in CONVENTIONS] + list(own)
            self.items.add(idx, item_cluster, row, content_digest(data, spec.content_fields))
        self.rollouts.add(idx, record, view, spec.vote_key(view) if spec.vote_key else view.pred)
        if spec.classes and gold is not None:
            self.pairs[(gold, view.pred)] += 1
        if record.errored:
            self.errors.add(normalize_error(record.error_message or "error"), idx)
        elif not view.parsed:
            self.unreadable.add(reply_shape(record.reply), idx)
        cut = record.truncated
        if cut is not None:
            self.truncated.add(cut, idx)
        self._note_provenance(record, groups)
        self.n += 1

    def _identify(self, record: TraceRecord) -> tuple[int, str]:
        """The trace's task idx and the run's reading convention (the first trace's), after
        checking that the trace is of this benchmark and its convention is known."""
        data = record.data
        benchmark = data.get("benchmark")
        if benchmark != self.spec.benchmark:
            raise TraceFileError(
                f"{record.where}: field 'task.data.benchmark' is {benchmark!r}, but this report is for "
                f"{self.spec.benchmark!r} (a trace from another benchmark?)"
            )
        idx = data.get("idx")
        if isinstance(idx, bool) or not isinstance(idx, int):
            raise TraceFileError(f"{record.where}: field 'task.data.idx' is {idx!r}, not an integer")
        try:
            self.seen.add(idx)
        except ValueError as e:
            raise TraceFileError(f"{record.where}: field 'task.data.idx': {e}") from e
        convention = data.get("parser", "medhal")
        if convention not in CONVENTIONS:
            raise TraceFileError(
                f"{record.where}: field 'task.data.parser' is {convention!r}, not one of {CONVENTIONS}"
            )
        self.convention = self.convention or convention
        return idx, self.convention

    def _macro_group(self, groups: Mapping[str, str], record: TraceRecord) -> int:
        """The index of the trace's macro group in `spec.macro_groups` (-1 without one)."""
        spec = self.spec
        if spec.macro_field is None:
            return -1
        value = groups.get(spec.macro_field) or self._text(record.data, spec.macro_field, record)
        if value not in spec.macro_groups:
            raise TraceFileError(
                f"{record.where}: field 'task.data.{spec.macro_field}' is {value!r}, "
                f"not one of {list(spec.macro_groups)}"
            )
        return spec.macro_groups.index(value)

    def flush(self) -> None:
        """`overall` and `groups` made from the sums of the traces added so far (`build_report`
        calls this; so does `read_run`)."""
        self.overall, self.groups = self.sums.tables()

    def _finite(self, every: Sequence[Any], record: TraceRecord) -> tuple[float, ...]:
        """`every` as floats, or a TraceFileError naming the trace and the column that is
        not a finite number (a NaN in a trace's metrics, say)."""
        width = len(self.spec.columns.names)
        for j, value in enumerate(every):
            convention, column = CONVENTIONS[j // width], self.spec.columns.names[j % width]
            try:
                number = float(value)
            except (TypeError, ValueError):
                number = math.nan
            if not math.isfinite(number):
                raise TraceFileError(
                    f"{record.where}: column {column!r} under the {convention} reading is {value!r}, "
                    "not a finite number (from the trace's metrics?)"
                )
        return tuple(map(float, every))

    @staticmethod
    def _text(data: Mapping[str, Any], name: str | None, record: TraceRecord) -> str:
        if name is None:
            raise ValueError("no field named")
        value = data.get(name)
        if type(value) is str:
            return value  # the usual case, checked at once
        if name not in data:
            raise TraceFileError(f"{record.where}: field 'task.data.{name}' is missing")
        value = data[name]
        if isinstance(value, (dict, list)):
            raise TraceFileError(
                f"{record.where}: field 'task.data.{name}' is a {type(value).__name__}, not a value"
            )
        return str(value)

    def _views(self, record: TraceRecord, gold: str | None) -> dict[str, ItemView]:
        """The trace under every convention (one shared view for an errored rollout)."""
        if record.errored:
            return {c: ItemView(record.data, gold, m.ERROR, False, False, True, {}, c) for c in CONVENTIONS}
        metrics = {**record.rewards, **record.metrics}
        readings = record.info.get(READINGS)
        if not isinstance(readings, dict):
            readings = {}
        views = {}
        for convention, (correct_key_, parsed_key_) in _OUTCOME_KEYS.items():
            correct, parsed = metrics.get(correct_key_), metrics.get(parsed_key_)
            if type(correct) is float and type(parsed) is float and math.isfinite(correct + parsed):
                correct, parsed = correct != 0.0, parsed != 0.0  # the usual trace, checked at once
            else:
                correct = self._outcome(metrics, correct_key_, record)
                parsed = self._outcome(metrics, parsed_key_, record)
            label = readings.get(convention)
            if label is not None and not isinstance(label, str):
                raise TraceFileError(
                    f"{record.where}: field 'info.{READINGS}.{convention}' is {label!r}, not text or null"
                )
            pred = label if (label is not None and parsed) else m.INVALID
            if self.spec.classes and pred not in self._pred_columns:
                raise TraceFileError(
                    f"{record.where}: field 'info.{READINGS}.{convention}' is {pred!r}, not one of "
                    f"{[*self.spec.classes, *self.spec.pred_only_classes]} or null"
                )
            views[convention] = ItemView(record.data, gold, pred, correct, parsed, False, metrics, convention)
        return views

    @staticmethod
    def _outcome(metrics: Mapping[str, Any], key: str, record: TraceRecord) -> bool:
        value = metrics.get(key)
        if value is None:
            raise TraceFileError(
                f"{record.where}: field 'metrics.{key}' is missing (was it scored? a trace written by an "
                "older environment version can be re-scored with `medhal score`)"
            )
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise TraceFileError(f"{record.where}: field 'metrics.{key}' is {value!r}, not a number")
        return bool(value)

    @cached_property
    def _pred_columns(self) -> frozenset[str]:
        return frozenset((*self.spec.classes, *self.spec.pred_only_classes, m.INVALID))

    def _row(self, view: ItemView) -> tuple[float, ...]:
        """The item's column vector under one convention: the base columns, then the
        benchmark's own counts."""
        base = (1.0, float(view.correct), float(view.parsed), float(view.errored))
        count = self.spec.item_counts
        if count is None:
            return base
        counts = count(view)
        if type(counts) is not self.spec.columns.counts:
            raise ValueError(
                f"{self.spec.benchmark}: item_counts gave {type(counts).__name__}, "
                f"not {getattr(self.spec.columns.counts, '__name__', None)}"
            )
        return base + counts

    def _note_provenance(self, record: TraceRecord, groups: Mapping[str, str]) -> None:
        data = record.data
        key = groups.get(self.spec.provenance_field) if self.spec.provenance_field else ""
        if self.spec.provenance_field and key is None:
            key = str(data.get(self.spec.provenance_field))
        known = self.provenance.get(key or "")
        if known is None:
            known = self.provenance[key or ""] = DistinctValues()
        prov = data.get("provenance")
        if not isinstance(prov, dict):  # none, or not an object: kept as such, once
            prov = {"provenance": prov}
        known.add(prov)
        selection = data.get("selection") or {}
        if selection is not self._last_selection and selection != self._last_selection:
            self._last_selection = selection
            self.selections.add(selection)
            self.selection_bases.add({k: v for k, v in selection.items() if k not in SHARD_KEYS})
            self.shards.add(selection.get("shard"))
        self.models[record.model or "unknown"] += 1
        self.sampling.add(record.sampling)

    def expect_rollouts(self, configured: tuple[int, str] | None) -> None:
        """Rollouts per task and the file that says so, from a run directory
        (`configured_rollouts`; None: nothing says)."""
        if configured is None:
            return
        k, self.rollouts_source = configured
        if self.rollouts_per_task is not None and self.rollouts_per_task != k:
            self.rollouts_conflict = True
        self.rollouts_per_task = max(k, self.rollouts_per_task or 0)


MAX_REWARD = MAX_MAGNITUDE * 1000
"""The largest magnitude of a rollout's summed rewards (each within `MAX_MAGNITUDE`; a
trace with more than a thousand rewards at the bound is refused)."""


class RolloutLog:
    """One compact row per rollout (task idx, trace id digest, right, reward, the answer's
    vote key), about 30 bytes each: what the report needs to tell the rollouts of a task from
    a duplicated trace and to give per-item means, spread, pass@k and majority votes."""

    def __init__(self) -> None:
        self.idx = array("q")
        self.rollout = array("q")
        self.correct = array("b")
        self.reward = array("d")
        self.label = array("i")
        self.labels: dict[str, int] = {}

    def add(self, idx: int, record: TraceRecord, view: ItemView, vote: str) -> None:
        """One rollout; `vote` is its answer's key (`ReportSpec.vote_key`)."""
        rollout_id = record.rollout_id
        self.idx.append(idx)
        self.rollout.append((hash(rollout_id) or 1) if rollout_id is not None else 0)
        self.correct.append(1 if view.correct else 0)
        rewards = record.rewards
        try:
            reward = math.fsum(rewards.values()) if rewards else 0.0
        except TypeError:  # a null reward
            reward = math.fsum(v for v in rewards.values() if v is not None)
        if not -MAX_REWARD <= reward <= MAX_REWARD:  # a record not from the trace reader
            raise TraceFileError(
                f"{record.where}: field 'rewards' sums to {reward!r}, not a finite number within +-10^12"
            )
        self.reward.append(reward)
        code = self.labels.get(vote)
        if code is None:
            code = self.labels[vote] = len(self.labels)
        self.label.append(code)

    def __len__(self) -> int:
        return len(self.idx)


RUN_FIELDS = frozenset({"provenance", "selection", "parser", "binary_reward"})
"""Task-data fields that say how a run was made, not what its task is."""
BENCHMARK_FIELDS = ("benchmark", "source_id")
"""What `medhal.kit.task.BenchmarkData` declares about the item itself (beside
`RUN_FIELDS`): the environment and the dataset's own id of the row."""


def content_digest(data: Mapping[str, Any], fields: Sequence[str] | None = None) -> int:
    """A digest of a task's content: `BENCHMARK_FIELDS` and the environment's own `fields`
    (`ReportSpec.content_fields`; None: every field but the run's stamps, `RUN_FIELDS`), as
    canonical JSON, a null and an absent value alike. Two runs are paired task by task only
    where these agree (the same idx may hold another item, e.g. another seed's choice of
    answer to show). Never 0."""
    if fields is None:
        content = {k: _no_nulls(v) for k, v in data.items() if k not in RUN_FIELDS and v is not None}
    else:
        names = (*BENCHMARK_FIELDS, *fields)
        content = {k: _no_nulls(data[k]) for k in names if data.get(k) is not None}
    return (
        int.from_bytes(hashlib.blake2b(_canonical(content), digest_size=8).digest(), "little", signed=True)
        or 1
    )


def _no_nulls(value: Any) -> Any:
    """`value` with every null member of its objects left out (at any depth)."""
    if type(value) is dict:
        return {k: _no_nulls(v) for k, v in value.items() if v is not None}
    if type(value) is list:
        return [_no_nulls(v) for v in value]
    return value


@contextlib.contextmanager
def cycles_left_alone() -> Iterator[None]:
    """Python's cycle collector paused while traces are read. A trace's objects hold no
    reference cycle, so reference counting frees them as soon as the next trace replaces them;
    the collector would only walk the objects of the trace being decoded, and the run's growing
    sums, again and again (15% of a 100,000-trace report). Any cycle made meanwhile is collected
    when it resumes."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def read_run(
    path: str | Path, spec: ReportSpec, keep_items: bool = False, view: ItemLog | None = None
) -> Run:
    run = Run(spec, str(path), keep_items=keep_items, view=view)
    run.expect_rollouts(configured_rollouts(resolve_trace_file(path)))
    with cycles_left_alone():
        for record in iter_traces(path):
            run.add(record)
        run.flush()
    return run


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimator of pass@k from n samples of which c are right (Chen et al.
    2021): 1 - C(n - c, k) / C(n, k)."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def rollout_summary(run: Run) -> dict[str, Any]:
    """The rollouts of each task taken together: duplicates (the same trace twice), rollouts
    per task against those expected, per-item mean and spread of reward, pass@k, pass^k and
    majority-vote accuracy, and the per-item table when a task has more than one rollout.

    Memory: the log is read in place and summed per task id (`np.bincount`: each task's
    rollouts in file order, as one at a time), so what this adds to the log is a few arrays
    of one number per task and one or two of one number per rollout; only the rollouts of
    tasks with several are sorted (to find duplicates and majority votes)."""
    log = run.rollouts
    idx = _logged(log.idx, np.int64)
    correct = _logged(log.correct, np.int8)
    reward = _logged(log.reward, np.float64)
    per_id, duplicates = _task_counts(idx, _logged(log.rollout, np.int64))
    if duplicates.size:  # the same trace twice: its later sightings are left out
        keep = np.ones(len(idx), dtype=bool)
        keep[duplicates] = False
        idx, correct, reward = idx[keep], correct[keep], reward[keep]
    items = np.flatnonzero(per_id)
    counts = per_id[items]
    configured = run.rollouts_per_task
    k = configured if configured is not None else int(counts.max(initial=0)) or None
    right = _per_id(idx, correct, len(per_id))[items]
    total = np.bincount(idx, weights=reward, minlength=len(per_id))[items]
    mean = total / np.maximum(counts, 1)
    sd = _reward_sd(idx, reward, items, counts, mean, len(per_id))
    out: dict[str, Any] = {
        "per_task": k,
        "source": (run.rollouts_source if configured is not None else "traces") if k is not None else None,
        "n_duplicates": int(duplicates.size),
        "n_short_tasks": int((counts < k).sum()) if k else 0,
        "n_missing_rollouts": int(np.maximum(k - counts, 0).sum()) if k else 0,
        "n_extra_rollouts": int(np.maximum(counts - k, 0).sum()) if k else 0,
        "mixed": run.rollouts_conflict,
        "mean_reward": float(mean.mean()) if len(items) else 0.0,
        "mean_reward_sd": float(sd.mean()) if len(items) else 0.0,
    }
    ks = sorted({1, *(2**j for j in range(1, 20) if 2**j < (k or 1)), k or 1})
    pairs = _count_pairs(counts, right.astype(np.int64))
    out["pass_at_k"] = m.per_task_estimate(pairs, ks, pass_at_k)
    out["pass_hat_k"] = m.per_task_estimate(pairs, ks, m.pass_hat_k)
    label = _logged(log.label, np.int32)
    if duplicates.size:
        label = label[keep]
    out["majority_accuracy"] = _majority_accuracy(idx, label, correct, per_id, right)
    if len(items) and (int(counts.max()) > 1 or (k or 1) > 1):
        out["per_item"] = {
            "idx": items.tolist(),
            "rollouts": counts.tolist(),
            "mean_correct": (right / np.maximum(counts, 1)).tolist(),
            "mean_reward": mean.tolist(),
            "sd_reward": sd.tolist(),
        }
    return out


SLICE = 1 << 16
"""Rollouts summed at a time where a sum needs a temporary array of them."""


def _reward_sd(
    idx: np.ndarray, reward: np.ndarray, items: np.ndarray, counts: np.ndarray, mean: np.ndarray, size: int
) -> np.ndarray:
    """Each task's sample standard deviation of its rollouts' rewards: (reward - the task's
    mean)^2 summed per task in file order, a slice at a time (no table-sized temporaries)."""
    by_id = np.zeros(size)
    by_id[items] = mean
    spread = np.zeros(size)
    for start in range(0, len(idx), SLICE):
        deviation = by_id[idx[start : start + SLICE]]
        np.subtract(reward[start : start + SLICE], deviation, out=deviation)
        np.add.at(spread, idx[start : start + SLICE], np.square(deviation, out=deviation))
    sd: np.ndarray = np.sqrt(spread[items] / np.maximum(counts - 1, 1))
    return sd


def _per_id(idx: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """Integer `values` summed per task id, a slice at a time (exact in any order)."""
    out = np.zeros(size)
    for start in range(0, len(idx), SLICE):
        out += np.bincount(idx[start : start + SLICE], weights=values[start : start + SLICE], minlength=size)
    return out


def _logged(values: array[Any], dtype: type) -> np.ndarray:
    """A column of the rollout log as an array, read in place (no copy)."""
    return np.frombuffer(values, dtype=dtype) if len(values) else np.zeros(0, dtype=dtype)


def _task_counts(idx: np.ndarray, rollout: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rollouts of each task id (duplicates left out) and the positions of the duplicates:
    a rollout whose task and trace id an earlier one has. Only tasks seen more than once
    can hold one, so only their rollouts are sorted."""
    per_id = np.bincount(idx) if len(idx) else np.zeros(0, dtype=np.int64)
    several = np.flatnonzero((per_id > 1)[idx])
    if not several.size:
        return per_id, several
    order = np.lexsort((rollout[several], idx[several]))
    task, trace = idx[several][order], rollout[several][order]
    repeat = np.zeros(len(order), dtype=bool)
    repeat[1:] = (task[1:] == task[:-1]) & (trace[1:] == trace[:-1])
    duplicates = np.sort(several[order[repeat]])
    np.subtract.at(per_id, idx[duplicates], 1)
    return per_id, duplicates


def _count_pairs(counts: np.ndarray, right: np.ndarray) -> dict[tuple[int, int], int]:
    """How many tasks have n rollouts of which c are right, {(n, c): tasks}, in the order the
    pairs first appear (the order `per_task_estimate` sums them in)."""
    if not len(counts):
        return {}
    key = counts * (int(right.max(initial=0)) + 1) + right
    _, first, tasks = np.unique(key, return_index=True, return_counts=True)
    order = np.argsort(first, kind="stable")
    return {(int(counts[first[i]]), int(right[first[i]])): int(tasks[i]) for i in order.tolist()}


def _majority_accuracy(
    idx: np.ndarray, label: np.ndarray, correct: np.ndarray, per_id: np.ndarray, right: np.ndarray
) -> float:
    """Share of items whose most frequent answer over their rollouts (by vote key: one
    answer however it is spelt, INVALID and ERROR among them) is right; a tie between
    answers has no majority and counts as wrong. `right`: each item's right rollouts (an
    item of one rollout is right when that one is); the votes of items with several are
    counted from their rollouts (`idx`, `label`, `correct`, duplicates left out)."""
    if not len(right):
        return 0.0
    voted = right.copy()
    several = (per_id > 1)[idx]
    if several.any():
        position = np.cumsum(per_id > 0) - 1  # a task id's position among the items
        voted[np.unique(position[idx[several]])] = 0.0
        _vote(position[idx[several]], label[several], correct[several], voted)
    return float(voted.mean())


def _vote(item: np.ndarray, label: np.ndarray, correct: np.ndarray, right: np.ndarray) -> None:
    """`right[i]` = whether item i's majority answer is right, for the items of `item`."""
    n_labels = int(label.max(initial=0)) + 1
    cell = item.astype(np.int64) * n_labels + label
    cells, where, votes = np.unique(cell, return_index=True, return_counts=True)
    owner = cells // n_labels
    best = np.zeros(len(right), dtype=np.int64)
    np.maximum.at(best, owner, votes)
    top = votes == best[owner]
    n_top = np.bincount(owner[top], minlength=len(right))
    winners = top & (n_top[owner] == 1)
    right[owner[winners]] = correct[where[winners]]


# ------------------------------------------------------------------------------ figures


def _statistics(spec: ReportSpec) -> dict[str, Statistic]:
    cols = spec.columns
    base = {
        "accuracy": cols.ratio("correct", "n"),
        "parse_rate": cols.ratio("parsed", "n"),
        "error_rate": cols.ratio("error", "n"),
    }
    return {**base, **spec.statistics}


def _shifted(statistic: Statistic, offset: int, width: int) -> Statistic:
    if isinstance(statistic, Ratio):
        return Ratio(statistic.num + offset, statistic.den + offset)
    return lambda totals: statistic(totals[:, offset : offset + width])


def _figures(table: m.Table, statistics: Mapping[str, Statistic], with_ci: Iterable[str]) -> dict[str, Any]:
    """Point values of every statistic (None for a `Ratio` over nothing: it does not apply),
    and percentile intervals for `with_ci`, all from one set of bootstrap draws."""
    rows, weights = m.as_table(table)
    totals = (weights @ rows)[None, :] if len(rows) else np.zeros((1, rows.shape[1] if rows.ndim == 2 else 1))
    out: dict[str, Any] = {
        name: None if isinstance(stat, Ratio) and totals[0, stat.den] == 0 else float(stat(totals)[0])
        for name, stat in statistics.items()
    }
    wanted = {name: stat for name, stat in statistics.items() if name in with_ci and out[name] is not None}
    if wanted and len(rows):
        for name, interval in m.bootstrap_cis((rows, weights), wanted).items():
            out[f"{name}_ci"] = [interval[0], interval[1]]
    return out


def _mean_of(parts: list[Statistic]) -> Statistic:
    return lambda totals: np.mean([part(totals) for part in parts], axis=0)


SHARD_KEYS = ("shard", "n_shard")
"""Selection keys that differ between the shards of one run."""


def completeness(run: Run, rollouts: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """How whole the run is: the tasks expected (from the traces' selection) against the
    task ids present, compared as sets (ids missing, ids outside the selection), rollouts per
    task against those expected, duplicated traces and mixed provenance. A run split into
    shards (`--taskset.shard i/k`) is whole shard by shard, and merged (`medhal report
    --merge`) when all k shards are there."""
    rollouts = rollouts if rollouts is not None else rollout_summary(run)
    n_bases = len(run.selection_bases)
    base = run.selection_bases.values[0] if n_bases == 1 else {}
    base, from_files = _selection_from_files(run, base, rollouts)
    shards = sorted(run.shards, key=str)
    mixed = n_bases > 1 or any(len(v) > 1 for v in run.provenance.values()) or bool(rollouts["mixed"])
    n_expected, start, step = _expected_tasks(run, base, shards)
    ids = run.seen.ids()
    found = _ids_against_selection(run, base, ids, n_expected, start, step)
    n_missing, n_outside, ids_match = found["n_missing"], found["n_outside"], found["ids_match_selection"]
    n_duplicates = int(rollouts["n_duplicates"])
    return {
        "n_expected": n_expected,
        "n_distinct": len(ids),
        "n_duplicates": n_duplicates,
        **found,
        "shards": [s for s in shards if s is not None],
        "mixed_provenance": mixed,
        **from_files,
        "complete": bool(
            n_expected is not None
            and from_files.get("episodes_match_plan") is not False
            and not n_missing
            and not n_outside
            and ids_match is not False
            and not n_duplicates
            and not rollouts["n_short_tasks"]
            and not rollouts["n_extra_rollouts"]
            and not mixed
        ),
    }


def _selection_from_files(
    run: Run, base: Mapping[str, Any], rollouts: Mapping[str, Any]
) -> tuple[Mapping[str, Any], dict[str, Any]]:
    """For a prime-rl eval epoch (`run.expected`): the selection prime-rl's own files imply,
    and what the report says of it. prime-rl evaluates the first tasks of the taskset, in
    order, k rollouts each (k: the most any task has); plan.json gives the episodes planned,
    so the tasks are planned / k, and a plan that is not whole groups of k makes the run
    incomplete. Without a plan the tasks are 0 to the highest idx seen (a run cut after its
    last task cannot show). A selection the tasks record (from verifiers 0.3 on, iterating
    a taskset records every task) is not what prime-rl runs: an eval source with
    `num_examples` takes only the first of them, so it is set aside."""
    if run.expected is None:
        return base, {}
    k = int(rollouts.get("per_task") or 1)
    planned = run.expected.episodes
    ids = run.seen.ids()
    n_tasks = planned // k if planned is not None else (int(ids.max()) + 1 if len(ids) else 0)
    said: dict[str, Any] = {"expected_from": run.expected.source, "episodes_planned": planned}
    if planned is not None:
        said["episodes_match_plan"] = planned == n_tasks * k
    return {"n_expected": n_tasks, "contiguous": True}, said


def _expected_tasks(run: Run, base: Mapping[str, Any], shards: list[Any]) -> tuple[int | None, int, int]:
    """The number of tasks the run's one selection expects (None when it has several or none),
    and the first id and step of its ids: a shard i/k holds ids i, i + k, ... of the selection."""
    total = base.get("n_expected")
    if len(run.selection_bases) != 1 or not isinstance(total, int):
        return None, 0, 1
    shard = parse_shard(shards[0]) if len(shards) == 1 and not run.merged else None
    if shard is None:
        return total, 0, 1
    start, step = shard
    return int(run.selections.values[0].get("n_shard", 0)), start, step


def _ids_against_selection(
    run: Run, base: Mapping[str, Any], ids: Any, n_expected: int | None, start: int, step: int
) -> dict[str, Any]:
    """The ids present compared, as sets, with those the selection expects: how many (and the
    first 20) are missing or outside it, and whether they are exactly its ids (None: unknown)."""
    found: dict[str, Any] = {
        "n_missing": None,
        "missing_idx": [],
        "n_outside": None,
        "outside_idx": [],
        "ids_match_selection": None,
    }
    total = base.get("n_expected")
    if n_expected is None or not isinstance(total, int):
        return found
    if base.get("contiguous", False):
        inside = (ids >= start) & (ids < total) & ((ids - start) % step == 0)
        outside = ids[~inside]
        n_missing = n_expected - int(inside.sum())
        return {
            "n_missing": n_missing,
            "missing_idx": run.seen.missing(range(start, total, step)) if n_missing else [],
            "n_outside": len(outside),
            "outside_idx": outside[:20].tolist(),
            "ids_match_selection": not n_missing and not len(outside),
        }
    # A shuffled selection: only its size and the hash of its ids are recorded.
    ids_match = None
    if step == 1 and isinstance(base.get("idx_sha256"), str):
        listed = ",".join(map(str, ids.tolist()))
        ids_match = hashlib.sha256(listed.encode()).hexdigest() == base["idx_sha256"]
    found["n_missing"] = max(0, n_expected - len(ids))
    found["n_outside"] = max(0, len(ids) - n_expected) or (None if ids_match is not True else 0)
    found["ids_match_selection"] = ids_match
    return found


def build_report(run: Run) -> dict[str, Any]:
    run.flush()
    spec = run.spec
    statistics = _statistics(spec)
    conventions, counts, present = _convention_figures(run, statistics)
    own = run.convention or "medhal"
    overall = dict(conventions[own])
    overall["n_errors"] = int(
        counts[CONVENTIONS.index(own) * len(spec.columns.names) + spec.columns["error"]]
    )
    groups = {
        fld: {
            value: _group_figures(
                sums, statistics, len(spec.columns.names), own, _group_intervals(spec, fld, own)
            )
            for value, sums in sorted(values.items(), key=lambda kv: _group_order(spec, fld, kv[0]))
        }
        for fld, values in run.groups.items()
    }
    rollouts = rollout_summary(run)
    per_item = rollouts.pop("per_item", None)
    whole = completeness(run, rollouts)
    report: dict[str, Any] = {
        "benchmark": spec.benchmark,
        "title": spec.title,
        "source": run.path,
        "convention": own,
        "n": run.n,
        **whole,
        "n_errors": overall["n_errors"],
        "error_rate": overall["error_rate"],
        "micro_accuracy": overall["accuracy"],
        "micro_accuracy_ci": overall.get("accuracy_ci"),
        "macro_accuracy": overall.get("macro_accuracy", overall["accuracy"]),
        "macro_accuracy_ci": overall.get("macro_accuracy_ci", overall.get("accuracy_ci")),
        "macro_over": spec.macro_field,
        "macro_groups": present,
        "parse_rate": overall["parse_rate"],
        "paper_comparable": bool(
            spec.full_size is not None
            and whole["complete"]
            and whole["n_distinct"] == spec.full_size
            and run.n == spec.full_size
            and overall["n_errors"] == 0
        ),
        "rollouts": rollouts,
        "overall": overall,
        "conventions": conventions,
        "groups": groups,
    }
    if per_item is not None:
        report["per_item"] = per_item
    _add_details(report, run)
    return report


def _convention_figures(
    run: Run, statistics: Mapping[str, Statistic]
) -> tuple[dict[str, dict[str, Any]], np.ndarray, list[str]]:
    """Every statistic (and macro statistic) under every convention, with intervals for the
    headline ones, all from one set of bootstrap draws; also the column totals and the macro
    groups present."""
    spec = run.spec
    width = len(spec.columns.names)
    with_ci = {"accuracy", *spec.headline, spec.lead.statistic}
    assert run.overall is not None
    table = run.overall
    counts = table.totals() if len(table) else np.zeros(table.width)
    block, n_groups = len(BASE_COLUMNS), len(spec.macro_groups)
    macro_start = len(CONVENTIONS) * width
    present = [g for k, g in enumerate(spec.macro_groups) if counts[macro_start + k * block] > 0]
    everything: dict[str, Statistic] = {}
    wanted: set[str] = set()
    for i, convention in enumerate(CONVENTIONS):
        for name, stat in statistics.items():
            everything[f"{convention}:{name}"] = _shifted(stat, i * width, width)
        for name, stat in spec.macro_statistics.items():
            parts = [
                _shifted(stat, macro_start + (i * n_groups + spec.macro_groups.index(g)) * block, block)
                for g in present
            ]
            if parts:
                everything[f"{convention}:macro_{name}"] = _mean_of(parts)
                wanted.add(f"{convention}:macro_{name}")
        wanted |= {f"{convention}:{name}" for name in with_ci}
    figures = _figures(table, everything, wanted)
    conventions: dict[str, dict[str, Any]] = {}
    for convention in CONVENTIONS:
        prefix = f"{convention}:"
        conventions[convention] = {k[len(prefix) :]: v for k, v in figures.items() if k.startswith(prefix)}
    return conventions, counts, present


def _add_details(report: dict[str, Any], run: Run) -> None:
    """What a report shows beside its figures: per-class figures and the confusion matrix,
    unreadable replies, errors, provenance, and the published figures it can be compared with."""
    spec = run.spec
    if spec.classes:
        columns = (*spec.pred_only_classes, m.INVALID, m.ERROR)
        report["classes"] = m.per_class_prf_from_pairs(run.pairs, spec.classes)
        report["confusion"] = m.confusion_from_pairs(run.pairs, spec.classes, columns)
    report["unreadable"] = [
        {"shape": shape, "count": count, "idx": idx, "exact": exact}
        for shape, count, idx, exact in run.unreadable.top(10)
    ]
    report["n_unreadable"] = run.unreadable.total
    report["truncated"] = [
        {"where": where, "count": count, "idx": idx} for where, count, idx, _ in run.truncated.top(2)
    ]
    report["n_truncated"] = run.truncated.total
    errors = run.errors.top(50)
    report["errors"] = {message: count for message, count, _, _ in errors}
    report["errors_at_least"] = [message for message, _, _, exact in errors if not exact]
    """Messages whose count is a lower bound (more distinct messages than the table holds)."""
    report["provenance"] = hide_machine_paths(provenance_summary(run))
    report["provenance_distinct"] = provenance_counts(run)
    report["demo_prompts"] = '"written_by"' in json.dumps(report["provenance"]["data"])
    report["complete_groups"] = complete_groups(report, spec)
    report["published"] = published_comparison(report, spec)
    report["notes"] = list(spec.notes)
    report["figure_labels"] = figure_labels(spec)
    report["lead"] = lead_block(report, spec.lead)


def complete_groups(report: Mapping[str, Any], spec: ReportSpec) -> list[str]:
    """Macro groups the run covers completely, once each, without failed rollouts (the run
    itself whole): each is comparable with the figures published for it."""
    if not report.get("complete") or not spec.macro_field:
        return []
    groups = report["groups"].get(spec.macro_field, {})
    return [
        name
        for name, size in spec.group_sizes.items()
        if name in groups and groups[name]["n"] == size and groups[name]["n_errors"] == 0
    ]


def _group_intervals(spec: ReportSpec, fld: str, own: str) -> set[str]:
    """The `convention:statistic` figures of a group of `fld` given with an interval: the
    statistics published for a group, under the reading each is compared under, and the
    headline when the benchmark gives it per group of `fld`."""
    wanted = {
        f"{p.reading}:{p.statistic}" for p in spec.published if p.group and p.group in spec.macro_groups
    }
    if spec.lead.per == fld:
        wanted.add(f"{own}:{spec.lead.statistic}")
    return wanted


def _group_figures(
    sums: m.ClusterSums, statistics: Mapping[str, Statistic], width: int, own: str, with_ci: Iterable[str]
) -> dict[str, Any]:
    """A group's figures under the run's convention (with an accuracy interval), and every
    convention's values under `conventions` (with intervals for the `with_ci` figures,
    `convention:statistic`)."""
    everything = {
        f"{c}:{name}": _shifted(stat, i * width, width)
        for i, c in enumerate(CONVENTIONS)
        for name, stat in statistics.items()
    }
    figures = _figures(sums, everything, {f"{own}:accuracy", *with_ci})
    by = {
        c: {k.split(":", 1)[1]: v for k, v in figures.items() if k.startswith(f"{c}:")} for c in CONVENTIONS
    }
    errors = round(by[own]["error_rate"] * sums.n_items)
    return {
        "n": int(sums.n_items),
        "n_errors": errors,
        **by[own],
        "conventions": {c: by[c] for c in CONVENTIONS},
    }


def _group_order(spec: ReportSpec, fld: str, value: str) -> tuple[int, str]:
    if fld == spec.macro_field and value in spec.macro_groups:
        return (spec.macro_groups.index(value), value)
    return (len(spec.macro_groups), value)


_MACHINE_PATH = re.compile(r"(?:/|~/|[A-Za-z]:[\\/])[^\n]*[\\/][^\n]*")
"""An absolute path of the machine that ran: /..., ~/..., C:\\... (with a directory in it)."""


def hide_machine_paths(value: Any) -> Any:
    """`value` with every absolute path in it cut to its last two parts ("…/samples/x.jsonl"):
    a report is published and archived, and the layout of the disk it was made on is
    nobody's business (files are identified by their sha256 beside the path)."""
    if isinstance(value, dict):
        return {k: hide_machine_paths(v) for k, v in value.items()}
    if isinstance(value, list):
        return [hide_machine_paths(v) for v in value]
    if isinstance(value, str) and _MACHINE_PATH.fullmatch(value):
        parts = [p for p in re.split(r"[\\/]", value) if p]
        return "…/" + "/".join(parts[-2:])
    return value


def provenance_summary(run: Run) -> dict[str, Any]:
    """The run's provenance, selection, models and sampling: each value once when the traces
    share it, else the first distinct ones (`provenance_counts` says how many there are)."""

    def one_or_all(values: DistinctValues) -> Any:
        return values.values[0] if len(values) == 1 else values.values

    data = {key: one_or_all(values) for key, values in run.provenance.items()}
    return {
        "data": data[""] if list(data) == [""] else data,
        "selection": one_or_all(run.selections),
        "models": dict(run.models),
        "sampling": one_or_all(run.sampling),
    }


def provenance_counts(run: Run) -> dict[str, Any]:
    """How many distinct provenance blocks (per provenance field value), selections and
    sampling settings the traces carry: 1 each for a run that is one run."""
    return {
        "data": {key: len(values) for key, values in run.provenance.items()},
        "selection": len(run.selections),
        "sampling": len(run.sampling),
    }


# ----------------------------------------------------------------------------- writing


def write_json(report: Mapping[str, Any]) -> str:
    return json.dumps(report, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
