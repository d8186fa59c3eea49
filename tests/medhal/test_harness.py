"""The in-process harness records rollouts exactly as the stock `null` harness does:
same messages, same calls, same sampling on the wire, same errors."""

import shutil

import pytest

from tests.conftest import run_eval
from tests.medfact_bench.fixtures import rows
from tests.scripted_endpoint import Fault
from tests.tables import write_jsonl


def comparable(trace):
    return {
        "idx": trace["task"]["data"]["idx"],
        "messages": [n["message"] for n in trace["nodes"]],
        "sampled": [n.get("sampled", False) for n in trace["nodes"]],
        "stop": trace["stop_condition"],
        "errors": [(e["type"], e["message"], e.get("status_code")) for e in trace["errors"]],
        "calls": [(c.get("error") or {}).get("status_code") for c in trace["calls"]],
        "call_sampling": [c.get("sampling") for c in trace["calls"]],
        "rewards": trace["rewards"],
        "metrics": trace["metrics"],
        "info": trace["info"],
        "sampling": trace["agent"]["sampling"],
    }


@pytest.mark.skipif(shutil.which("uv") is None, reason="the null harness needs uv on PATH")
def test_same_traces_as_null_harness(tmp_path, endpoint):
    path = write_jsonl(tmp_path / "d.jsonl", rows(3))

    def script(body, n):
        text = body["messages"][-1]["content"]
        if "Drug 0" in text:
            return Fault("500")
        return "<think>a</think><score>0</score>" if "Drug 1" in text else "<score>x</score>"

    ep = endpoint(script)
    runs = {}
    for harness in ("null", "medfact-bench"):
        traces = run_eval(
            "medfact-bench",
            ep.base_url,
            tmp_path / harness,
            "--taskset.dataset-path",
            str(path),
            "--harness.id",
            harness,
            "--sampling.temperature",
            "0",
            "--sampling.max-tokens",
            "16",
        )
        assert {t["agent"]["harness"]["id"] for t in traces} == {harness}
        runs[harness] = sorted((comparable(t) for t in traces), key=lambda t: t["idx"])
        for t in traces:
            t["info"].pop("run", None)
    assert runs["null"] == runs["medfact-bench"]
    failed = runs["medfact-bench"][0]
    assert (
        failed["stop"] == "error"
        and failed["errors"][0][0] == "ProviderError"
        and failed["errors"][0][2] == 500
    )
    assert failed["calls"] == [500, 500, 500]  # the SDK's two retries, as with null
    # Sampling settings reached the endpoint on every request.
    assert all(r.get("temperature") == 0 and r.get("max_tokens") == 16 for r in ep.requests)
