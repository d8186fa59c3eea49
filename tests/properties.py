"""The example budget of the hypothesis property tests.

`make mutants` runs every test that calls a mutated function once per mutant, thousands of
times; there it sets `MEDHAL_PROPERTY_EXAMPLES_SCALE` (a fraction) so each property draws
fewer examples. `make test`, run before every commit, draws half; `make test-slow` (CI runs
both) and a plain `pytest` draw the full budget."""

from __future__ import annotations

import os

SCALE_ENV = "MEDHAL_PROPERTY_EXAMPLES_SCALE"


def examples(n: int) -> int:
    """`n` examples, scaled by `MEDHAL_PROPERTY_EXAMPLES_SCALE` (at least 20)."""
    scale = float(os.environ.get(SCALE_ENV, "1"))
    return n if scale >= 1 else max(20, round(n * scale))
