"""A run's per-cluster column sums, for the whole run and for each group, in a few bytes
per cluster.

A cluster bootstrap needs each cluster's column sums (`metrics.ClusterSums`). A run's
clusters are its source questions, or its tasks where a benchmark names no source
(MedFact-Bench): one per rollout in a run of one rollout per task, so sums held per
cluster (72 numbers a task for MedFact-Bench's three conventions and macro columns, and
12 more for its group) grow with the rows. Yet a trace adds one of few rows (its counts
are 0 or 1), and a cluster's few rollouts add up to one of few sums. So here the sums of a
cluster, for the whole run and for every group it has items in, are one *state*, interned:
a cluster holds the number of its state (4 bytes, in an array indexed by task idx where
the task is the cluster), and a trace moves its cluster to the next state through a memo
keyed by (state, the trace's row). The next state's sums are the previous ones plus the
row, computed once per distinct pair: the same floats added in the same order as a
cluster summed on its own, so the tables handed to the bootstrap hold the same rows (only
stored once with a count), and every interval and figure is the same.

Rows that take many values (a benchmark counting a continuous score) make many states:
past `MAX_STATES` the states are written out as plain per-cluster sums and the rest of the
run is summed as before (`ClusterSums`, a batch at a time), memory then growing with the
clusters as it did.
"""

from __future__ import annotations

from array import array
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from medhal.kit.outcomes import CONVENTIONS
from medhal.kit.report_spec import BASE_COLUMNS
from medhal.reports import metrics as m

MAX_STATES = 1 << 16
"""Distinct trace rows, cluster states and summed rows (each) kept interned; past this
the run is summed cluster by cluster (see the module docstring)."""
MEMO = 1 << 18
"""Remembered (state, row) -> state steps; past this the memo starts afresh (a step is
then computed again, to the same state)."""

Kind = tuple[tuple[float, ...], int, tuple[str, ...]]
"""A trace's row: its columns under every convention, its macro group, its group values."""
State = tuple[int, tuple[tuple[int, str, int], ...]]
"""A cluster's sums: its overall row's number, and (group field, value, row number) of
each group it has items in, sorted."""


