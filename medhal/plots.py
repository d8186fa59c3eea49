"""PNG plots for a report: the confusion matrix and per-group accuracy with 95% CIs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def confusion_png(report: dict[str, Any], path: Path) -> Path | None:
    matrix = report.get("confusion")
    if not matrix:
        return None
    rows = list(matrix)
    columns = list(next(iter(matrix.values())))
    values = [[matrix[r][c] for c in columns] for r in rows]
    fig, ax = plt.subplots(figsize=(1.3 * len(columns) + 2, 0.8 * len(rows) + 1.8))
    ax.imshow(values, cmap="Blues")
    ax.set_xticks(range(len(columns)), columns, rotation=30, ha="right")
    ax.set_yticks(range(len(rows)), rows)
    ax.set_xlabel("predicted")
    ax.set_ylabel("gold")
    top = max(max(r) for r in values) or 1
    for y, row in enumerate(values):
        for x, v in enumerate(row):
            ax.text(x, y, str(v), ha="center", va="center", color="white" if v > top / 2 else "black")
    ax.set_title(f"{report['benchmark']}: confusion (n={report['n']})")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def group_bars_png(report: dict[str, Any], field: str, path: Path) -> Path:
    groups = report["groups"][field]
    names = list(groups)
    acc = [groups[g]["accuracy"] for g in names]
    lo = [a - groups[g]["accuracy_ci"][0] for a, g in zip(acc, names)]
    hi = [groups[g]["accuracy_ci"][1] - a for a, g in zip(acc, names)]
    fig, ax = plt.subplots(figsize=(max(4.0, 1.1 * len(names) + 2), 3.6))
    ax.bar(range(len(names)), acc, yerr=[lo, hi], capsize=4, color="#4c72b0")
    ax.set_xticks(range(len(names)), [f"{g}\n(n={groups[g]['n']})" for g in names], fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("accuracy (95% CI)")
    ax.axhline(report["micro_accuracy"], color="gray", linestyle="--", linewidth=1, label="micro")
    ax.legend(loc="upper right", fontsize=8)
    ax.set_title(f"{report['benchmark']}: accuracy by {field}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_plots(report: dict[str, Any], out_dir: Path, prefix: str = "") -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    cm = confusion_png(report, out_dir / f"{prefix}confusion.png")
    if cm:
        written.append(cm)
    for fld in report["groups"]:
        written.append(group_bars_png(report, fld, out_dir / f"{prefix}by_{fld}.png"))
    return written
