#!/usr/bin/env python3
"""Rebuild the published reference reports under reports/.

1. `med-halt--deepseek-r1-7b--samples`: real outputs of deepseek-r1-7b on the 16-row
   samples of all seven Med-HALT sets (a public fork's prediction dump, keyed by row id),
   scored offline with `medhal score med-halt` (both the paper's and the code's formula).
2. `demo--smollm2-135m`: `medhal demo` with the embedded local model.

Needs the shared upstream data (`MEDHAL_SHARED_DATA`, `MEDHAL_ASSETS_DIR` with the prompt
assets) and, for the demo, the `local` extra. Usage:
    uv run python scripts/reference_reports.py [--skip-demo]
    uv run python scripts/reference_reports.py --samples-into DIR   # only the scored samples, traces kept
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def write_deepseek_predictions(samples: Path, preds: Path) -> None:
    """`medhal score` predictions from the fork's deepseek-r1-7b dump of the Med-HALT samples
    (keyed by row id; an answer dict is written back as JSON text)."""
    from medhal.kit.lines import taskset_class, taskset_config_type

    options = {"id": "med-halt", "subset": "all", "dataset_path": str(samples)}
    tasks = taskset_class("med-halt")(taskset_config_type("med-halt").model_validate(options)).select()
    idx_by_id = {t.data.source_id: t.data.idx for t in tasks}
    with open(preds, "w") as f:
        for dump in sorted(samples.glob("*.deepseek-r1-7b.outputs.jsonl")):
            for line in dump.read_text().splitlines():
                row = json.loads(line)
                output = row["output"]
                reply = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
                f.write(json.dumps({"idx": idx_by_id[row["id"]], "reply": reply}) + "\n")


def score_deepseek_samples(samples: Path, out: Path, *options: str, quiet: bool = False) -> None:
    """`medhal score med-halt` on the Med-HALT samples of all seven sets with the fork's
    deepseek-r1-7b answers, into `out`; `options`: more `medhal score` options."""
    with tempfile.TemporaryDirectory() as tmp:
        preds = Path(tmp) / "predictions.jsonl"
        write_deepseek_predictions(samples, preds)
        subprocess.run(
            [
                str(BIN / "medhal"),
                "score",
                "med-halt",
                "--dataset-path",
                str(samples),
                "--predictions",
                str(preds),
                "-o",
                str(out),
                *options,
                "--taskset.subset",
                "all",
            ],
            check=True,
            capture_output=quiet,
        )


def med_halt_deepseek(shared: Path, out: Path) -> None:
    if out.exists():
        shutil.rmtree(out)
    score_deepseek_samples(shared / "medhalt" / "samples", out, "--model", "deepseek-r1-7b (fork dump)")
    withhold_replies(out, "med-halt")
    (out / "traces.jsonl").unlink()  # traces hold upstream prompt text and rows: not published


def withhold_replies(out: Path, env_id: str, shapes: bool = True) -> None:
    """The report again from its traces, for publishing. Prompts can be upstream text and
    model replies can quote the upstream question or prompt: report.html's item view keeps
    every item's rightness under each convention, reward and error, not its prompt, reply,
    gold answer or readings; with `shapes`, the unreadable replies keep their count and
    trace ids, not their text."""
    from medhal.reports.items import ItemLog
    from medhal.reports.registry import report_spec
    from medhal.reports.report import build_report, read_run
    from medhal.reports.report_files import render, shown_source, write_files

    spec = report_spec(env_id)
    traces = out / "traces.jsonl"
    run = read_run(traces, spec, view=ItemLog(spec.group_fields, withhold=True))
    report = build_report(run)
    report["headline"] = list(spec.headline)
    report["source"] = shown_source(traces, out)
    if shapes:
        for shape in report.get("unreadable", []):
            shape["shape"] = "(withheld in the published copy: replies may quote upstream rows)"
    write_files(render(report, items=run.view), out)


def demo(out: Path) -> None:
    """The demo as a newcomer without the pinned prompt files runs it: our demo rows with
    prompts written by medhal (nothing upstream in the published copy)."""
    if out.exists():
        shutil.rmtree(out)
    subprocess.run([str(BIN / "medhal"), "demo", "--demo-prompts", "-o", str(out)], check=True)
    for traces in out.glob("*/traces.jsonl"):
        withhold_replies(traces.parent, traces.parent.name, shapes=False)
        traces.unlink()  # prompts include upstream prompt text: not published
    for extra in [*out.glob("*/eval.*"), *out.glob("*.log")]:
        extra.unlink()
    for config in out.glob("*/config.toml"):  # eval's own: paths of this checkout, made relative to it
        config.write_text(config.read_text().replace(f"{ROOT}/", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-demo", action="store_true")
    parser.add_argument(
        "--samples-into",
        type=Path,
        help="only score the Med-HALT samples into this folder (traces and report, no plots), e.g. as "
        "bench/report_view.py's template run",
    )
    ns = parser.parse_args()
    shared = Path(os.environ.get("MEDHAL_SHARED_DATA", ROOT.parent / "shared" / "data"))
    if ns.samples_into:
        score_deepseek_samples(shared / "medhalt" / "samples", ns.samples_into, "--no-plots", quiet=True)
        return
    med_halt_deepseek(shared, ROOT / "reports" / "med-halt--deepseek-r1-7b--samples")
    if not ns.skip_demo:
        demo(ROOT / "reports" / "demo--smollm2-135m")


if __name__ == "__main__":
    main()
