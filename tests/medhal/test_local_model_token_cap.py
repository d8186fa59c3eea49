"""The embedded model's server honours both token caps (`medhal.serving.llama_server`): llama-cpp-python
reads only `max_tokens`, while verifiers' v0 client (`vf-eval`) sends `max_completion_tokens`.
The rule is checked on request bodies, then on the real SmolLM2 server: requests with either
cap or both, streamed and not, and a `vf-eval` and an `eval` run whose replies must stay
within the cap. Needs the `local` extra (the default dev install)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from medhal.serving import local_model
from medhal.serving.llama_server import BadTokenCap, cap_request
from medhal.serving.local_model import LocalModel

LONG = [{"role": "user", "content": "Write a very long story about a dragon and a knight."}]
"""A prompt the model answers at length: every capped reply below ends at its cap."""


@pytest.mark.parametrize(
    "body, capped",
    [
        ({"max_completion_tokens": 8}, {"max_tokens": 8}),
        ({"max_tokens": 8}, {"max_tokens": 8}),
        ({"max_tokens": 12, "max_completion_tokens": 5}, {"max_tokens": 5}),
        ({"max_tokens": 5, "max_completion_tokens": 12}, {"max_tokens": 5}),
        ({"max_tokens": None, "max_completion_tokens": 7}, {"max_tokens": 7}),
        ({"max_tokens": 0, "max_completion_tokens": 7}, {"max_tokens": 7}),  # llama.cpp's 0: no cap
        ({"max_tokens": 6, "max_completion_tokens": None}, {"max_tokens": 6}),
        ({}, {}),
        # max_tokens as the server reads it (pydantic, lax): "5" and 5.0 are 5 (issue 33 item 12).
        ({"max_tokens": "5", "max_completion_tokens": 12}, {"max_tokens": 5}),
        ({"max_tokens": 5.0, "max_completion_tokens": 12}, {"max_tokens": 5}),
        ({"max_tokens": " 4 ", "max_completion_tokens": 12}, {"max_tokens": 4}),
        ({"max_tokens": "20", "max_completion_tokens": 12}, {"max_tokens": 12}),
        # One the server refuses stays as it is, for the server to answer 400.
        ({"max_tokens": "five", "max_completion_tokens": 12}, {"max_tokens": "five"}),
        ({"max_tokens": 5.5, "max_completion_tokens": 12}, {"max_tokens": 5.5}),
    ],
)
def test_the_cap_is_the_smaller_of_those_given(body, capped):
    request = {"model": "m", "messages": LONG, **body}
    assert json.loads(cap_request(json.dumps(request).encode())) == {"model": "m", "messages": LONG, **capped}


def test_other_bodies_pass_through_unchanged():
    for body in (b"not json", b"[1, 2]", b'{"max_tokens": 3}', "é".encode("latin-1")):
        assert cap_request(body) is body


@pytest.mark.parametrize("value", ["8", 0, -1, 2.5, True, [8]])
def test_a_bad_max_completion_tokens_is_refused(value):
    with pytest.raises(BadTokenCap, match=r"max_completion_tokens must be null or an integer >= 1, got "):
        cap_request(json.dumps({"max_completion_tokens": value}).encode())


def llama_app(*extra_paths: str):
    """llama-cpp-python's own routes (no model loaded), plus text-completion aliases at
    `extra_paths` as a later version might add them; each echoes the request's max_tokens as
    the app read it."""
    from fastapi import FastAPI
    from llama_cpp.server.app import router
    from llama_cpp.server.types import CreateCompletionRequest

    app = FastAPI()
    app.include_router(router)

    async def echo(body) -> dict:  # type: ignore[no-untyped-def]
        return {"max_tokens": body.max_tokens}

    echo.__annotations__["body"] = CreateCompletionRequest  # resolved here, not from a string

    for path in extra_paths:
        app.post(path)(echo)
    return app


def test_every_completion_route_of_the_app_is_capped():
    from medhal.serving.llama_server import TokenCap

    pytest.importorskip("llama_cpp.server.app")
    capped = TokenCap(llama_app("/v1/engines/other-model/completions")).paths
    assert capped == {
        "/v1/completions",
        "/v1/engines/copilot-codex/completions",  # llama-cpp-python's own alias
        "/v1/chat/completions",
        "/v1/engines/other-model/completions",
    }


def test_a_request_to_an_alias_route_is_capped():
    from fastapi.testclient import TestClient

    from medhal.serving.llama_server import TokenCap

    pytest.importorskip("llama_cpp.server.app")
    client = TestClient(TokenCap(llama_app("/v1/engines/other-model/completions")))
    for path in ("/v1/engines/other-model/completions",):
        reply = client.post(path, json={"prompt": "x", "max_tokens": "9", "max_completion_tokens": 3})
        assert reply.json() == {"max_tokens": 3}, path
        reply = client.post(path, json={"prompt": "x", "max_completion_tokens": 0})
        assert reply.status_code == 400, path


@pytest.fixture(scope="module")
def server():
    try:
        local_model.check_installed()
    except local_model.LocalModelNotInstalled as e:
        pytest.skip(str(e))  # a failure under CI (tests/conftest.py)
    with LocalModel() as lm:
        yield lm


def chat(server: LocalModel, **fields) -> httpx.Response:
    body = {"model": server.model, "messages": LONG, "temperature": 0, **fields}
    return httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=300)


@pytest.mark.parametrize(
    "fields, tokens",
    [
        ({"max_completion_tokens": 8}, 8),
        ({"max_tokens": 8}, 8),
        ({"max_tokens": 12, "max_completion_tokens": 5}, 5),
        ({"max_tokens": 5, "max_completion_tokens": 12}, 5),
    ],
)
def test_the_real_server_stops_at_the_cap(server, fields, tokens):
    reply = chat(server, **fields).json()
    assert reply["usage"]["completion_tokens"] == tokens, reply
    assert reply["choices"][0]["finish_reason"] == "length"


def test_streamed_and_text_completions_are_capped_too(server):
    body = {
        "model": server.model,
        "messages": LONG,
        "temperature": 0,
        "max_completion_tokens": 6,
        "stream": True,
    }
    with httpx.stream("POST", f"{server.base_url}/chat/completions", json=body, timeout=300) as stream:
        chunks = [json.loads(line[5:]) for line in stream.iter_lines() if line.startswith("data: {")]
    assert sum(1 for c in chunks if c["choices"][0]["delta"].get("content")) <= 6
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"
    text = httpx.post(
        f"{server.base_url}/completions",
        json={
            "model": server.model,
            "prompt": "Once upon a time",
            "temperature": 0,
            "max_completion_tokens": 7,
        },
        timeout=300,
    ).json()
    assert text["usage"]["completion_tokens"] == 7 and text["choices"][0]["finish_reason"] == "length"
    # llama-cpp-python's alias route, and a max_tokens the server reads as 5 beside a larger cap.
    alias = httpx.post(
        f"{server.base_url}/engines/copilot-codex/completions",
        json={"prompt": "Once upon a time", "temperature": 0, "max_completion_tokens": 7},
        timeout=300,
    ).json()
    assert alias["usage"]["completion_tokens"] == 7, alias
    assert chat(server, max_tokens="5", max_completion_tokens=12).json()["usage"]["completion_tokens"] == 5


def test_a_bad_cap_is_a_400_naming_the_field(server):
    response = chat(server, max_completion_tokens="eight")
    assert response.status_code == 400
    assert response.json()["error"] == {
        "message": "max_completion_tokens must be null or an integer >= 1, got 'eight'",
        "type": "invalid_request_error",
        "param": "max_completion_tokens",
    }
    assert chat(server, max_tokens=3).status_code == 200  # the server serves on


RUNS = """
import json, sys
from verifiers.v1.cli.eval.main import main as eval_main  # the `eval` script
from verifiers.scripts.eval import main as vf_eval_main  # the `vf-eval` script

