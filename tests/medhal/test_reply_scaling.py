"""A hostile 1 MB reply is read by every reader of every benchmark without stalling (the
speed itself is measured as a ratio in bench/adversarial_replies.py; here only a generous
bound, since the machines are shared)."""

from __future__ import annotations

import time

import pytest

from bench.adversarial_replies import benchmarks, hostile

pytestmark = pytest.mark.slow(
    reason="1 MB hostile replies through every reader: the size at which a quadratic reader takes minutes"
)

SHAPES = hostile(1_000_000)
BENCHMARKS = benchmarks()
"""Every reader of the benchmarks timed one by one, and every other installed environment's
`score` on a demo item (the test environments too)."""
GENEROUS_SECONDS = 60.0
"""Quadratic readers took minutes on 1 MB (82 s at 280 KB); linear ones take about a second."""


@pytest.mark.parametrize("benchmark", list(BENCHMARKS))
def test_hostile_megabyte_replies(benchmark):
    start = time.monotonic()
    for text in SHAPES.values():
        for reader in BENCHMARKS[benchmark].values():
            reader(text)  # must not raise, whatever the shape
    assert time.monotonic() - start < GENEROUS_SECONDS * len(SHAPES)
