"""The shape of the shared library: four layers whose imports point only downwards, argparse,
printing and exit codes only in the commands, no import circle, and reading a report never
imports verifiers or an environment's taskset (reports must be cheap).

    commands  ->  serving, reports, kit
    reports   ->  kit
    serving   ->  (nothing of medhal)
    kit       ->  (nothing of medhal)

Environments import the kit only (their report is declared with the kit's types, and the
report engine reads it); bench/ and scripts/ measure and check the library, never the
commands' internals. Every import counts, at any depth (in functions, under TYPE_CHECKING):
an import run late is still an arrow, and a circle of them is a module that cannot be
understood alone."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

import medhal
from medhal.kit import contract

PACKAGE = Path(medhal.__file__).parent
ROOT = PACKAGE.parent
LAYERS = ("kit", "reports", "serving", "commands")
BELOW = {"kit": set(), "serving": set(), "reports": {"kit"}, "commands": {"kit", "reports", "serving"}}
"""The layers each layer may import, besides itself."""


def module_name(path: Path, package: Path = PACKAGE) -> str:
    return ".".join(("medhal", *path.relative_to(package).with_suffix("").parts)).removesuffix(".__init__")


def imported(path: Path, *, top_level_only: bool = False) -> set[str]:
    """Every module `path` imports (with `from x import y`, both x and x.y): at any depth,
    in functions and under TYPE_CHECKING too, unless `top_level_only`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "medhal" and parts[1] in LAYERS else None


def medhal_modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_every_module_is_in_a_layer_and_every_layer_states_its_rule():
    loose = [module_name(p) for p in medhal_modules() if p.parent == PACKAGE and p.name != "__init__.py"]
    assert loose == [], "modules outside the four layers"
    for layer in LAYERS:
        doc = ast.get_docstring(ast.parse((PACKAGE / layer / "__init__.py").read_text(encoding="utf-8")))
        assert doc and doc.splitlines()[0].rstrip().endswith("."), f"medhal.{layer}: no one-line rule"


def arrow_problems(paths: list[Path], package: Path = PACKAGE) -> list[str]:
    """`module -> import` for every import of a layer that `BELOW` does not list for the
    importing module's layer."""
    problems = []
    for path in paths:
        source = layer_of(module_name(path, package))
        for target in sorted(imported(path)):
            layer = layer_of(target)
            if source is not None and layer is not None and layer != source and layer not in BELOW[source]:
                problems.append(f"{module_name(path, package)} -> {target}")
    return problems


def test_imports_point_only_downwards():
    assert arrow_problems(medhal_modules()) == []


def test_the_arrow_check_finds_an_upward_import(tmp_path):
    fake = tmp_path / "medhal"
    (fake / "reports").mkdir(parents=True)
    (fake / "reports" / "x.py").write_text("def f():\n    from medhal.commands.cli import main\n")
    (fake / "reports" / "y.py").write_text("from medhal.kit import files\n")
    assert arrow_problems([fake / "reports" / "x.py", fake / "reports" / "y.py"], fake) == [
        "medhal.reports.x -> medhal.commands.cli",
        "medhal.reports.x -> medhal.commands.cli.main",
    ]


def test_nothing_in_medhal_imports_the_tests():
    found = {
        module_name(p): sorted(i for i in imported(p) if i.split(".")[0] == "tests") for p in medhal_modules()
    }
    assert {name: tests for name, tests in found.items() if tests} == {}


