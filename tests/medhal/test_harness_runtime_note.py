"""No foreign warning on a normal run: verifiers 0.2.1 cautions that every harness but its
`null` "is running in the subprocess runtime on the local system ... use subprocess only for
debugging", which is about harnesses that give the model a shell. medhal's in-process harness
runs no program; its run says so in one true line instead (medhal/kit/harness.py,
`SubprocessCaution`), and the caution about any other harness is left as verifiers logs it."""

from __future__ import annotations

import logging

from tests.conftest import run_eval
from tests.medfact_bench.fixtures import rows
from tests.tables import write_jsonl

CAUTION = "is running in the subprocess runtime on the local system"
NOTE = (
    "Harness 'medfact-bench' is medhal's in-process single-turn harness: the eval process sends each "
    "rollout's one chat request itself; no program and no model-directed code runs on this system."
)


def test_an_eval_run_logs_what_the_harness_is_and_no_subprocess_caution(tmp_path, endpoint):
    path = write_jsonl(tmp_path / "d.jsonl", rows(2))
    ep = endpoint(lambda body, n: "<score>0</score>")
    traces = run_eval("medfact-bench", ep.base_url, tmp_path / "run", "--taskset.dataset-path", str(path))
    assert len(traces) == 2 and {t["agent"]["harness"]["id"] for t in traces} == {"medfact-bench"}
    log = (tmp_path / "run" / "eval.log").read_text(encoding="utf-8")
    assert CAUTION not in log and "use subprocess only for debugging" not in log
    noted = [line for line in log.splitlines() if NOTE in line]
    assert len(noted) == 1 and " INFO " in noted[0], log[:2000]


def test_the_caution_about_any_other_harness_passes_unchanged(caplog):
    """The record verifiers logs for a harness that is not ours keeps its level and words."""
    from medhal.kit.harness import declare_in_process

    declare_in_process("medfact-bench")
    env_logger = logging.getLogger("verifiers.v1.env")
    template = (
        "Harness %r is running in the subprocess runtime on the local system. Local files and settings may "
        "affect the evaluation; use subprocess only for debugging. Use --harness.runtime.type docker or "
        "prime for an isolated run."
    )
    with caplog.at_level(logging.INFO, logger="verifiers.v1.env"):
        env_logger.warning(template, "default")
        env_logger.warning(template, "medfact-bench")
        env_logger.warning("something else about %r", "medfact-bench")
    got = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "verifiers.v1.env"]
    assert got == [
        ("WARNING", template % "default"),
        ("INFO", NOTE),
        ("WARNING", "something else about 'medfact-bench'"),
    ]
