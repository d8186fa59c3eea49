"""Running `medhal` and verifiers' `eval` in this process, and checking that a failure is one
clean line.

The project's rule for bad input: exit code 2, one line naming file, line or row, and
field, never a traceback. `medhal_main` runs the real `main` (argument parsing, error
handling, exit code) in this process, which keeps many cases fast. `eval_main` does the same
for verifiers' `eval`: a new process pays verifiers' start-up (several seconds of imports and
model building) for every run, a function call pays it once per test worker."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import subprocess
from collections.abc import Callable, Iterator, Mapping
from types import FrameType


def medhal_main(*args: str, env: Mapping[str, str | None] | None = None) -> subprocess.CompletedProcess:
    """`medhal ARGS` in this process: exit code, stdout and stderr as a subprocess gives them.
    `env`: environment variables to set (None: to unset) for the call only."""
    from medhal.commands.cli import main

    return _call_main("medhal", main, args, env)


def _call_main(
    name: str,
    main: Callable[[list[str]], object],
    args: tuple[str, ...],
    env: Mapping[str, str | None] | None,
) -> subprocess.CompletedProcess:
    """`main(args)` with `env` set and stdout and stderr captured, its exit status as the
    interpreter would give it (a message given as the status is printed, status 1)."""
    out, err = io.StringIO(), io.StringIO()
    with environment(env or {}), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if isinstance(e.code, str):
                print(e.code, file=err)
        else:
            code = 0
    return subprocess.CompletedProcess([name, *args], code, out.getvalue(), err.getvalue())


def eval_main(
    *args: str, env: Mapping[str, str | None] | None = None, timeout: int = 300
) -> subprocess.CompletedProcess:
    """`eval ARGS` in this process (verifiers' own `main`: its argument parsing, logging to
    the run's eval.log, signal handling and output files), returned as a subprocess gives it.
    What `main` changes for the process (signal handlers, loguru sinks, the verifiers logger)
    is restored afterwards. An exception that would end the executable with a traceback
    propagates. `timeout`: seconds before the run is interrupted (TimeoutError), as the
    subprocess timeout of an executable would."""
    from loguru import logger
    from verifiers.v1.cli.eval.main import main

    library = logging.getLogger("verifiers.v1")
    saved_library = (library.handlers[:], library.level, library.propagate)
    saved_signals = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM)}

    def expire(_signum: int, _frame: FrameType | None) -> None:
        raise TimeoutError(f"eval {' '.join(args)} ran past {timeout} s")

    signal.signal(signal.SIGALRM, expire)
    signal.alarm(timeout)
    try:
        return _call_main("eval", main, args, env)
    finally:
        signal.alarm(0)
        logger.remove()  # closes the run's eval.log
        for sig, handler in saved_signals.items():
            signal.signal(sig, handler)
        handlers, level, library.propagate = saved_library
        library.handlers[:] = handlers
        library.setLevel(level)  # setLevel, not the attribute: it clears the loggers' level caches


@contextlib.contextmanager
def environment(changes: Mapping[str, str | None]) -> Iterator[None]:
    """`os.environ` with `changes` applied (None: unset), restored afterwards."""
    saved = {name: os.environ.get(name) for name in changes}
    try:
        _set_environment(changes)
        yield
    finally:
        _set_environment(saved)


def _set_environment(values: Mapping[str, str | None]) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def one_line(message: str, *fragments: str) -> str:
    """`message` is a single line holding every fragment, with no traceback."""
    assert "Traceback" not in message, message
    assert "\n" not in message.strip(), f"more than one line: {message!r}"
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    return message


def clean_exit_2(proc: subprocess.CompletedProcess, *fragments: str) -> str:
    """Exit 2 and one stderr line holding every fragment."""
    assert proc.returncode == 2, f"exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    return one_line(lines[0], *fragments)
