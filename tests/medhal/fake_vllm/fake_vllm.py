"""A stand-in for vLLM's `vllm` command, for testing `medhal serve --backend vllm` and
`medhal reproduce` on machines without a GPU. Not a model: chat completions get a fixed reply.

`vllm --version` prints FAKE_VLLM_VERSION (default 0.11.0). `vllm serve MODEL [flags]` parses
the flags medhal passes (plus the passthrough flags the tests use; any other flag is rejected,
as vLLM rejects unknown flags), writes its argv as JSON to FAKE_VLLM_ARGV_FILE, starts an
"engine" child process in its own process group (as vLLM's engine core is), writes both pids to
FAKE_VLLM_PIDS_FILE, and serves /health, /v1/models and /v1/chat/completions on --host/--port
after FAKE_VLLM_STARTUP_DELAY seconds (default 1). Each chat request body is appended as a JSON
line to FAKE_VLLM_REQUESTS_FILE. SIGTERM or SIGINT shut it down (engine first).

FAKE_VLLM_MODE picks a failure instead:
  model-not-found  log vLLM's unresolvable-model error and exit 1
  die              log an engine start-up failure and exit 1
  port-taken       log the error of a port already in use and exit 1
  unhealthy        keep running without ever answering
FAKE_VLLM_DIE_AFTER=N: after answering N chat requests the server crashes (its engine killed,
exit status 1), as vLLM does when its engine dies mid-run.
FAKE_VLLM_IGNORE_SIGTERM=1 makes the server and its engine ignore SIGTERM (only SIGKILL stops them).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time

DTYPES = ("auto", "half", "float16", "bfloat16", "float", "float32")
DEFAULT_REPLY = "<think>The article reports this result.</think><score>2</score>"
ENGINE = """
import os, signal, time
if os.environ.get("FAKE_VLLM_IGNORE_SIGTERM") == "1":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
while True:
    time.sleep(1)
