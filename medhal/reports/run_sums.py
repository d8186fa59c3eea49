"""A run's per-cluster column sums, for the whole run and for each group, in a few bytes
per cluster.

A cluster bootstrap needs each cluster's column sums (`metrics.ClusterSums`). A run's
clusters are its source questions, or its tasks where a benchmark names no source
(MedFact-Bench): one per rollout in a run of one rollout per task, so sums held per
cluster (72 numbers a task for MedFact-Bench's three conventions and macro columns, and
12 more for its group) grow with the rows. Yet a trace adds one of few rows (its counts
are 0 or 1), and a small cluster's rollouts add up to one of few sums. So the sums of a
small cluster, for the whole run and for every group it has items in, are one *state*,
interned: the cluster holds the number of its state (4 bytes, in an array indexed by task
idx where the task is the cluster), and a trace moves it to the next state through a memo
keyed by (state, the trace's row). The next state's sums are the previous ones plus the
row, computed once per distinct pair: the same floats added in the same order as a
cluster summed on its own, so the tables handed to the bootstrap hold the same rows (each
stored once with a count), and every interval and figure is the same.

A cluster past `SMALL` items (a source question shared by hundreds of items) would make a
new state with each of them: its sums move to a `ClusterSums` and its further traces are
summed there, as before (a batch at a time). Rows that take many values (a benchmark
counting a continuous score) make many states: past `MAX_STATES` every cluster moves.
"""

from __future__ import annotations

from array import array
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from medhal.kit.outcomes import CONVENTIONS
from medhal.kit.report_spec import BASE_COLUMNS
from medhal.reports import metrics as m

SMALL = 8
"""Items a cluster may have and keep an interned state; a larger one is summed on its own."""
MAX_STATES = 1 << 16
"""Distinct trace rows, cluster states and summed rows (each) kept interned; past this
every cluster is summed on its own (see the module docstring)."""
MEMO = 1 << 18
"""Remembered (state, row) -> state steps; past this the memo starts afresh (a step is
then computed again, to the same state)."""
OWN = -2
"""The state of a cluster summed on its own (in `RunSums._own`)."""
FULL = -3
"""What `RunSums._step` answers when the interned tables are full."""