def command_line_uses(path: Path) -> list[str]:
    """argparse, print, sys.exit and SystemExit in a module, by line."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and "argparse" in imported_names(node):
            found.append(f"{node.lineno}: imports argparse")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            found.append(f"{node.lineno}: print")
        elif (
            isinstance(node, ast.Attribute) and node.attr == "exit" and getattr(node.value, "id", "") == "sys"
        ):
            found.append(f"{node.lineno}: sys.exit")
        elif isinstance(node, ast.Name) and node.id == "SystemExit":
            found.append(f"{node.lineno}: SystemExit")
    return found


def imported_names(node: ast.Import | ast.ImportFrom) -> set[str]:
    if isinstance(node, ast.ImportFrom):
        return {node.module or ""}
    return {a.name for a in node.names}


EXIT_HOOK = "medhal.kit.bad_data_exit"
"""The one exception: the interpreter hook that makes a refused dataset one line when verifiers'
own executables (`validate`, `eval`), not a medhal command, end the program."""


def test_argparse_printing_and_exit_codes_only_in_the_commands():
    outside = [p for p in medhal_modules() if layer_of(module_name(p)) != "commands"]
    found = {module_name(p): command_line_uses(p) for p in outside if module_name(p) != EXIT_HOOK}
    assert {name: uses for name, uses in found.items() if uses} == {}
    assert command_line_uses(PACKAGE / "kit" / "bad_data_exit.py") == [
        f"{line}: print"
        for line, text in enumerate((PACKAGE / "kit" / "bad_data_exit.py").read_text().splitlines(), 1)
        if "print(" in text
    ]  # the hook prints; it neither parses arguments nor raises SystemExit
    # The check sees each kind of use.
    assert len(command_line_uses(PACKAGE / "commands" / "cli.py")) >= 3


ENVIRONMENT_FOLDERS = [env.folder for env in contract.environments(ROOT, tests=True)]


@pytest.mark.parametrize(
    "folder",
    [*ENVIRONMENT_FOLDERS, ROOT / "bench", ROOT / "scripts"],
    ids=lambda p: p.relative_to(ROOT).as_posix(),
)
def test_outside_medhal_only_the_public_layers_are_imported(folder):
    """Environments are built from the kit, their reports declared with its types (the engine
    reads them; no environment imports it); bench/ and scripts/ drive the library, and start
    the commands only as programs."""
    allowed = {"kit"} if folder in ENVIRONMENT_FOLDERS else {"kit", "reports", "serving"}
    problems = []
    for path in sorted(folder.rglob("*.py")):
        for target in sorted(imported(path)):
            if target.split(".")[0] == "medhal" and target != "medhal" and layer_of(target) not in allowed:
                problems.append(f"{path.relative_to(ROOT)} -> {target}")
    assert problems == []


def module_imports() -> dict[str, set[str]]:
    """medhal module -> the medhal modules it imports, at any depth: an import inside a
    function closes a circle as surely as one at the top (it only hides it until it runs)."""
    graph = {module_name(p): imported(p) for p in medhal_modules()}
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
    verifiers module and no taskset; nor does starting the command."""
    code = (
        "import sys\n"
        "from medhal.reports.registry import installed, report_spec\n"
        "import medhal.reports.report_files, medhal.reports.compare, medhal.reports.html\n"
        "import medhal.reports.markdown, medhal.commands.cli\n"
        "medhal.commands.cli.build_parser()\n"
        "for env in installed(): report_spec(env)\n"
        "bad = sorted(m for m in sys.modules if m.startswith('verifiers') or m.endswith('.taskset'))\n"
        "print(bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


MAX_FUNCTION_LINES = 60
"""A function of the shared library fits on a screen, docstring included."""


def long_functions(paths: list[Path]) -> list[str]:
    """`path:function: N lines` for every function over MAX_FUNCTION_LINES."""
    long = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.name}: {lines} lines")
    return long


def test_every_function_fits_on_a_screen():
    assert long_functions(medhal_modules()) == []


def private_or_internal_imports(path: Path) -> list[str]:
    """What a module of bench/ takes that is not a public surface: a module of tests/ or
    scripts/ (they run as programs), a private name of medhal, or tests/ or scripts/ put on
    `sys.path` to reach them."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            root = node.module.split(".")[0]
            if root in ("tests", "scripts"):
                found.append(f"{node.lineno}: from {node.module}")
            elif root == "medhal":
                found += [
                    f"{node.lineno}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_")
                ]
        elif isinstance(node, ast.Import):
            found += [
                f"{node.lineno}: import {a.name}"
                for a in node.names
                if a.name.split(".")[0] in ("tests", "scripts")
            ]
        elif (
            isinstance(node, ast.Call)
            and ast.unparse(node.func) == "sys.path.insert"
            and re.search(r"['\"](scripts|tests)['\"]", ast.unparse(node))
        ):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_bench_uses_only_public_surfaces():
    found = {
        path.name: problems
        for path in sorted((ROOT / "bench").glob("*.py"))
        if (problems := private_or_internal_imports(path))
    }
    assert found == {}


def test_the_public_surface_check_finds_each_kind(tmp_path):
    bad = tmp_path / "b.py"
    bad.write_text(
        "import sys\nfrom tests.scripted_endpoint import Fault\nimport scripts.x\n"
        "from medhal.reports.report_files import _benchmark_of, render\n"
        'sys.path.insert(0, str(ROOT / "scripts"))\n'
    )
    assert [p.split(":")[0] for p in private_or_internal_imports(bad)] == ["2", "3", "4", "5"]


@pytest.mark.parametrize("folder", ["bench", "scripts"])
def test_every_function_of_bench_and_scripts_fits_on_a_screen(folder):
    assert long_functions(sorted((ROOT / folder).glob("*.py"))) == []
