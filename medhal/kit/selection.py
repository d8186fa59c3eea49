"""What a run's selection of tasks records, stated once for both verifiers lines: the
record every selected task carries (`BenchmarkData.selection`) and the share of it that one
shard runs. Verifiers-free: the line adapters (`medhal.kit.lines`) call it from their
`select`."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, TypeVar

from medhal.kit.shards import parse_shard

T = TypeVar("T")


def selection_record(idx: Sequence[int], num_tasks: int | None, shuffle: bool) -> dict[str, Any]:
    """What a report needs to check a run for gaps: the task count, how it was chosen, and
    a hash of the selected idx (contiguous from 0 unless shuffled)."""
    listed = ",".join(str(i) for i in sorted(idx))
    return {
        "n_expected": len(idx),
        "num_tasks": num_tasks,
        "shuffle": shuffle,
        "contiguous": sorted(idx) == list(range(len(idx))),
        "idx_sha256": hashlib.sha256(listed.encode()).hexdigest(),
    }


def shard_share(tasks: list[T], shard: str | None, record: dict[str, Any]) -> tuple[list[T], dict[str, Any]]:
    """The tasks the `shard` option (`i/k`) keeps, every k-th from the i-th, and the record
    saying so; all of them and `record` unchanged without a shard."""
    parsed = parse_shard(shard)
    if parsed is None:
        return tasks, record
    i, k = parsed
    share = tasks[i::k]
    return share, {**record, "shard": shard, "n_shard": len(share)}
