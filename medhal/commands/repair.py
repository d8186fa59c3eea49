"""`medhal repair RUN_DIR`: make a killed run's trace file resumable again (the repair itself is
`medhal.reports.repair`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from medhal.reports.repair import QUIET_SECONDS, repair_run
from medhal.reports.repair import __doc__ as REPAIR_DOC


def cmd_repair(ns: argparse.Namespace) -> int:
    for repair in repair_run(ns.run, force=ns.force):
        print(repair.describe())
    return 0


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `medhal repair` on the `medhal` command's subparsers."""
    parser = subparsers.add_parser(
        "repair",
        help="after a killed eval: move a partial last trace line aside so `eval --resume` works",
        description=(REPAIR_DOC or "").split("\n\n")[1],
    )
    parser.add_argument("run", type=Path, help="eval output directory (or its traces.jsonl)")
    parser.add_argument(
        "--force",
        action="store_true",
        help=f"repair a file modified within the last {QUIET_SECONDS} s (you know nothing writes to it)",
    )
    parser.set_defaults(handler=cmd_repair)
