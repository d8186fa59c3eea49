"""A pytest plugin for `make mutants` only (loaded by [tool.mutmut] `pytest_add_cli_args`; a plain
`pytest` run never loads it, and it does nothing without mutmut).

mutmut runs each mutant only against the tests it saw call the mutated function in one traced
run of the suite ("stats"). Two things hide a call from that tracing, so a mutant would be run
against too few tests and "survive" tests that in fact catch it:

- A fixture shared by a module or a session (a report computed once, then checked by ten tests)
  calls the code during the first of its tests only. Here what such a fixture calls is credited
  to every test that uses the fixture.
- Code that runs while a module is imported (a report spec built at import: `Columns.linear`,
  `paper_score`; a label regex built by `label_pattern`) runs once, before any test, and mutmut
  forks each mutant from a process that has imported everything already, so the mutant is never
  switched on. Here such functions are recorded while tracing (in `IMPORT_TIME_FILE`) and
  credited to every test; and when one of them is the mutant under test, the project's modules
  and the test modules are dropped from `sys.modules` before collection, so they are imported
  again with the mutant switched on.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from medhal.kit.contract import environments

IMPORT_TIME_FILE = Path("mutmut-import-time.json")
"""Written in mutmut's working copy (the current directory while it runs tests)."""
PACKAGES = ("medhal", *(env.package for env in environments(Path(__file__).resolve().parents[1])))
"""medhal and the collection's environments (`medhal.kit.contract`)."""
KEEP = {"tests", "tests.conftest", __name__}
"""Modules that stay loaded: pytest holds the conftest and this plugin as registered plugins."""

_import_time: set[str] = set()
_fixture_hits: defaultdict[str, set[str]] = defaultdict(set)
_fixtures_of: dict[str, tuple[str, ...]] = {}


def _mutant_under_test() -> str | None:
    try:
        from mutmut.mutation.trampoline import get_mutant_under_test
    except ImportError:
        return None
    return get_mutant_under_test()


def _state():
    from mutmut.state import state

    return state()


def _importing() -> bool:
    """Whether the caller runs inside an `import` (module-level code): an import machinery frame
    comes before (above) the first frame of pytest itself."""
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith("<frozen importlib"):
            return True
        if "_pytest" in filename or "pluggy" in filename:
            return False
        frame = frame.f_back
    return False


def pytest_configure(config: pytest.Config) -> None:
    mutant = _mutant_under_test()
    if mutant == "stats":
        from mutmut.mutation import trampoline

        record = trampoline.record_trampoline_hit

        def record_hit(name: str, caller: str | None = None) -> None:
            if _importing():
                _import_time.add(name)
            record(name, caller=caller)

        trampoline.record_trampoline_hit = record_hit
    elif mutant and "__mutmut_" in mutant and IMPORT_TIME_FILE.is_file():
        function = mutant.partition("__mutmut_")[0]
        if function in json.loads(IMPORT_TIME_FILE.read_text(encoding="utf-8")):
            for name in [n for n in sys.modules if n.split(".")[0] in (*PACKAGES, "tests")]:
                if name not in KEEP:
                    del sys.modules[name]


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef, request):
    """While tracing: what a module- or session-scoped fixture calls, by fixture name."""
    if fixturedef.scope == "function" or _mutant_under_test() != "stats":
        yield
        return
    state = _state()
    outer, state._stats = state._stats, set()
    try:
        yield
    finally:
        hits = state._stats
        _fixture_hits[fixturedef.argname] |= hits
        state._stats = outer | hits


def pytest_runtest_setup(item: pytest.Item) -> None:
    if _mutant_under_test() == "stats":
        _fixtures_of[item.nodeid] = tuple(getattr(item, "fixturenames", ()))


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Credit shared-fixture calls to every test of the fixture, import-time calls to every
    test, and record the import-time functions for the mutant runs."""
    if _mutant_under_test() != "stats":
        return
    tests_of = _state().tests_by_mangled_function_name
    for test, fixtures in _fixtures_of.items():
        for fixture in fixtures:
            for function in _fixture_hits.get(fixture, ()):
                tests_of[function].add(test)
    for function in _import_time:
        tests_of[function] |= set(_fixtures_of)
    IMPORT_TIME_FILE.write_text(json.dumps(sorted(_import_time), indent=1), encoding="utf-8")
