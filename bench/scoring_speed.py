"""What scoring one rollout costs: `Task.score` (the rubric an env-server worker runs per
rollout: every reading convention, the grade, the trace) on a 2,000-token reply with a
reasoning block, and on replies of 10 KB and 1 MB (the ratio 1 MB / 10 KB: 100 for
linear time), per benchmark, in one run, in CPU time of this process. Writes
reports/bench/scoring_speed.json (or --out). Issue 31 asks for at most 1 ms per
2,000-token reply with a reasoning block and a small constant on 1 MB.

    uv run python bench/scoring_speed.py [--bench medhallu ...] [--quick] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine

ROOT = Path(__file__).resolve().parents[1]
TOKEN_CHARS = 4
"""Characters per token of English prose (the usual rule of thumb for these tokenizers)."""
REASONING_TOKENS = 1_900
PROSE = (
    "The question asks whether the drug lowers the risk in adults with the condition. The shown "
    "answer cites a randomised trial of 1,200 patients followed for 2 years, with 10 mg daily. "
    "Checking the abstract: the cohort was older, the dose matched, and the primary outcome fell by "
    "about 20 percent; one secondary outcome was not reported. Maybe the answer is right, maybe not; "
    "I could say 0 or 1 at this point, so let me weigh it again. "
)


def reasoning(tokens: int) -> str:
    """A reasoning block of about `tokens` tokens of deliberation (numbers, hedges, both
    verdicts considered: what real reasoning holds)."""
    text = (PROSE * (tokens * TOKEN_CHARS // len(PROSE) + 1))[: tokens * TOKEN_CHARS]
    return f"<think>\n{text}\n</think>\n\n"


ANSWERS = {
    "medhallu": "The cited trial exists and the figures match the abstract.\n\n**Final answer:** 0",
    "medfact-bench": "<score>2</score>",
}
"""The answer part after the reasoning, as models write it."""
HOSTILE = {
    "medhallu": ["The answer is 1, though 0 is possible. ", "Answer: not 1\n", "hallucinated, not factual. "],
    "medfact-bench": ["<score>1</score> Actually, ", "Score: 2 or possibly 1. ", "## Score\n-1\n"],
}
"""Units repeated to fill a long reply with answers, hedges and corrections."""
PLAIN = {
    "medhallu": "The cohort enrolled 1,200 adults over 2 years; the dose was 10 mg daily. ",
    "medfact-bench": "The article reports 2 cohorts of 1,200 adults; the effect was small. ",
}
"""Prose with numbers but no answer, repeated, then the answer at the end."""


def demo_options(env_id: str) -> dict[str, Any]:
    """The options that load the benchmark's bundled demo rows (no network, no shared data)."""
    if env_id == "medhallu":
        from medhallu.benchmark import DEMO_ROWS

        return {"dataset_path": str(DEMO_ROWS), "prompts": "demo"}
    from medfact_bench.benchmark import DEMO_OPTIONS

    return dict(DEMO_OPTIONS)


def repeated(unit: str, chars: int) -> str:
    return unit * (chars // len(unit))


def task_for(env_id: str) -> Any:
    """The first demo task of the benchmark, built as `eval` builds it."""
    from medhal.kit.lines import taskset_class, taskset_config_type

    config = taskset_config_type(env_id).model_validate({"id": env_id, **demo_options(env_id)})
    return next(iter(taskset_class(env_id)(config).select()))


def seconds_per_call(call: Callable[[], Any], budget: float) -> float:
    """The median over repeated batches of the CPU seconds one call takes (process time:
    on a shared machine, the time other processes hold the cores is not counted)."""
    per_call = []
    deadline = time.process_time() + budget
    while time.process_time() < deadline or len(per_call) < 5:
        start = time.process_time()
        calls = 0
        while calls < 5 or time.process_time() - start < 0.02:
            call()
            calls += 1
        per_call.append((time.process_time() - start) / calls)
    return statistics.median(per_call)


def measure(env_id: str, quick: bool) -> dict[str, Any]:
    from medhal.kit.task import score_reply

    task = task_for(env_id)
    loop = asyncio.new_event_loop()

    def score(reply: str) -> Callable[[], Any]:
        return lambda: loop.run_until_complete(score_reply(task, reply))

    budget = 0.5 if quick else 2.0
    reply = reasoning(REASONING_TOKENS) + ANSWERS[env_id]
    result: dict[str, Any] = {
        "reply_tokens": len(reply) // TOKEN_CHARS,
        "reply_chars": len(reply),
        "task_score_ms": seconds_per_call(score(reply), budget) * 1e3,
        "task_score_no_reasoning_ms": seconds_per_call(score(ANSWERS[env_id]), budget) * 1e3,
    }
    small, large = 10_000, 100_000 if quick else 1_000_000
    shapes = {
        "reasoning block, then the answer": lambda n: reasoning(n // TOKEN_CHARS) + ANSWERS[env_id],
        "prose with numbers, then the answer": lambda n: (
            PLAIN[env_id] * (n // len(PLAIN[env_id])) + ANSWERS[env_id]
        ),
        **{f"answers repeated: {unit!r}": partial(repeated, unit) for unit in HOSTILE[env_id]},
    }
    rows = []
    for name, make in shapes.items():
        short, long = make(small), make(large)
        t_small = seconds_per_call(score(short), budget / 4)
        t_large = seconds_per_call(score(long), 0)
        rows.append(
            {
                "shape": name,
                "seconds_small": t_small,
                "seconds_large": t_large,
                "ratio": t_large / max(t_small, 1e-9),
            }
        )
    result.update(small_chars=small, large_chars=large, linear_ratio=large / small, long_replies=rows)
    loop.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bench", action="append", choices=sorted(ANSWERS), help="only these benchmarks")
    parser.add_argument("--quick", action="store_true", help="100 KB instead of 1 MB, shorter timing")
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "bench" / "scoring_speed.json")
    ns = parser.parse_args()
    results = {env_id: measure(env_id, ns.quick) for env_id in ns.bench or sorted(ANSWERS)}
    for env_id, r in results.items():
        print(
            f"{env_id}: Task.score {r['task_score_ms']:.3f} ms per {r['reply_tokens']:,}-token reply with a "
            f"reasoning block ({r['task_score_no_reasoning_ms']:.3f} ms for the answer alone)"
        )
        for row in r["long_replies"]:
            print(
                f"  {row['shape']}: {row['seconds_small'] * 1e3:.2f} ms at {r['small_chars']:,} chars, "
                f"{row['seconds_large']:.3f} s at {r['large_chars']:,} (ratio {row['ratio']:.0f}; linear "
                f"{r['linear_ratio']:.0f})"
            )
    ns.out.parent.mkdir(parents=True, exist_ok=True)
    ns.out.write_text(json.dumps({"machine": machine(), "results": results}, indent=1) + "\n")
    print(f"wrote {ns.out}")


if __name__ == "__main__":
    main()
