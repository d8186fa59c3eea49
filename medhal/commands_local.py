"""CLI commands that need the embedded local model (`medhal[local]`): filled in by the
local-model work; kept separate so the core CLI imports nothing heavy."""

from __future__ import annotations

import argparse


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register `serve-local` and `demo` (none yet)."""