Kind = tuple[tuple[float, ...], int, tuple[str, ...]]
"""A trace's row: its columns under every convention, its macro group, its group values."""
State = tuple[int, tuple[tuple[int, str, int], ...]]
"""A cluster's sums: its overall row's number, and (group field, value, row number) of
each group it has items in, sorted."""
Pending = tuple[Hashable, tuple[str, ...], tuple[float, ...], int]


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

    `width`: columns per convention, the first counting the items (`BASE_COLUMNS`' n); the
    overall row is the row under every convention followed by the macro columns (the base
    columns of each macro group, per convention). `task_clusters`: the clusters are task
    ids (non-negative integers), kept in an array indexed by id instead of a dict."""

    PENDING = 1024
    """Traces of clusters summed on their own queued before they are summed (bounds the queue)."""

    def __init__(self, width: int, n_macro: int, group_fields: Sequence[str], *, task_clusters: bool) -> None:
        assert BASE_COLUMNS[0] == "n"
        self.width = width
        self.n_macro = n_macro
        self.fields = tuple(group_fields)
        self.task_clusters = task_clusters
        self.overall_width = (width + len(BASE_COLUMNS) * n_macro) * len(CONVENTIONS)
        self.n = 0
        self._kinds: dict[Kind, int] = {}
        self._kind_info: list[tuple[int, int, tuple[str, ...]]] = []
        """Each row's (overall row number, group row number, group values)."""
        self._states: dict[State, int] = {}
        self._state_info: list[State] = []
        self._memo: dict[tuple[int, int], int] = {}
        self._overall_rows = _Rows(self.overall_width)
        self._group_rows = _Rows(width * len(CONVENTIONS))
        self._slots: dict[Hashable, int] = {}
        self._state = array("i")
        """Each cluster's state (-1: none yet; `OWN`), by task id or by `_slots`' number."""
        self._all_own = False
        self._own = m.ClusterSums(self.overall_width)
        self._own_groups: dict[str, dict[str, m.ClusterSums]] = {f: {} for f in self.fields}
        self._pending: list[Pending] = []
        """Traces of clusters summed on their own, once the kinds are full."""
        self._queued: tuple[list[Hashable], array[int]] = ([], array("i"))
        self._values: list[dict[str, int]] = [{} for _ in self.fields]
        """Each group field's values met in kinds, numbered (`_kind_table`)."""
        self._table: tuple[np.ndarray, np.ndarray, list[np.ndarray]] = (
            np.zeros((0, self.overall_width)),
            np.zeros((0, width * len(CONVENTIONS))),
            [np.zeros(0, dtype=np.int64) for _ in self.fields],
        )
        """Traces (cluster, kind) of clusters summed on their own: their rows are the kinds'."""

    # -- adding ---------------------------------------------------------------------------
    def add(
        self, cluster: Hashable, groups: tuple[str, ...], every: tuple[float, ...], macro_group: int
    ) -> None:
        """One trace: its cluster, its group values (one per field), its row under every
        convention (finite numbers) and its macro group's index (-1: none)."""
        self.n += 1
        if not self._all_own:
            key = (every, macro_group, groups)
            kind = self._kinds.get(key)
            if kind is None:
                kind = self._new_kind(key)
            slot = self._slot(cluster)
            state = self._state[slot]
            if kind >= 0:
                if state != OWN:
                    step = self._memo.get((state, kind))
                    if step is None:
                        step = self._step(state, kind)
                    if step >= 0:
                        self._state[slot] = step
                        return
                    if step == FULL:
                        self._move_all()
                        return self._queue(cluster, groups, every, macro_group)
                    self._move([cluster], [state])
                    self._state[slot] = OWN
                self._queued[0].append(cluster)
                self._queued[1].append(kind)
                if len(self._queued[1]) >= self.PENDING:
                    self._flush_kinds()
                return
            self._move_all()
        self._queue(cluster, groups, every, macro_group)

    def _queue(
        self, cluster: Hashable, groups: tuple[str, ...], every: tuple[float, ...], macro_group: int
    ) -> None:
        """A trace of a cluster summed on its own, once the kinds are full."""
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
        self._kind_info.append(
            (self._overall_rows.number(overall), self._group_rows.number(group_row), groups)
        )
        return kind

    def _step(self, state: int, kind: int) -> int:
        """The state a cluster in `state` (-1: new) reaches with one more trace of `kind`;
        `OWN` when the cluster has `SMALL` items already, `FULL` when the tables are."""
        overall, group_row, values = self._kind_info[kind]
        rows, g = self._overall_rows, self._group_rows
        if state < 0:
            entries = {(f, v): group_row for f, v in enumerate(values)}
        else:
            before, held = self._state_info[state]
            if rows.rows[before][0] >= SMALL:
                return OWN
            overall = rows.number(rows.rows[before] + rows.rows[overall])
            entries = {(f, v): r for f, v, r in held}
            for f, v in enumerate(values):
                r = entries.get((f, v))
                entries[(f, v)] = group_row if r is None else g.number(g.rows[r] + g.rows[group_row])
        if max(len(rows), len(g), len(self._states)) >= MAX_STATES:
            return FULL
        key = (overall, tuple(sorted((f, v, r) for (f, v), r in entries.items())))
        step = self._states.get(key)
        if step is None:
            step = self._states[key] = len(self._state_info)
            self._state_info.append(key)
        if len(self._memo) >= MEMO:
            self._memo.clear()
        self._memo[(state, kind)] = step
        return step

    # -- clusters summed on their own -----------------------------------------------------
    def _move(self, clusters: list[Hashable], states: list[int]) -> None:
        """Clusters' interned sums handed to the `ClusterSums` (items counted by their first
        column); their further traces are summed there."""
        rows = np.array([self._overall_rows.rows[self._state_info[s][0]] for s in states])
        self._own.add_sums(clusters, rows, int(rows[:, 0].sum()))
        members: dict[tuple[int, str], tuple[list[Hashable], list[np.ndarray]]] = {}
        for cluster, s in zip(clusters, states, strict=True):
            for f, v, r in self._state_info[s][1]:
                keys, sums = members.setdefault((f, v), ([], []))
                keys.append(cluster)
                sums.append(self._group_rows.rows[r])
        for (f, v), (keys, sums) in members.items():
            table = self._own_group(self.fields[f], v)
            block = np.array(sums)
            table.add_sums(keys, block, int(block[:, 0].sum()))

    def _own_group(self, fld: str, value: str) -> m.ClusterSums:
        by_value = self._own_groups[fld]
        table = by_value.get(value)
        if table is None:
            table = by_value[value] = m.ClusterSums(self.width * len(CONVENTIONS))
        return table

    def _move_all(self) -> None:
        """Every cluster summed on its own from now on (the interned tables are full)."""
        self._flush_kinds()
        clusters, states = self._clusters()
        if clusters:
            self._move(clusters, states)
        self._all_own = True
        self._kinds, self._kind_info, self._states, self._state_info, self._memo = {}, [], {}, [], {}
        self._overall_rows = _Rows(self.overall_width)
        self._group_rows = _Rows(self.width * len(CONVENTIONS))
        self._slots, self._state = {}, array("i")
        self._table = (self._table[0][:0], self._table[1][:0], [c[:0] for c in self._table[2]])

    def _clusters(self) -> tuple[list[Hashable], list[int]]:
        """Every cluster with an interned state, and its state (task ids in order, others as met)."""
        if self.task_clusters:
            states = self._states_held()
            ids = np.flatnonzero(states >= 0)
            clusters: list[Hashable] = list(ids.tolist())
            return clusters, states[ids].tolist()
        held = [(cluster, self._state[i]) for cluster, i in self._slots.items() if self._state[i] >= 0]
        return [c for c, _ in held], [s for _, s in held]

    def _states_held(self) -> np.ndarray:
        """Each cluster's state, read in place (-1: none; `OWN`)."""
        return np.frombuffer(self._state, dtype=np.int32) if len(self._state) else np.zeros(0, np.int32)

    def _flush_kinds(self) -> None:
        """Sum the queued (cluster, kind) traces into the clusters' own sums, in the order
        they came: the kinds' rows taken by index, one `ClusterSums.add_rows` per sum."""
        clusters, queued = self._queued
        if not queued:
            return
        self._queued = ([], array("i"))
        kinds = np.frombuffer(queued, dtype=np.int32)
        overall, group_rows, codes = self._kind_table()
        self._own.add_rows(clusters, overall[kinds])
        for f, fld in enumerate(self.fields):
            of_trace = codes[f][kinds]
            for value, c in self._values[f].items():
                members = np.flatnonzero(of_trace == c)
                if members.size:
                    self._own_group(fld, value).add_rows(
                        [clusters[i] for i in members], group_rows[kinds[members]]
                    )

    def _kind_table(self) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
        """Each kind's overall row, group row and value code per group field, as arrays
        indexed by kind (extended with the kinds met since the last call)."""
        info, have = self._kind_info, len(self._table[0])
        if have < len(info):
            new = info[have:]
            overall = np.array([self._overall_rows.rows[k[0]] for k in new])
            group_rows = np.array([self._group_rows.rows[k[1]] for k in new])
            codes = [
                np.array([values.setdefault(k[2][f], len(values)) for k in new], dtype=np.int64)
                for f, values in enumerate(self._values)
            ]
            old_overall, old_groups, old_codes = self._table
            self._table = (
                np.concatenate([old_overall, overall]),
                np.concatenate([old_groups, group_rows]),
                [np.concatenate([a, b]) for a, b in zip(old_codes, codes, strict=True)],
            )
        return self._table

    def _flush(self) -> None:
        """Sum the queued traces into the clusters' own sums, in the order they came: one
        numpy array per batch and one `ClusterSums.add_rows` per sum."""
        self._flush_kinds()
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        clusters = [p[0] for p in pending]
        every = np.array([p[2] for p in pending], dtype=float)
        n, block, width = len(pending), len(BASE_COLUMNS), self.width
        macro = np.zeros((n, self.overall_width - every.shape[1]))
        group = np.array([p[3] for p in pending], dtype=np.int64)
        has = np.flatnonzero(group >= 0)
        for c in range(len(CONVENTIONS)):  # each convention's base columns in its macro group's block
            columns = ((c * self.n_macro + group[has]) * block)[:, None] + np.arange(block)
            macro[has[:, None], columns] = every[has, c * width : c * width + block]
        self._own.add_rows(clusters, np.hstack([every, macro]))
        for f, fld in enumerate(self.fields):
            members: dict[str, list[int]] = {}
            for i, p in enumerate(pending):
                members.setdefault(p[1][f], []).append(i)
            for value, idx in members.items():
                self._own_group(fld, value).add_rows([clusters[i] for i in idx], every[idx])

    # -- the tables -----------------------------------------------------------------------
    def tables(self) -> tuple[m.ClusterSums, dict[str, dict[str, m.ClusterSums]]]:
        """The overall sums and each group's (field -> value -> sums; no groups before the
        first trace), made afresh from the clusters' own sums and the interned states, each
        distinct cluster row once with how many clusters have it."""
        self._flush()
        overall = _copy(self._own)
        groups = {f: {v: _copy(t) for v, t in by_value.items()} for f, by_value in self._own_groups.items()}
        if not self.n:
            return overall, {}
        states = self._states_held()
        weights = np.bincount(states[states >= 0], minlength=len(self._state_info))
        live = np.flatnonzero(weights).tolist()
        if not live:
            return overall, groups
        rows = np.array([self._overall_rows.rows[self._state_info[s][0]] for s in live])
        overall.add_table(rows, weights[live], int(weights[live] @ rows[:, 0]))
        cells: dict[tuple[int, str], dict[int, int]] = {}
        for s in live:
            for f, v, r in self._state_info[s][1]:
                cell = cells.setdefault((f, v), {})
                cell[r] = cell.get(r, 0) + int(weights[s])
        for (f, v), counts in cells.items():
            by_value = groups[self.fields[f]]
            table = by_value.get(v)
            if table is None:
                table = by_value[v] = m.ClusterSums(self.width * len(CONVENTIONS))
            block = np.array([self._group_rows.rows[r] for r in counts])
            n = np.fromiter(counts.values(), dtype=np.int64, count=len(counts))
            table.add_table(block, n, int(n @ block[:, 0]))
        return overall, groups


def _copy(sums: m.ClusterSums) -> m.ClusterSums:
    """A new `ClusterSums` with the same table and item count."""
    out = m.ClusterSums(sums.width)
    rows, weights = sums.table()
    out.add_table(rows, weights, sums.n_items)
    return out
