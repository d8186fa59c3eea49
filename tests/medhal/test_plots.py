"""Plots a reader can read: group names that do not run into each other (Med-HALT's seven
set names, the longest 22 characters), and a plot with nothing to draw that says so."""

from __future__ import annotations

from itertools import combinations

from med_halt.benchmark import SETS as MED_HALT_SETS
from medhal.reports.plots import ALL_ZERO, group_bars_figure, group_bars_png

SETS = tuple(MED_HALT_SETS)


def report(accuracies: list[float]) -> dict:
    groups = {
        name: {"n": 16, "accuracy": a, "accuracy_ci": [max(a - 0.1, 0.0), min(a + 0.1, 1.0)]}
        for name, a in zip(SETS, accuracies, strict=True)
    }
    micro = sum(accuracies) / len(accuracies)
    return {"benchmark": "med-halt", "micro_accuracy": micro, "groups": {"test_set": groups}}


def tick_boxes(fig) -> list:
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return [label.get_window_extent(renderer) for label in fig.axes[0].get_yticklabels()]


def test_group_names_do_not_overlap():
    fig = group_bars_figure(report([0.1, 0.5, 0.2, 0.4, 0.1, 0.4, 0.3]), "test_set")
    boxes = tick_boxes(fig)
    assert len(boxes) == 7
    overlapping = [
        (SETS[i], SETS[j]) for (i, a), (j, b) in combinations(enumerate(boxes), 2) if a.overlaps(b)
    ]
    assert overlapping == []
    height = fig.canvas.get_width_height()[1]
    assert all(b.x0 >= 0 and b.y0 >= 0 and b.y1 <= height for b in boxes)  # nothing cut off at the edges
    assert not any(t.get_text() == ALL_ZERO for t in fig.axes[0].texts)


def test_the_check_sees_overlapping_labels():
    """The overlap check can fail: the same labels, too large for the rows."""
    fig = group_bars_figure(report([0.1] * 7), "test_set")
    for label in fig.axes[0].get_yticklabels():
        label.set_fontsize(80)
    boxes = tick_boxes(fig)
    assert any(a.overlaps(b) for a, b in combinations(boxes, 2))


def test_an_all_zero_plot_says_so():
    fig = group_bars_figure(report([0.0] * 7), "test_set")
    assert [t.get_text() for t in fig.axes[0].texts] == [ALL_ZERO]
    assert group_bars_png(report([0.0] * 7), "test_set").startswith(b"\x89PNG")


def test_the_plot_worker_draws_the_plots_drawn_in_process(tmp_path):
    """Large runs draw their plots in a worker process started before the traces are read
    (`PlotWorker`): the same code, the same PNGs."""
    from medhal.reports.plots import PlotWorker, render_plots
    from tests.medhal.test_html import CLEAN, toy_report

    report = toy_report(tmp_path, CLEAN)
    with PlotWorker() as worker:
        drawn = worker.render(report)
    assert drawn == render_plots(report) and set(drawn) == {"confusion.png", "by_part.png", "by_topic.png"}
