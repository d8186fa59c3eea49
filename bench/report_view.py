"""report.html's per-item view at 2,000, 14,000 and 60,000 items: file size, the cost of
collecting the items while a report reads its traces, and the time headless Chromium takes
to open the page and show the first items.

The traces are real: Med-HALT's 16-row samples of all seven sets, scored offline with the
real deepseek-r1-7b answers (`medhal score`), so every prompt is the real prompt (few-shot
examples included) and every reading is the real one. They are repeated up to each size
with fresh idx; each reply gets a reasoning block in front of the real answer, 150 to 450
words drawn at random from the prompts' own vocabulary (random words compress worse than
prose, so the sizes are an upper bound for replies of that length).

Chromium is driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`,
standard library only): wall time from the navigation command to the first page of items
on screen (`data-items-ready`, set by the page) and to the prompts decoded too, the page's
JavaScript heap, the time one filter change takes over every item, and every console message
(there must be none).

    MEDHAL_SHARED_DATA=../shared/data MEDHAL_ASSETS_DIR=../shared/data uv run python bench/report_view.py
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import BIN, ROOT, out_dir, run_measured, shared_data, table, write_json

SIZES = (2_000, 14_000, 60_000)
PHASES = """
import sys, time
from pathlib import Path
from medhal.reports.registry import report_spec
from medhal.reports.items import ItemLog
from medhal.reports.report import build_report, read_run
from medhal.reports.report_files import render
path = Path(sys.argv[1])
spec = report_spec("med-halt")
out = {}
for with_view in (False, True):
    t0 = time.perf_counter()
    run = read_run(path, spec, view=ItemLog(spec.group_fields) if with_view else None)
    report = build_report(run)
    t1 = time.perf_counter()
    files = render(report, plots=False, items=run.view)
    t2 = time.perf_counter()
    key = "view" if with_view else "plain"
    out[key + "_read_s"], out[key + "_render_s"] = t1 - t0, t2 - t1
    html = files["report.html"]
    out[key + "_html_bytes"] = len(html.encode()) if isinstance(html, str) else sum(map(len, html))