eval_argv, vf_eval_argv = json.loads(sys.argv[1])
eval_main(eval_argv)
vf_eval_main(vf_eval_argv)
"""
CAP = 8


@pytest.mark.slow(reason="the real local model under both eval executables")
def test_eval_and_vf_eval_replies_stay_within_the_cap(server, tmp_path):
    """`eval` sends `max_tokens`, `vf-eval` `max_completion_tokens`: both replies end at the cap
    (one Python process runs both scripts' entry points, to import verifiers once)."""
    from medfact_bench.benchmark import DEMO_OPTIONS

    rows = str(DEMO_OPTIONS["dataset_path"])
    eval_argv = [
        "medfact-bench", "--client.base-url", server.base_url, "-m", server.model,
        "--no-push", "--no-rich", "-n", "2", "--sampling.max-tokens", str(CAP),
        "--sampling.temperature", "0", "-o", str(tmp_path / "eval"), "--taskset.dataset-path", rows,
    ]  # fmt: skip
    vf_eval_argv = [
        "medfact-bench", "-m", server.model, "-b", server.base_url, "-k", "LOCAL_MODEL_KEY",
        "-n", "2", "-r", "1", "-t", str(CAP), "-T", "0", "-a", json.dumps({"dataset_path": rows}),
        "-s", "-d", "--disable-env-server", "-o", str(tmp_path / "vf-eval"),
    ]  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-c", RUNS, json.dumps([eval_argv, vf_eval_argv])],
        capture_output=True,
        text=True,
        env={**os.environ, "LOCAL_MODEL_KEY": "local"},
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]

    traces = [json.loads(line) for line in (tmp_path / "eval" / "traces.jsonl").read_text().splitlines()]
    calls = [call for trace in traces for call in trace["calls"]]
    assert len(traces) == 2 and len(calls) == 2 and not any(t["errors"] for t in traces)
    assert all(0 < call["usage"]["completion_tokens"] <= CAP for call in calls), calls

    (results,) = Path(tmp_path / "vf-eval").glob("evals/*/*/results.jsonl")
    rows_out = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(rows_out) == 2 and not any(r["error"] for r in rows_out)
    assert all(0 < r["token_usage"]["output_tokens"] <= CAP for r in rows_out), [
        r["token_usage"] for r in rows_out
    ]
