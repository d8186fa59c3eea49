"""Writes each environment's `eval_fingerprints.json` (package data: the fingerprints of its
evaluation sets' items, `medhal.kit.roles`) from the real data files.

    uv run python scripts/eval_fingerprints.py DATA_DIR          # every environment
    uv run python scripts/eval_fingerprints.py DATA_DIR --check  # compare, write nothing

`DATA_DIR` is laid out as `medhal fetch -o DIR` writes it (and as the tests' shared data is):
each evaluation set at `DATA_DIR/<stem>.<ext>`, the stems in the environment's
`benchmark.EVALUATION_SETS` (e.g. `medhallu/pqa_labeled.jsonl`, `medhalt/reasoning_fake.csv`),
any of the local formats the environments read. A set without its file gets no
fingerprints, and the file says so (`not_computed`): a complete fetch gives them all. Each
set's rows are checked as loading checks them, then every item's question and answer text
is hashed by the environment's `rows.evaluation_items`; the text itself is never written.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Any

from medhal.kit.assets import sha256_file
from medhal.kit.contract import environments
from medhal.kit.datasets import LOCAL_FORMATS, load_rows
from medhal.kit.roles import fingerprint_document, item_fingerprint

ROOT = Path(__file__).resolve().parents[1]


def set_file(data_dir: Path, stem: str) -> Path | None:
    found = [data_dir / f"{stem}{ext}" for ext in LOCAL_FORMATS if (data_dir / f"{stem}{ext}").is_file()]
    if len(found) > 1:
        raise SystemExit(f"{data_dir}: several files for {stem}: {', '.join(map(str, found))}")
    return found[0] if found else None


def fingerprints(module: str, data_dir: Path) -> dict[str, Any]:
    """The fingerprint document of one environment, from the files under `data_dir`."""
    benchmark = importlib.import_module(f"{module}.benchmark")
    rows = importlib.import_module(f"{module}.rows")
    sets: dict[str, tuple[list[str], dict[str, Any]]] = {}
    missing = {}
    for name, stem in benchmark.EVALUATION_SETS.items():
        file = set_file(data_dir, stem)
        if file is None:
            missing[name] = (
                f"no complete {stem}.<ext> in the data these fingerprints were made from "
                "(scripts/eval_fingerprints.py on a full `medhal fetch` computes it)"
            )
            continue
        loaded = load_rows(benchmark.DATASET, file)
        items = rows.evaluation_items(name, loaded.rows, str(file))
        source = {
            "file": file.relative_to(data_dir).as_posix(),
            "sha256": sha256_file(file),
            "rows": len(loaded.rows),
        }
        sets[name] = ([item_fingerprint(q, a) for q, a in items], source)
    return fingerprint_document(sets, missing)


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=1, sort_keys=True) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--check", action="store_true", help="compare with the shipped files; write nothing")
    ns = parser.parse_args()
    stale = []
    for module in (env.package for env in environments(ROOT)):
        benchmark = importlib.import_module(f"{module}.benchmark")
        text = render(fingerprints(module, ns.data_dir))
        target: Path = benchmark.EVAL_FINGERPRINTS
        if ns.check:
            if not target.is_file() or target.read_text(encoding="utf-8") != text:
                stale.append(str(target))
            continue
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target}")
    if stale:
        print("stale (re-run without --check): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
