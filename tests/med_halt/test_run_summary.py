"""What the platform shows for a run of several Med-HALT sets equals what the report says.

A trace records only the outcomes of its own set (the FCT verdict, the fake-question rules,
the IR rules), so each outcome's average over the traces that carry it is the rate over the
items it applies to. That is how the Prime platform's summary of a run is computed on both
verifiers lines (0.2.1: `push_traces`' `compute_metrics`, "averaged over the traces that
recorded it"; 0.4.0: `prime_runs.metrics.from_episodes`, the same rule) and how prime-rl
averages its eval metrics (`CustomMetrics.stats` at 559b447 averages a name over the traces
that hold it). The demo rows of every set run through the line's own eval against a scripted
endpoint (gold, wrong and unreadable replies by turns); on 0.2 the run is pushed to a
stand-in for the platform on 127.0.0.1 and its summary is the one the platform received.

verifiers' live dashboard (`--rich`, the default; both lines, and verifiers' main at
a60a606) reads a metric a trace lacks as 0 and averages over every finished rollout: its
rows for a set's own outcomes stay diluted in a mixed run, whatever a trace carries. The last
test pins that fact, which the README states.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from medhal.kit.lines import LINE
from medhal.kit.outcomes import CONVENTIONS
from tests.running import eval_main, medhal_main
from tests.scripted_endpoint import ScriptedEndpoint
from tests.test_cross_line import demo_options, last_user_text, line_eval, scripted_replies

FCT, FAKE = "reasoning_FCT", "reasoning_fake"
ENV = "med-halt"


class FakePlatform(ScriptedEndpoint):
    """The four calls verifiers 0.2.1's `push_traces` makes to the platform's API, answered
    as the platform answers them; every body kept in `posted` by path."""

    def __init__(self) -> None:
        super().__init__(lambda body, n: "")
        self.posted: dict[str, dict[str, Any]] = {}

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/api/v1/{path:.*}", self._post)

    async def _post(self, request: web.Request) -> web.Response:
        path = request.match_info["path"]
        self.posted[path] = await request.json()
        if path == "environmentshub/resolve":
            return web.json_response({"data": {"id": "env-1"}})
        if path == "evaluations/":
            return web.json_response({"evaluation_id": "eval-1"})
        return web.json_response({})


def run_and_report(work: Path) -> tuple[dict[str, float], Path, dict[str, Any]]:
    """The demo rows of all seven sets through the installed line's eval: the platform's
    summary (`avg_metrics`, rewards included), the trace file and the report of the run."""
    options = demo_options("med_halt")
    replies = scripted_replies(ENV, options)
    out = work / "run"
    with ScriptedEndpoint(lambda body, n: replies[last_user_text(body)]) as model:
        if LINE == "0.2":
            summary, traces = _pushed_on_02(model.base_url, out, options)
        else:
            summary, traces = _summary_on_04(model.base_url, out, options)
    proc = medhal_main("report", str(traces.parent), "--no-plots")
    assert proc.returncode == 0, proc.stderr
    return summary, traces, json.loads((traces.parent / "report.json").read_text())


def _pushed_on_02(base_url: str, out: Path, options: dict[str, Any]) -> tuple[dict[str, float], Path]:
    args = []
    for key, value in options.items():
        args += [f"--taskset.{key}", value if isinstance(value, str) else json.dumps(value)]
    with FakePlatform() as platform:
        proc = eval_main(
            ENV,
            "--client.base-url",
            base_url,
            "--no-rich",
            "-m",
            "scripted",
            "-o",
            str(out),
            *args,
            env={"PRIME_API_KEY": "scripted", "PRIME_BASE_URL": platform.base_url.removesuffix("/v1")},
        )
    assert proc.returncode == 0, proc.stderr[-4000:]
    final = platform.posted["evaluations/eval-1/finalize"]["metrics"]
    assert final == platform.posted["evaluations/"]["metrics"]
    return final["avg_metrics"], out / "traces.jsonl"


def _summary_on_04(base_url: str, out: Path, options: dict[str, Any]) -> tuple[dict[str, float], Path]:
    """0.4 pushes through prime_runs, whose client needs the real platform: the summary is the
    one its `finish_run` sends, `prime_runs.metrics.from_episodes`, of the run's episodes. The
    0.3 line (0.3.0, 0.3.1, the build prime-rl pins) pushes through verifiers' own
    `verifiers.v1.utils.platform`, whose run metrics are the same summary."""
    import verifiers.v1 as vf

    traces = line_eval(ENV, base_url, out, options)
    episodes = [vf.Episode.model_validate_json(line) for line in traces.read_text().splitlines() if line]
    if LINE == "0.3":
        from verifiers.v1.utils import platform

        # `_run_metrics` in 0.3.0 and 0.3.1, `run_metrics` in the build prime-rl pins.
        run_metrics = getattr(platform, "run_metrics", None) or platform._run_metrics
        summary = run_metrics(episodes, [t for e in episodes for t in e.traces])
    else:
        from prime_runs.metrics import from_episodes

        summary = from_episodes(episodes)
    return dict(summary["avg_metrics"]), traces


def report_figure(report: dict[str, Any], metric: str) -> float:
    """The report's figure that a metric's average over the traces holding it must equal."""
    for c in CONVENTIONS:
        figures = report["conventions"][c]
        sets = {name: group["conventions"][c] for name, group in report["groups"]["test_set"].items()}
        memory = report["groups"]["family"]["memory"]["conventions"][c]
        named = {
            f"correct_{c}": figures["accuracy"],
            f"parsed_{c}": figures["parse_rate"],
            f"verdict_correct_{c}": sets[FCT]["fct_verdict_accuracy"],
            f"fake_decline_{c}": sets[FAKE]["fake_decline_accuracy"],
            f"fake_keywords_{c}": sets[FAKE]["fake_keywords_accuracy"],
            # every IR set has both rules: over the IR items, the memory family
            f"ir_exact_{c}": memory["ir_exact_accuracy"],
            f"ir_normalized_{c}": memory["ir_normalized_accuracy"],
        }
        if metric in named:
            return float(named[metric])
    own = report["conventions"][report["convention"]]
    run = {
        "correct": own["accuracy"],
        "parsed": own["parse_rate"],
        "paper_points": own["paper_score"],  # eq. 1 per item; its mean over all items
        "points": own["accuracy"],  # the reward: 1 right, 0 otherwise under the default options
    }
    return float(run[metric])


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory) -> tuple[dict[str, float], Path, dict[str, Any]]:
    return run_and_report(tmp_path_factory.mktemp("mixed"))


def test_the_platform_summary_of_a_mixed_run_is_the_reports(mixed_run):
    summary, _, report = mixed_run
    assert report["n_errors"] == 0 and len(report["groups"]["test_set"]) == 7  # the demo rows of every set
    expected = {
        "correct",
        "parsed",
        "paper_points",
        "points",
        *(
            f"{name}_{c}"
            for c in CONVENTIONS
            for name in ("correct", "parsed", "verdict_correct", "fake_decline", "fake_keywords", "ir_exact")
        ),
        *(f"ir_normalized_{c}" for c in CONVENTIONS),
    }
    assert set(summary) == expected
    for metric, value in summary.items():
        assert value == pytest.approx(report_figure(report, metric)), metric
    # not equal by accident: a 0.0 recorded on the other sets' items would change these rates
    fake = report["groups"]["test_set"][FAKE]
    assert fake["conventions"]["medhal"]["fake_decline_accuracy"] > 0 and fake["n"] < report["n"]


def test_a_trace_carries_only_what_applies_to_its_set(mixed_run):
    _, traces, _ = mixed_run
    from medhal.reports.traces import iter_traces

    suffixes = tuple(f"_{c}" for c in CONVENTIONS)
    for record in iter_traces(traces):
        test_set = record.data["test_set"]
        outcomes = {k.rsplit("_", 1)[0] if k.endswith(suffixes) else k for k in record.metrics}
        extra = outcomes - {"correct", "parsed", "paper_points"}
        applies = {FCT: {"verdict_correct"}, FAKE: {"fake_decline", "fake_keywords"}}.get(
            test_set, {"ir_exact", "ir_normalized"} if test_set.startswith("IR_") else set()
        )
        assert extra == applies, (test_set, sorted(record.metrics))


def test_the_live_dashboard_reads_an_absent_metric_as_0(mixed_run):
    """A fact of verifiers (not ours, and nothing in a trace changes it): its live dashboard's
    metrics row divides a metric's sum by every finished rollout, so the fake-question decline
    rate of a mixed run shows as declined fake questions over all items."""
    summary, traces, report = mixed_run
    lines = [line for line in traces.read_text().splitlines() if line]
    if LINE == "0.2":
        from rich.console import Console
        from verifiers.v1.cli.dashboard.eval import _breakdown
        from verifiers.v1.trace import WireTrace

        console = Console(record=True, width=100_000)
        console.print(_breakdown([WireTrace.model_validate_json(line) for line in lines]))
        shown = console.export_text()
    else:
        import verifiers.v1 as vf
        from verifiers.v1.cli.dashboard.eval import _score_segments

        done = [t for line in lines for t in vf.Episode.model_validate_json(line).traces]
        shown = _score_segments(done, "metrics") or ""
    fake_items = report["groups"]["test_set"][FAKE]["n"]
    diluted = summary["fake_decline_medhal"] * fake_items / report["n"]
    assert f"fake_decline_medhal {diluted:.2f}" in shown
    assert f"{diluted:.2f}" != f"{summary['fake_decline_medhal']:.2f}"
