"""Every reply reader is linear in the reply length: hostile replies of 10 KB and 1 MB,
timed in one run, reported as the ratio 1 MB / 10 KB (100 for linear time; 10,000 for
quadratic). Writes reports/bench/adversarial_replies.json (or --out).

    uv run python bench/adversarial_replies.py [--quick] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from med_halt.replies import READERS as MED_HALT
from med_halt.replies import read_medhal as read_med_halt
from med_halt.scoring import score as med_halt_score
from medfact_bench.replies import READERS as MEDFACT
from medhallu.replies import READERS as MEDHALLU

ROOT = Path(__file__).resolve().parents[1]
CHOICES = {"0": "Iron", "1": "Zinc", "2": "Vitamin C", "3": "None of the above"}
"""An item's options, for the Med-HALT reading that resolves answers against them."""


def hostile(size: int) -> dict[str, str]:
    """Reply shapes that defeat backtracking parsers, each about `size` characters."""
    unit = {
        "score tags never closed": "<score>",
        "think tags never closed": "<think>",
        "closing think tags": "</think>",
        "opening braces": "{",
        "quotes": "'",
        "key-value pairs without braces": "'a': ",
        "quoted keys and colons": '"a":',
        "lines of keys": "'a':\n",
        "negations": "not ",
        "numbered list": "1. ",
        "boxed never closed": "\\boxed{",
        "answer labels": "answer:",
        "verdict sentences": "the answer is not hallucinated because ",
        "unclosed value": "{'cop': 'x",
        # Round 2 (issue 23): the shapes the new rules look for, repeated.
        "corrections between scores": "<score>1</score> Wait, actually, ",
        "score headings": "## Score\n",
        "scale words": "Strong Agreement (",
        "arrow verdicts": "hallucinated → ",
        "translated labels": "答案：",
        "closed boxes": "\\boxed{1}",
        "bracketed indices": "Iron (2) or ",
        "retractions": "No, not ",
        "hedged openers": "I would say ",
        # Round 3 (issue 31): the families the commitment layer reads, repeated.
        "hedges": "1 or possibly 0, ",
        "retracted answers": "Answer: 1\nNo, that's wrong. ",
        "conditionals": "If the trial exists, 0; if not, 1. ",
        "answer tags": "<answer>1</answer>",
        "table rows": "| Verdict | 1 |\n",
        "translated labels and words": "Réponse : hallucinée. ",
        "minus signs": "<score>\u22121</score>",
        "denials in words": "I would not say it is factual. ",
        "footnote marks": "factual.[1] ",
        "words without spaces": "答案不是幻觉",
        # Med-HALT's (issue 31): containers, options where answers stand, commitment cues.
        "option tags": "<answer>Iron</answer>",
        "table label rows": "| Answer | Iron |\n",
        "options listed": "Iron, Zinc or ",
        "function calls": '{"name": "f", "arguments": ',
        "revisions": "Actually, Iron. ",
        "letters": "(C) ",
    }
    shapes = {name: piece * (size // len(piece)) for name, piece in unit.items()}
    shapes["score then digits"] = "<score>" + "9" * size
    shapes["quote, spaces, colon"] = "'" + " " * size + ":"
    shapes["stop here after spaces"] = "{'cop': 'a'}" + " " * size + "x"
    shapes["labels in one score block"] = "<score>" + "the score: x " * (size // 13) + "</score>"
    return shapes


Reader = Callable[[str], object]


def _nota_item():
    """A Med-HALT NOTA task's data with the options above: what `med_halt.scoring.score`
    grades."""
    from med_halt.taskset import MedHaltData

    return MedHaltData(
        idx=0,
        benchmark="med-halt",
        source_id="bench",
        prompt="Input: ...\nOutput: ",
        test_set="reasoning_nota",
        family="reasoning",
        source_question="question:bench",
        gold="None of the above",
        rule="exact",
        choices=dict(CHOICES),
    )


OWN: dict[str, dict[str, Reader]] = {
    "medhallu": {name: partial(lambda r, t: r(t, True), r) for name, r in MEDHALLU.items()},
    "medfact-bench": dict(MEDFACT),
    "med-halt": {name: partial(lambda r, t: r(t, ("cop",)), r) for name, r in MED_HALT.items()},
    "med-halt with options": {"medhal": partial(read_med_halt, keys=("cop",), choices=CHOICES)},
    # What `Task.score` computes per rollout: the reply read under all three conventions and
    # graded (the trace around it costs the same whatever the reply).
    "med-halt score": {"all three": partial(med_halt_score, _nota_item())},
}
"""Each reader of the environments whose readers are timed one by one, with their arguments."""


def scored_on_a_demo_item(env_id: str) -> dict[str, Reader]:
    """An environment's pure `scoring.score` on its first demo item: every reader at once, as a
    trace is scored (what any environment provides, `medhal.kit.contract`)."""
    from importlib import import_module

    from data import demo_options

    from medhal.kit.lines import taskset_class, taskset_config_type
    from medhal.reports.registry import package

    config = taskset_config_type(env_id).model_validate({"id": env_id, **demo_options(env_id)})
    item = taskset_class(env_id)(config).load()[0].data
    return {"every convention": partial(import_module(f"{package(env_id)}.scoring").score, item)}


def benchmarks() -> dict[str, dict[str, Reader]]:
    """`OWN`, then every other installed environment (test environments too, when staged)."""
    from medhal.reports.registry import installed

    return {**OWN, **{env_id: scored_on_a_demo_item(env_id) for env_id in installed() if env_id not in OWN}}


def seconds(reader: Reader, text: str) -> float:
    """Seconds per call, repeating fast calls until 0.05 s have passed (so microsecond
    readers are timed as reliably as slow ones)."""
    calls, start = 0, time.perf_counter()
    while True:
        reader(text)
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= 0.05:
            return elapsed / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="100 KB instead of 1 MB")
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "bench" / "adversarial_replies.json")
    ns = parser.parse_args()
    small, large = 10_000, 100_000 if ns.quick else 1_000_000
    rows = []
    small_shapes, large_shapes = hostile(small), hostile(large)
    for benchmark, readers in benchmarks().items():
        for shape in small_shapes:
            for convention, reader in readers.items():
                t_small = seconds(reader, small_shapes[shape])
                t_large = seconds(reader, large_shapes[shape])
                rows.append(
                    {
                        "benchmark": benchmark,
                        "convention": convention,
                        "shape": shape,
                        "seconds_small": t_small,
                        "seconds_large": t_large,
                        "ratio": t_large / max(t_small, 1e-6),
                    }
                )
    worst = max(rows, key=lambda r: r["ratio"])
    result = {
        "small_chars": small,
        "large_chars": large,
        "linear_ratio": large / small,
        "rows": rows,
        "worst": worst,
    }
    ns.out.parent.mkdir(parents=True, exist_ok=True)
    ns.out.write_text(json.dumps(result, indent=1) + "\n")
    slowest = max(rows, key=lambda r: r["seconds_large"])
    print(
        f"worst ratio {worst['ratio']:.0f} (linear = {large / small:.0f}): "
        f"{worst['benchmark']} {worst['convention']} '{worst['shape']}'"
    )
    print(
        f"slowest {slowest['seconds_large']:.2f} s at {large:,} chars: "
        f"{slowest['benchmark']} {slowest['convention']} '{slowest['shape']}'"
    )


if __name__ == "__main__":
    main()