print(out)
"""


def template_traces(work: Path) -> list[dict[str, Any]]:
    """The 112 real Med-HALT sample traces (`medhal score` with the real answers, through
    `scripts/reference_reports.py --samples-into`, run as a program)."""
    if shared_data() is None:
        raise SystemExit("needs MEDHAL_SHARED_DATA (and MEDHAL_ASSETS_DIR for the prompt files)")
    run = work / "template"
    script = ROOT / "scripts" / "reference_reports.py"
    subprocess.run([sys.executable, str(script), "--samples-into", str(run)], check=True, capture_output=True)
    return [json.loads(line) for line in (run / "traces.jsonl").read_text().splitlines()]


def write_run(templates: list[dict[str, Any]], n: int, path: Path, seed: int = 0) -> None:
    rng = random.Random(seed)
    words = sorted(
        {w for t in templates for w in re.findall(r"[A-Za-z]{3,}", t["task"]["data"].get("prompt", ""))}
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            row = json.loads(json.dumps(templates[i % len(templates)]))
            row["task"]["data"]["idx"] = i
            row["task"]["data"]["selection"]["n_expected"] = n
            row["task"]["data"]["source_question"] = (
                f"{row['task']['data']['source_question']}-{i // len(templates)}"
            )
            reasoning = " ".join(rng.choice(words) for _ in range(rng.randint(150, 450)))
            for node in row["nodes"]:
                if node.get("sampled"):
                    node["message"]["content"] = (
                        f"<think>\n{reasoning}\n</think>\n{node['message']['content']}"
                    )
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


# ------------------------------------------------------------------------------ Chromium


def _onto_3_and_4(to_browser: int, from_browser: int) -> None:
    """In the child: the pipe ends on the fds Chromium reads and writes, inheritable (copied
    out of the way first, in case one of them already is fd 3 or 4)."""
    a, b = os.dup(to_browser), os.dup(from_browser)
    os.dup2(a, 3, inheritable=True)
    os.dup2(b, 4, inheritable=True)


class Browser:
    """Headless Chromium driven over the DevTools protocol on a pipe (fd 3 in, fd 4 out)."""

    def __init__(self, profile: Path) -> None:
        to_browser, self._write = os.pipe()
        self._read, from_browser = os.pipe()
        browser = shutil.which("chromium") or shutil.which("google-chrome")
        if browser is None:
            raise SystemExit("needs Chromium")
        self.proc = subprocess.Popen(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--remote-debugging-pipe",
                "--disable-background-networking",
                "--host-resolver-rules=MAP * ~NOTFOUND",
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            close_fds=False,  # the pipes move to fds 3 and 4 in the child: nothing may close them after
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=lambda: _onto_3_and_4(to_browser, from_browser),  # noqa: PLW1509 (no threads here)
        )
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    def send(self, method: str, params: dict[str, Any] | None = None, session: bool = True) -> dict[str, Any]:
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._next()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def _next(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            data = os.read(self._read, 1 << 20)
            if not data:
                raise RuntimeError("Chromium closed the pipe")
            self._buffer += data
        line, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(line)

    def evaluate(self, expression: str) -> Any:
        result = self.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}
        )
        return result.get("result", {}).get("value")

    def console(self) -> list[str]:
        wanted = {"Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded"}
        return [json.dumps(e["params"])[:300] for e in self.events if e.get("method") in wanted]

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        os.close(self._write)
        os.close(self._read)


READY = "['itemsReady', 'itemsLoaded', 'promptsReady'].map((k) => document.documentElement.dataset[k] || '')"
"""The page's own times (ms from its script's start) to the first items shown, to every item
read (filters exact) and to every prompt decoded."""


def open_page(page: Path, profile: Path) -> dict[str, Any]:
    browser = Browser(profile)
    try:
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        browser.session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True}, False)[
            "sessionId"
        ]
        for domain in ("Runtime", "Log", "Page", "Performance"):
            browser.send(f"{domain}.enable")
        start = time.perf_counter()
        browser.send("Page.navigate", {"url": page.as_uri()})
        shown = every = loaded = None
        while loaded is None and time.perf_counter() - start < 300:
            state = browser.evaluate(READY) or ["", "", ""]
            now = time.perf_counter() - start
            if state[0] and shown is None:
                shown = now
            if state[1] and every is None:
                every = now
            if state[2]:
                loaded = now
            time.sleep(0.02)
        in_page = browser.evaluate(READY)
        metrics = {m["name"]: m["value"] for m in browser.send("Performance.getMetrics")["metrics"]}
        filter_ms = browser.evaluate(
            "(() => { const box = document.querySelector('select[name=filter]'); const t = performance.now();"
            " box.value = 'wrong'; box.dispatchEvent(new Event('change')); return performance.now() - t; })()"
        )
        search_ms = browser.evaluate(
            "(() => { const q = document.querySelector('input[name=q]');"
            " const box = document.querySelector('select[name=filter]'); const t = performance.now();"
            " q.value = 'hypertension'; box.value = 'all';"
            " box.dispatchEvent(new Event('change')); return performance.now() - t; })()"
        )
        shown_items = browser.evaluate("document.querySelectorAll('#items article').length")
        return {
            "first_items_s": shown,
            "all_items_s": every,
            "prompts_decoded_s": loaded,
            "in_page_ms": [int(v) if v else None for v in in_page or ["", "", ""]],
            "js_heap_mib": metrics.get("JSHeapUsedSize", 0) / 2**20,
            "filter_ms": filter_ms,
            "search_ms": search_ms,
            "items_on_page": shown_items,
            "console": browser.console(),
        }
    finally:
        browser.close()


def measure_size(templates: list[dict[str, Any]], n: int, work: Path) -> dict[str, Any]:
    """One size: the run written, the report's phases timed, `medhal report` measured, and
    the page opened in the browser."""
    run = work / f"run-{n}"
    write_run(templates, n, run / "traces.jsonl")
    traces_bytes = (run / "traces.jsonl").stat().st_size
    phases = run_measured([sys.executable, "-c", PHASES, str(run / "traces.jsonl")], timeout=1800)
    if phases.returncode != 0:
        raise SystemExit(phases.stderr[-3000:])
    timing = eval(phases.stdout.strip().splitlines()[-1], {})  # a dict the script printed
    report = run_measured([str(BIN / "medhal"), "report", str(run), "--no-plots", "--allow-incomplete"])
    if report.returncode != 0:
        raise SystemExit(report.stderr[-3000:])
    page = run / "report.html"
    opened = open_page(page, work / f"profile-{n}")
    row = {
        "items": n,
        "traces_mib": traces_bytes / 2**20,
        "html_mib": page.stat().st_size / 2**20,
        "html_without_view_mib": timing["plain_html_bytes"] / 2**20,
        "report_wall_s": report.wall_s,
        "report_peak_mib": report.max_rss_mib,
        **timing,
        **opened,
    }
    print(
        f"{n} items: {row['html_mib']:.1f} MiB page, first items after {row['first_items_s']:.2f} s, "
        f"every item after {row['all_items_s']:.2f} s, "
        f"prompts after {row['prompts_decoded_s']:.2f} s, console {len(row['console'])}",
        flush=True,
    )
    return row


SUMMARY = [
    "items",
    "traces MiB",
    "report.html MiB",
    "first items s",
    "all decoded s",
    "JS heap MiB",
    "filter ms",
]
SUMMARY_KEYS = [
    "items",
    "traces_mib",
    "html_mib",
    "first_items_s",
    "prompts_decoded_s",
    "js_heap_mib",
    "filter_ms",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--quick", action="store_true", help="2,000 items only")
    ns = parser.parse_args()
    sizes = SIZES[:1] if ns.quick else SIZES
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        templates = template_traces(work)
        rows = [measure_size(templates, n, work) for n in sizes]
    print(table(SUMMARY, [[r[key] for key in SUMMARY_KEYS] for r in rows]))
    path = write_json(out_dir(ns.out, ns.quick), "report_view", {"sizes": rows})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
