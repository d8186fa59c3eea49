"""A refused dataset that ends a program medhal does not own, as one line.

verifiers' `validate` and `eval` executables load an environment's tasks and let a
`DatasetError` or `AssetError` propagate to the interpreter, which prints a 30-line traceback
and exits 1. The project's rule for bad input is one line naming file, row and field, and
exit status 2; `medhal`'s own commands do that in `medhal.commands.cli`. For the executables
we do not own, the only hook is the interpreter's: this module installs it. It is the one
place outside `medhal.commands` that prints and chooses an exit status
(tests/medhal/test_layers.py names it).
"""

from __future__ import annotations

import atexit
import os
import sys
from types import TracebackType


def report_bad_data_in_one_line() -> None:
    """Make a refused dataset or asset that ends the program (verifiers' `validate` and
    `eval` load the tasks and let our error propagate) one line on stderr, naming file, row
    and field, and exit status 2, instead of a traceback of 30 lines and status 1; every
    other exception is shown as before.
    Installed once, when a taskset first selects its tasks."""
    from medhal.kit.assets import AssetError
    from medhal.kit.datasets import DatasetError
    from medhal.kit.untrusted import one_line

    previous = sys.excepthook
    if getattr(previous, "medhal_bad_data", False):
        return

    def hook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        if issubclass(kind, (DatasetError, AssetError)):
            print(f"error: {one_line(value)}", file=sys.stderr)
            # Exit status 2 (bad input), as every medhal command gives it; the interpreter
            # would give 1. The exit handlers run first, as on any exit.
            sys.stdout.flush()
            sys.stderr.flush()
            atexit._run_exitfuncs()
            os._exit(2)
        else:
            previous(kind, value, tb)

    hook.medhal_bad_data = True  # type: ignore[attr-defined]
    sys.excepthook = hook