"""


def log(message: str, stream=sys.stdout) -> None:
    print(f"(APIServer pid={os.getpid()}) {message}", file=stream, flush=True)


def parse_serve(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="vllm serve")
    parser.add_argument("model")
    parser.add_argument("--served-model-name", nargs="+")
    parser.add_argument("--host", default=None)
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--max-model-len", type=int)
    parser.add_argument("--gpu-memory-utilization", type=float, default=0.9)
    parser.add_argument("--tensor-parallel-size", type=int, default=1)
    parser.add_argument("--data-parallel-size", type=int, default=1)
    parser.add_argument("--dtype", choices=DTYPES, default="auto")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--generation-config", default="auto")
    parser.add_argument("--enforce-eager", action="store_true")
    parser.add_argument("--max-num-seqs", type=int)
    return parser.parse_args(argv)


def fail(lines: list[str], engine: subprocess.Popen) -> int:
    for line in lines:
        log(line, sys.stderr)
    engine.kill()
    engine.wait()
    return 1


def start_engine() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", ENGINE], stdin=subprocess.DEVNULL)


async def serve(ns: argparse.Namespace, names: list[str], engine: subprocess.Popen) -> int:
    from aiohttp import web

    from tests.scripted_endpoint import completion

    reply = os.environ.get("FAKE_VLLM_REPLY", DEFAULT_REPLY)
    requests_file = os.environ.get("FAKE_VLLM_REQUESTS_FILE")
    die_after = int(os.environ.get("FAKE_VLLM_DIE_AFTER", "0"))
    answered = []

    def crash() -> None:
        log("ERROR EngineCore encountered a fatal error.", sys.stderr)
        engine.kill()
        os._exit(1)

    async def health(request: web.Request) -> web.Response:
        return web.Response(status=200)

    async def models(request: web.Request) -> web.Response:
        return web.json_response(
            {"object": "list", "data": [{"id": n, "object": "model", "owned_by": "vllm"} for n in names]}
        )

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        if requests_file:
            with open(requests_file, "a") as f:
                f.write(json.dumps(body) + "\n")
        if body.get("model") not in names:
            message = f"The model `{body.get('model')}` does not exist."
            return web.json_response(
                {"error": {"message": message, "type": "NotFoundError", "code": 404}}, status=404
            )
        answered.append(1)
        if die_after and len(answered) >= die_after:
            asyncio.get_running_loop().call_later(0.2, crash)
        return web.json_response(completion(reply, body["model"]))

    app = web.Application()
    app.router.add_get("/health", health)
    app.router.add_get("/v1/models", models)
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, ns.host or "0.0.0.0", ns.port).start()
    log(f"INFO Starting vLLM API server on http://{ns.host}:{ns.port}")
    log("INFO Application startup complete.")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    if os.environ.get("FAKE_VLLM_IGNORE_SIGTERM") == "1":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        loop.add_signal_handler(signal.SIGINT, stop.set)
    else:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    log("INFO Shutting down the API server.")
    engine.terminate()
    engine.wait()
    await runner.cleanup()
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] in (["--version"], ["-v"]):
        print("INFO fake vllm: reading the version", file=sys.stderr)  # vLLM logs before it answers
        print(os.environ.get("FAKE_VLLM_VERSION", "0.11.0"))
        return 0
    if argv[:1] != ["serve"]:
        print("usage: vllm serve MODEL [options] | vllm --version", file=sys.stderr)
        return 2
    argv_file = os.environ.get("FAKE_VLLM_ARGV_FILE")
    if argv_file:
        with open(argv_file, "w") as f:
            json.dump(argv, f)
    ns = parse_serve(argv[1:])
    if not 0 < ns.gpu_memory_utilization <= 1:
        log(
            f"ValueError: gpu_memory_utilization must be in (0, 1], got {ns.gpu_memory_utilization}",
            sys.stderr,
        )
        return 1
    names = ns.served_model_name or [ns.model]
    version = os.environ.get("FAKE_VLLM_VERSION", "0.11.0")
    log(f"INFO vLLM API server version {version}")
    log(f"INFO non-default args: model={ns.model!r}, port={ns.port}, seed={ns.seed}")
    engine = start_engine()
    pids_file = os.environ.get("FAKE_VLLM_PIDS_FILE")
    if pids_file:
        # Written whole, then renamed: the tests wait for the file to exist and may stop this
        # process at once (a SIGTERM between open and dump left an empty file under load).
        with open(pids_file + ".tmp", "w") as f:
            json.dump({"server": os.getpid(), "engine": engine.pid}, f)
        os.replace(pids_file + ".tmp", pids_file)
    mode = os.environ.get("FAKE_VLLM_MODE", "")
    if mode == "model-not-found":
        return fail(
            [
                "Traceback (most recent call last):",
                '  File "vllm/engine/arg_utils.py", line 1, in create_model_config',
                "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig",
                f"  Value error, Invalid repository ID or local directory specified: '{ns.model}'.",
                "(fake vllm: no Hub repository and no local folder with config.json goes by that name)",
            ],
            engine,
        )
    if mode == "die":
        return fail(
            [
                "INFO Loading weights took 0.42 seconds",
                "ERROR EngineCore failed to start.",
                "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s)",
            ],
            engine,
        )
    if mode == "port-taken":
        return fail(
            [
                "Traceback (most recent call last):",
                (
                    f"OSError: [Errno 98] error while attempting to bind on address "
                    f"('{ns.host}', {ns.port}): address already in use"
                ),
            ],
            engine,
        )
    if os.environ.get("FAKE_VLLM_IGNORE_SIGTERM") == "1":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if mode == "unhealthy":
        log("INFO Loading weights (this fake never finishes)")
        while True:
            time.sleep(1)
    time.sleep(float(os.environ.get("FAKE_VLLM_STARTUP_DELAY", "1")))
    return asyncio.run(serve(ns, names, engine))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
