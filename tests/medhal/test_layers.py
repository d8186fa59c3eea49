"""The shape of the shared library: no import circle, and reading a report never imports
verifiers or an environment's taskset (reports must be cheap)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import medhal

PACKAGE = Path(medhal.__file__).parent


def module_imports() -> dict[str, set[str]]:
    """medhal module -> the medhal modules it imports at module level (imports inside
    functions run later, on demand, and cannot form a circle at import time)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(("medhal", *path.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(
            ".__init__"
        )
        deps: set[str] = set()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("medhal"):
                deps.add(node.module)
                deps.update(f"{node.module}.{a.name}" for a in node.names)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name.startswith("medhal"))
        graph[name] = deps
    return {k: {d for d in v if d in graph and d != k} for k, v in graph.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                return [*stack[stack.index(dep) :], dep]
            if dep not in state and (cycle := visit(dep)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_no_import_circle_in_medhal():
    assert find_cycle(module_imports()) is None, find_cycle(module_imports())


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_reading_reports_imports_no_verifiers():
    """Loading every environment's report spec and building reports' files pulls in no
    verifiers module and no taskset."""
    code = (
        "import sys\n"
        "from medhal.reports.registry import installed, report_spec\n"
        "import medhal.reports.report_files, medhal.reports.compare, medhal.reports.html\n"
        "import medhal.reports.markdown, medhal.commands.cli\n"
        "for env in installed(): report_spec(env)\n"
        "bad = sorted(m for m in sys.modules if m.startswith('verifiers') or m.endswith('.taskset'))\n"
        "print(bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
