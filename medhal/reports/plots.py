"""PNG plots for a report: the confusion matrix and per-group accuracy with 95% CIs.

Plots are rendered to bytes, so a report's files can all be written at once, after
everything has rendered (nothing half-written when a plot fails). matplotlib is imported
only when a plot is drawn: reading a report without plots never pays for it.

Every label is literal text: group values come from the data, and matplotlib would read
`$...$` in them as mathtext (a `$\\mathcal{Q$` category stopped the whole report) and draw
control characters as they are; mathtext is switched off and labels pass through
`medhal.kit.untrusted.printable`.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

from medhal.kit.untrusted import printable


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Any) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    _pyplot().close(fig)
    return buffer.getvalue()


def confusion_png(report: Mapping[str, Any]) -> bytes | None:
    matrix = report.get("confusion")
    if not matrix:
        return None
    plt = _pyplot()
    rows = list(matrix)
    columns = list(next(iter(matrix.values())))
    values = [[matrix[r][c] for c in columns] for r in rows]
    fig, ax = plt.subplots(figsize=(1.3 * len(columns) + 2, 0.8 * len(rows) + 1.8))
    ax.imshow(values, cmap="Blues")
    ax.set_xticks(range(len(columns)), [printable(str(c)) for c in columns], rotation=30, ha="right")
    ax.set_yticks(range(len(rows)), [printable(str(r)) for r in rows])
    ax.set_xlabel("predicted")
    ax.set_ylabel("gold")
    top = max(max(r) for r in values) or 1
    for y, row in enumerate(values):
        for x, v in enumerate(row):
            ax.text(x, y, str(v), ha="center", va="center", color="white" if v > top / 2 else "black")
    ax.set_title(f"{report['benchmark']}: confusion ({report['convention']} reading, n={report['n']})")
    fig.tight_layout()
    return _png(fig)


def group_bars_png(report: Mapping[str, Any], field: str) -> bytes:
    return _png(group_bars_figure(report, field))


ALL_ZERO = "every accuracy here is 0"
"""Written across a bar plot with no bar to draw, so that it does not look empty by mistake."""


def group_bars_figure(report: Mapping[str, Any], field: str) -> Any:
    """Accuracy by group with 95% intervals, as horizontal bars: group names sit one under
    the other, so long ones (Med-HALT's IR_abstract2pubmedlink) never run into each other."""
    plt = _pyplot()
    groups = report["groups"][field]
    names = list(groups)
    acc = [groups[g]["accuracy"] for g in names]
    ci = [groups[g].get("accuracy_ci") or [a, a] for a, g in zip(acc, names, strict=True)]
    lo = [max(a - c[0], 0.0) for a, c in zip(acc, ci, strict=True)]
    hi = [max(c[1] - a, 0.0) for a, c in zip(acc, ci, strict=True)]
    fig, ax = plt.subplots(figsize=(6.4, 0.45 * len(names) + 1.6))
    y = range(len(names))
    ax.barh(y, acc, xerr=[lo, hi], capsize=3, color="#4c72b0")
    ax.set_yticks(y, [f"{printable(str(g))} (n={groups[g]['n']})" for g in names], fontsize=8)
    ax.invert_yaxis()  # the report's order, top to bottom
    ax.set_xlim(0, 1)
    ax.set_xlabel("accuracy (95% CI)")
    if report.get("micro_accuracy") is not None:
        ax.axvline(report["micro_accuracy"], color="gray", linestyle="--", linewidth=1, label="micro")
        ax.legend(loc="lower right", fontsize=8)
    if all(a == 0 for a in acc):
        ax.text(0.5, 0.5, ALL_ZERO, transform=ax.transAxes, ha="center", va="center", color="#b3261e")
    ax.set_title(f"{report['benchmark']}: accuracy by {field}")
    fig.tight_layout()
    return fig


def render_plots(report: Mapping[str, Any]) -> dict[str, bytes]:
    """File name -> PNG bytes for every plot of a report."""
    import matplotlib

    plots: dict[str, bytes] = {}
    _pyplot()
    # Every label drawn as the characters it holds.
    with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):
        confusion = confusion_png(report)
        if confusion is not None:
            plots["confusion.png"] = confusion
        for field in report["groups"]:
            plots[f"by_{field}.png"] = group_bars_png(report, field)
    return plots


WORKER_MIN_BYTES = 8 * 2**20
"""Trace files this large or larger get their plots drawn by a `PlotWorker`: reading them takes
about as long as importing matplotlib, which the worker does meanwhile. Smaller runs draw in
the process (a worker's own start-up would cost more than it hides)."""


def _warm() -> None:
    """Import matplotlib (in the worker, while the caller reads its traces)."""
    _pyplot()


class PlotWorker:
    """Plots drawn in a process of their own, started before the traces are read, so that
    importing matplotlib (most of what plots cost) goes on beside the reading instead of after
    it. The worker runs `render_plots`, the code that draws them in-process, so the PNGs are
    the same; should the worker process die, the plots are drawn here. A fresh interpreter
    (`spawn`), never a fork of this process, which may hold threads and locks."""

    def __init__(self) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        self._pool.submit(_warm)  # starts the process now, and matplotlib's import in it

    def render(self, report: Mapping[str, Any]) -> dict[str, bytes]:
        from concurrent.futures.process import BrokenProcessPool

        try:
            return self._pool.submit(render_plots, dict(report)).result()
        except BrokenProcessPool:
            return render_plots(report)

    def close(self) -> None:
        self._pool.shutdown(cancel_futures=True)

    def __enter__(self) -> PlotWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
