"""The `i/k` shard syntax, read in one place: the `shard` option of every environment, the
selection each trace records, and a report's completeness check all go through
`parse_shard`, so a shard one of them accepts is one the others read the same way."""

from __future__ import annotations

import re

_SHARD = re.compile(r"(0|[1-9][0-9]{0,8})/([1-9][0-9]{0,8})")
"""Canonical ASCII decimals (no sign, no leading zero), at most nine digits each: the text may
come from an untrusted trace, and no run has a billion shards."""


def parse_shard(value: object) -> tuple[int, int] | None:
    """(i, k) for the shard `i/k` with i below k, or None for anything else."""
    match = _SHARD.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return None
    i, k = int(match[1]), int(match[2])
    return (i, k) if i < k else None
