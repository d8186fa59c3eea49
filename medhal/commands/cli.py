"""The `medhal` command: `main` parses the command line (each module of `medhal.commands`
registers its own subcommands, each with a handler taking the parsed namespace); library
errors become one-line messages and exit status 2 here and only here.

Exit status: 0 success; 1 a gate failed (error rate above --max-error-rate, an
incomplete run, runs that differ under --strict-compare); 2 bad input (a file, a line and
a field are named); 3 a missing optional extra.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import NoReturn

from medhal.kit.assets import AssetError
from medhal.kit.datasets import DatasetError
from medhal.kit.options import OptionError
from medhal.kit.untrusted import one_line
from medhal.reports.registry import UnknownEnvironment
from medhal.reports.traces import TraceFileError

BAD_INPUT = (TraceFileError, DatasetError, AssetError, UnknownEnvironment, OptionError, ValueError, OSError)
"""Errors that mean the input is wrong: one line, exit 2."""


class OneLineParser(argparse.ArgumentParser):
    """argparse, with a usage error as one line (exit 2) instead of usage text plus error."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    """The `medhal` parser: each command module registers its own subcommands."""
    from medhal.commands import demo, fetch, repair, report, reproduce, rescore, score, serve

    parser = OneLineParser(
        prog="medhal", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub: argparse._SubParsersAction[argparse.ArgumentParser] = parser.add_subparsers(
        dest="command", required=True, parser_class=OneLineParser
    )
    for command in (report, score, rescore, serve, reproduce, demo, repair, fetch):
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    ns, rest = parser.parse_known_args(argv)
    if rest and not getattr(ns, "takes_taskset_options", False):
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    ns.taskset_args = rest
    try:
        code = ns.handler(ns)
    except BrokenPipeError:  # an OSError, but not bad input: the reader of stdout left
        code = closed_stdout()
    except BAD_INPUT as e:
        message = str(e).split("\n")[0] if isinstance(e, OSError) else str(e)
        print(f"medhal {ns.command}: error: {one_line(message)}", file=sys.stderr)
        code = 2
    except KeyboardInterrupt:
        print(f"medhal {ns.command}: interrupted", file=sys.stderr)
        code = 130
    raise SystemExit(code)


def closed_stdout() -> int:
    """The reader of our output went away (`medhal report RUN | head`): what was to be
    written is done (files are written before anything is printed), so stop quietly, with
    stdout pointed at /dev/null so that Python's final flush raises nothing either."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 0
