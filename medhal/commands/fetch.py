"""`medhal fetch`: the command around `medhal.kit.fetch` (arguments, progress, messages, exit status).

Downloads every pinned dataset split and prompt asset the chosen environments and settings
read into one directory, checked against their pinned hashes and resumable, then prints how
to run offline from it. Exit status: 0 every file is there and verified; 2 anything failed
(one line naming the file or URL: no network, a hash mismatch, a full disk, a directory that
cannot be written, a link or special file inside it, another fetch filling it, a server past
the deadline or the listed size, an unknown environment or setting); 130 interrupted (run it
again: what was downloaded is kept, and a file cut off continues).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from medhal.kit.fetch import DEADLINE_S, Chosen, Needs

DEFAULT_DIR = Path("medhal-data")


def declared(env_id: str) -> dict[str, Needs]:
    """An environment's `FETCH` declaration (setting -> needs); empty when it has none."""
    from medhal.reports.registry import benchmark_module

    needs = getattr(benchmark_module(env_id), "FETCH", {})
    return dict(needs) if isinstance(needs, dict) else {}


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `medhal fetch` on the `medhal` command's subparsers."""
    parser = subparsers.add_parser(
        "fetch",
        help="download the pinned datasets and prompt files once, for offline and air-gapped runs",
        description=__doc__.split("\n\n")[1],
    )
    parser.add_argument(
        "env_ids", nargs="*", metavar="ENV", help="environments (default: every installed one)"
    )
    parser.add_argument(
        "--setting",
        action="append",
        default=[],
        metavar="NAME",
        help="only this setting (a Hub config or test set: pqa_labeled, reasoning_nota, ...); repeatable",
    )
    parser.add_argument(
        "-o", "--output", type=Path, default=DEFAULT_DIR, help=f"directory to fill (default ./{DEFAULT_DIR})"
    )
    parser.add_argument(
        "--asset-mirror",
        metavar="URL",
        type=asset_mirror,
        help="fetch prompt assets from URL/<asset name> instead of their pinned URLs (still hash-checked)",
    )
    parser.add_argument(
        "--deadline",
        type=deadline_seconds,
        default=DEADLINE_S,
        metavar="SECONDS",
        help=f"the most one file (or one dataset's file list) may take, first request to last byte; "
        f"a slower or stalled server is given up (default {DEADLINE_S:g})",
    )
    parser.add_argument(
        "--list", action="store_true", help="list what would be fetched and exit (no network)"
    )
    parser.set_defaults(handler=cmd_fetch)


def asset_mirror(text: str) -> str:
    """The argparse type of --asset-mirror: an http(s) URL with a host (an empty one would
    silently mean the pinned URLs)."""
    from medhal.kit.fetch import FetchError, mirror_url

    try:
        return mirror_url(text, "URL")
    except FetchError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def deadline_seconds(text: str) -> float:
    """The argparse type of --deadline: a finite number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, got {text!r}")
    return value


def progress_bar(name: str, total: int | None, initial: int) -> Any:
    from tqdm import tqdm

    return tqdm(
        total=total,
        initial=initial,
        desc=name,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        leave=False,
        file=sys.stderr,
        disable=None,  # only on a terminal
    )


def print_plan(chosen: Chosen) -> None:
    """`--list`: what each environment's settings would fetch."""
    for env_id, settings in chosen.settings.items():
        print(f"{env_id}: {', '.join(settings) or 'nothing to fetch'}")
    for split in chosen.splits:
        d = split.dataset
        print(f"  dataset {d.id}@{d.revision} config {d.config or 'default'} -> {split.target}.<ext>")
    for asset in chosen.assets:
        print(f"  asset {asset.name} <- {asset.url}")


def cmd_fetch(ns: argparse.Namespace) -> int:
    from medhal.kit.fetch import Dropped, FetchError, choose, fetch
    from medhal.reports.registry import installed, normal_id

    env_ids = [normal_id(e) for e in ns.env_ids] or list(installed())
    datasets: list[tuple[str, Path]] = []
    try:
        chosen = choose(env_ids, declared, ns.setting)
        if ns.list:
            print_plan(chosen)
            return 0
        for done in fetch(chosen, ns.output, ns.asset_mirror, progress_bar, deadline_s=ns.deadline):
            if isinstance(done, Dropped):
                print(f"{'dropped':>10}  {done.path}  (from the manifest: {done.reason})", flush=True)
                continue
            print(
                f"{done.status:>10}  {done.path}  ({done.size:,} bytes, sha256 {done.sha256[:12]})",
                flush=True,
            )
            if done.source.get("kind") == "dataset":
                datasets.append((str(done.source.get("config") or done.source.get("dataset")), done.path))
    except FetchError as e:
        print(f"medhal fetch: error: {e}", file=sys.stderr)
        return 2
    root = ns.output
    print(f"\nall files verified in {root}. On the offline machine, with this directory copied there:")
    print(f"  export MEDHAL_ASSETS_DIR={root.resolve()}")
    for name, path in datasets:
        print(f"  {name}: --taskset.dataset-path {path.resolve()}")
    return 0
