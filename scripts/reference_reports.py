#!/usr/bin/env python3
"""Rebuild the published reference reports under reports/.

1. `med-halt--deepseek-r1-7b--samples`: real outputs of deepseek-r1-7b on the 16-row
   samples of all seven Med-HALT sets (a public fork's prediction dump, keyed by row id),
   scored offline with `medhal score med-halt` (both the paper's and the code's formula).
2. `demo--smollm2-135m`: `medhal demo` with the embedded local model.

Needs the shared upstream data (`MEDHAL_SHARED_DATA`, `MEDHAL_ASSETS_DIR` with the prompt
assets) and, for the demo, the `local` extra. Usage:
    uv run python scripts/reference_reports.py [--skip-demo]
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


def med_halt_deepseek(shared: Path, out: Path) -> None:
    from medhal.kit.lines import taskset_class, taskset_config_type

    samples = shared / "medhalt" / "samples"
    options = {"id": "med-halt", "subset": "all", "dataset_path": str(samples)}
    tasks = taskset_class("med-halt")(taskset_config_type("med-halt").model_validate(options)).select()
    idx_by_id = {t.data.source_id: t.data.idx for t in tasks}
    with tempfile.TemporaryDirectory() as tmp:
        preds = Path(tmp) / "predictions.jsonl"
        with open(preds, "w") as f:
            for dump in sorted(samples.glob("*.deepseek-r1-7b.outputs.jsonl")):
                for line in dump.read_text().splitlines():
                    row = json.loads(line)
                    output = row["output"]
                    reply = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
                    f.write(json.dumps({"idx": idx_by_id[row["id"]], "reply": reply}) + "\n")
        if out.exists():
            shutil.rmtree(out)
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
                "--model",
                "deepseek-r1-7b (fork dump)",
                "--taskset.subset",
                "all",
            ],
            check=True,
        )
    (out / "traces.jsonl").unlink()  # traces hold upstream prompt text and rows: not published
    withhold_replies(out)


def withhold_replies(out: Path) -> None:
    """Model replies can quote the upstream question or prompt: the published copy keeps
    how many replies were unreadable and their trace ids, not their text."""
    from medhal.reports.report_files import render, write_files

    report = json.loads((out / "report.json").read_text())
    for shape in report.get("unreadable", []):
        shape["shape"] = "(withheld in the published copy: replies may quote upstream rows)"
    write_files(render(report), out)


def demo(out: Path) -> None:
    """The demo as a newcomer without the pinned prompt files runs it: our demo rows with
    prompts written by medhal (nothing upstream in the published copy)."""
    if out.exists():
        shutil.rmtree(out)
    subprocess.run([str(BIN / "medhal"), "demo", "--demo-prompts", "-o", str(out)], check=True)
    for traces in out.glob("*/traces.jsonl"):
        traces.unlink()  # prompts include upstream prompt text: not published
    for extra in [*out.glob("*/eval.*"), *out.glob("*.log")]:
        extra.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-demo", action="store_true")
    ns = parser.parse_args()
    shared = Path(os.environ.get("MEDHAL_SHARED_DATA", ROOT.parent / "shared" / "data"))
    med_halt_deepseek(shared, ROOT / "reports" / "med-halt--deepseek-r1-7b--samples")
    if not ns.skip_demo:
        demo(ROOT / "reports" / "demo--smollm2-135m")


if __name__ == "__main__":
    main()