class _Rows:
    """Distinct float rows, each stored once and named by number."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.rows: list[np.ndarray] = []
        self._numbers: dict[bytes, int] = {}

    def number(self, row: np.ndarray) -> int:
        key = row.tobytes()
        found = self._numbers.get(key)
        if found is None:
            found = self._numbers[key] = len(self.rows)
            self.rows.append(row)
        return found

    def __len__(self) -> int:
        return len(self.rows)


class RunSums:
    """Per-cluster sums of a run's traces: `add` once per trace, `tables` at the end (the
    overall `ClusterSums` and one per value of each group field).

    `width`: columns per convention; the overall row is the row under every convention
    followed by the macro columns (the base columns of each macro group, per convention).
    `task_clusters`: the clusters are task ids (non-negative integers), kept in an array
    indexed by id instead of a dict."""

    PENDING = 1024
    """Traces queued before they are summed, once past `MAX_STATES` (bounds the queue)."""

    def __init__(self, width: int, n_macro: int, group_fields: Sequence[str], *, task_clusters: bool) -> None:
        self.width = width
        self.n_macro = n_macro
        self.fields = tuple(group_fields)
        self.task_clusters = task_clusters
        self.overall_width = (width + len(BASE_COLUMNS) * n_macro) * len(CONVENTIONS)
        self.n = 0
        self._kinds: dict[Kind, int] = {}
        self._kind_info: list[tuple[int, int, tuple[str, ...]]] = []
        """Each row's (overall row number, group row number, group values)."""
        self._kind_items: list[int] = []
        self._states: dict[State, int] = {}
        self._state_info: list[State] = []
        self._memo: dict[tuple[int, int], int] = {}
        self._overall_rows = _Rows(self.overall_width)
        self._group_rows = _Rows(width * len(CONVENTIONS))
        self._slots: dict[Hashable, int] = {}
        self._state = array("i")
        """Each cluster's state (-1: none yet), by task id or by `_slots`' number."""
        self._spilled: tuple[m.ClusterSums, dict[str, dict[str, m.ClusterSums]]] | None = None
        self._pending: list[tuple[Hashable, tuple[str, ...], tuple[float, ...], int]] = []

    # -- adding ---------------------------------------------------------------------------
    def add(self, cluster: Hashable, groups: tuple[str, ...], every: tuple[float, ...], macro_group: int) -> None:
        """One trace: its cluster, its group values (one per field), its row under every
        convention (finite numbers) and its macro group's index (-1: none)."""
        self.n += 1
        if self._spilled is None:
            key = (every, macro_group, groups)
            kind = self._kinds.get(key)
            if kind is None:
                kind = self._new_kind(key)
            if kind >= 0:
                slot = self._slot(cluster)
                state = self._state[slot]
                step = self._memo.get((state, kind))
                if step is None:
                    step = self._step(state, kind)
                if step >= 0:
                    self._state[slot] = step
                    self._kind_items[kind] += 1
                    return
            self._spill()
        self._pending.append((cluster, groups, every, macro_group))
        if len(self._pending) >= self.PENDING:
            self._flush()

    def _slot(self, cluster: Hashable) -> int:
        if self.task_clusters:
            assert isinstance(cluster, int)
            if cluster >= len(self._state):
                grow = max(cluster + 1 - len(self._state), len(self._state))
                self._state.extend(array("i", [-1]) * grow)
            return cluster
        slot = self._slots.get(cluster)
        if slot is None:
            slot = self._slots[cluster] = len(self._slots)
            self._state.append(-1)
        return slot

    def _overall_row(self, every: tuple[float, ...], macro_group: int) -> np.ndarray:
        """The row under every convention, then the macro columns: the base columns of each
        convention's row in its macro group's block (zeros elsewhere)."""
        row = np.array(every, dtype=float) + 0.0  # -0.0 becomes 0.0, as ClusterSums does
        macro = np.zeros(self.overall_width - len(row))
        block, width = len(BASE_COLUMNS), self.width
        if macro_group >= 0:
            for c in range(len(CONVENTIONS)):
                start = (c * self.n_macro + macro_group) * block
                macro[start : start + block] = row[c * width : c * width + block]
        return np.concatenate([row, macro])

    def _new_kind(self, key: Kind) -> int:
        """The number of a row not met before (-1: too many kinds)."""
        if len(self._kinds) >= MAX_STATES:
            return -1
        every, macro_group, groups = key
        overall = self._overall_row(every, macro_group)
        group_row = overall[: self.width * len(CONVENTIONS)]
        kind = self._kinds[key] = len(self._kind_info)
        self._kind_info.append((self._overall_rows.number(overall), self._group_rows.number(group_row), groups))
        self._kind_items.append(0)
        return kind

    def _step(self, state: int, kind: int) -> int:
        """The state a cluster in `state` (-1: new) reaches with one more trace of `kind`
        (-1: too many states or rows)."""
        overall, group_row, values = self._kind_info[kind]
        if state < 0:
            entries = {(f, v): group_row for f, v in enumerate(values)}
        else:
            before, held = self._state_info[state]
            rows = self._overall_rows
            overall = rows.number(rows.rows[before] + rows.rows[overall])
            entries = {(f, v): r for f, v, r in held}
            for f, v in enumerate(values):
                r = entries.get((f, v))
                g = self._group_rows
                entries[(f, v)] = group_row if r is None else g.number(g.rows[r] + g.rows[group_row])
        if max(len(self._overall_rows), len(self._group_rows), len(self._states)) >= MAX_STATES:
            return -1
        key = (overall, tuple(sorted((f, v, r) for (f, v), r in entries.items())))
        step = self._states.get(key)
        if step is None:
            step = self._states[key] = len(self._state_info)
            self._state_info.append(key)
        if len(self._memo) >= MEMO:
            self._memo.clear()
        self._memo[(state, kind)] = step
        return step

    # -- past MAX_STATES ------------------------------------------------------------------
    def _spill(self) -> None:
        """Write the states out as per-cluster sums; from now on traces are summed as they
        come (`_flush`)."""
        overall = m.ClusterSums(self.overall_width)
        groups: dict[str, dict[str, m.ClusterSums]] = {f: {} for f in self.fields}
        clusters, states = self._clusters()
        if clusters:
            rows = np.array([self._overall_rows.rows[self._state_info[s][0]] for s in states])
            overall.add_sums(clusters, rows, sum(self._kind_items))
            members: dict[tuple[int, str], tuple[list[Hashable], list[np.ndarray]]] = {}
            for cluster, s in zip(clusters, states, strict=True):
                for f, v, r in self._state_info[s][1]:
                    keys, sums = members.setdefault((f, v), ([], []))
                    keys.append(cluster)
                    sums.append(self._group_rows.rows[r])
            items = self._group_items()
            for (f, v), (keys, sums) in members.items():
                table = groups[self.fields[f]][v] = m.ClusterSums(self.width * len(CONVENTIONS))
                table.add_sums(keys, np.array(sums), items[(f, v)])
        self._spilled = (overall, groups)
        self._kinds, self._kind_info, self._states, self._state_info, self._memo = {}, [], {}, [], {}
        self._overall_rows = _Rows(self.overall_width)
        self._group_rows = _Rows(self.width * len(CONVENTIONS))
        self._slots, self._state = {}, array("i")

    def _clusters(self) -> tuple[list[Hashable], list[int]]:
        """Every cluster with a state, and its state (task ids in order, others as met)."""
        if self.task_clusters:
            states = np.frombuffer(self._state, dtype=np.int32) if len(self._state) else np.zeros(0, np.int32)
            ids = np.flatnonzero(states >= 0)
            return ids.tolist(), states[ids].tolist()
        held = [(cluster, self._state[i]) for cluster, i in self._slots.items() if self._state[i] >= 0]
        return [c for c, _ in held], [s for _, s in held]

    def _group_items(self) -> dict[tuple[int, str], int]:
        """Traces added so far in each (group field, value)."""
        items: dict[tuple[int, str], int] = {}
        for (_, _, values), n in zip(self._kind_info, self._kind_items, strict=True):
            for f, v in enumerate(values):
                items[(f, v)] = items.get((f, v), 0) + n
        return items

    def _flush(self) -> None:
        """Sum the queued traces into the spilled sums, in the order they came: one numpy
        array per batch and one `ClusterSums.add_rows` per sum."""
        if not self._pending or self._spilled is None:
            return
        pending, self._pending = self._pending, []
        overall, groups = self._spilled
        clusters = [p[0] for p in pending]
        every = np.array([p[2] for p in pending], dtype=float)
        rows = np.array([self._overall_row(p[2], p[3]) for p in pending])
        overall.add_rows(clusters, rows)
        for f, fld in enumerate(self.fields):
            members: dict[str, list[int]] = {}
            for i, p in enumerate(pending):
                members.setdefault(p[1][f], []).append(i)
            by_value = groups[fld]
            for value, idx in members.items():
                sums = by_value.get(value)
                if sums is None:
                    sums = by_value[value] = m.ClusterSums(every.shape[1])
                sums.add_rows([clusters[i] for i in idx], every[idx])

    # -- the tables -----------------------------------------------------------------------
    def tables(self) -> tuple[m.ClusterSums, dict[str, dict[str, m.ClusterSums]]]:
        """The overall sums and each group's (field -> value -> sums; no groups before the
        first trace): each distinct cluster row once, with how many clusters have it."""
        if self._spilled is not None:
            self._flush()
            return self._spilled
        overall = m.ClusterSums(self.overall_width)
        if not self.n:
            return overall, {}
        _, states = self._clusters()
        weights = np.bincount(np.array(states, dtype=np.int64), minlength=len(self._state_info))
        live = np.flatnonzero(weights).tolist()
        overall.add_table(
            np.array([self._overall_rows.rows[self._state_info[s][0]] for s in live]), weights[live], self.n
        )
        cells: dict[tuple[int, str], dict[int, int]] = {}
        for s in live:
            for f, v, r in self._state_info[s][1]:
                cell = cells.setdefault((f, v), {})
                cell[r] = cell.get(r, 0) + int(weights[s])
        items = self._group_items()
        groups: dict[str, dict[str, m.ClusterSums]] = {f: {} for f in self.fields}
        for (f, v), counts in cells.items():
            table = groups[self.fields[f]][v] = m.ClusterSums(self.width * len(CONVENTIONS))
            rows = np.array([self._group_rows.rows[r] for r in counts])
            table.add_table(rows, np.fromiter(counts.values(), dtype=np.int64, count=len(counts)), items[(f, v)])
        return overall, groups

