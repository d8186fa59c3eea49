"""What an environment of the collection provides, declared once, and where environments are found.

medhal is a collection: adding a benchmark must be one folder, and every check, script and
listing must find it there rather than in a list written by hand. This module is that
contract as data: the files of an environment's folder, the modules of its import package and
what each holds, the names its declaration block (`benchmark.py`) defines, what its package
exports, its one `medhal.environments` entry point, its README's sections, its labelled reply
corpus, demo rows, paper settings and published figures. `tests/test_contract.py` holds every
environment it finds to all of it; the bench scripts, prime packaging, the release check and
the derived listings (pyproject, Makefile, README) read the environments from here.

Two places hold environments: `environments/<package>/` (the collection, each published on
its own) and `tests/environments/<package>/` (test environments: made-up benchmarks that
prove the contract is all a new environment needs; never published). A test environment is
itself test material, so its labelled corpus and its paper settings sit in its own folder.

Standard library only, and nothing here imports an environment: the checks read files.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ENTRY_POINT_GROUP = "medhal.environments"
"""Each environment registers its report spec here under its id; medhal finds environments
only through this group (a benchmark id in a trace is looked up, never imported)."""
ENTRY_POINT_TARGET = "{package}.report:REPORT"
"""The one entry point's value: the light report spec (importing it imports no verifiers)."""

ENVIRONMENTS_DIR = "environments"
"""The collection, under the repository root: one folder per published environment."""
TEST_ENVIRONMENTS_DIR = "tests/environments"
"""Test environments, under the repository root: made-up benchmarks, never published."""
SETTINGS_DIR = "configs/eval"
"""Paper settings (`uv run eval @ FILE`), under the repository root, or in a test
environment's own folder."""

FOLDER_FILES = ("pyproject.toml", "README.md", "CHANGELOG.md", "LICENSE")
"""Files at the top of an environment's folder (LICENSE: a copy of the repository's)."""
MODULES = {
    "__init__": "exports (`EXPORTS`), resolved on first use, and the v0 `load_environment`",
    "benchmark": "the declaration block (`DECLARATIONS`): light, imports no verifiers",
    "rows": "checking the dataset's rows (one line naming file, row and field) and the items "
    "an evaluation fingerprint is made of (`evaluation_items`)",
    "prompts": "the prompt, from pinned assets or the data",
    "replies": "reading a reply under every convention (`READERS`)",
    "scoring": "`score(item, reply)`, pure, and the replies `validate` checks (`gold_reply`, `wrong_reply`)",
    "taskset": "the verifiers Taskset, its config (the options) and its task data",
    "report": "the report spec (`REPORT`), the entry point's target",
}
"""The modules of an environment's import package, each with what it holds."""
PACKAGE_FILES = ("published.csv", "eval_fingerprints.json", "demo/README.md")
"""Data files of the import package: the papers' figures, the evaluation sets' item
fingerprints (`scripts/eval_fingerprints.py`) and the demo folder's account of its rows."""
DECLARATIONS = {
    "ENV_ID": "the environment id, the entry point's name",
    "DATASET": "the pinned dataset (id and revision), or None for data that ships as files",
    "FETCH": "what `medhal fetch` downloads per setting",
    "FULL_SIZE": "items in a complete evaluation run",
    "EVALUATION_SETS": "the evaluation sets, each with the stem of its file in a data directory",
    "EVAL_FINGERPRINTS": "the path of eval_fingerprints.json",
    "DEMO_OPTIONS": "taskset options that load the demo rows (written by us, in the package)",
    "PUBLISHED": "the published figures (`published.csv`)",
}
"""Names `benchmark.py` defines, each with what it is."""
SCORING = ("score", "gold_reply", "wrong_reply")
"""What `scoring.py` defines: the pure grading every tool reaches an environment through."""
EXPORTS = ("REPORT", "DEMO_OPTIONS", "SingleTurnHarness", "load_environment")
"""Names in the package's `__all__`, besides its Taskset, Task, TaskData and config classes."""
README_SECTIONS = (
    "Overview",
    "Layout",
    "Data",
    "Protocol",
    "Options",
    "How replies are read",
    "Scoring and reports",
    "Differences from the paper and from the authors' code",
    "Reproducing published numbers",
    "Validation",
    "Changelog and versions",
    "Citation",
)
"""The `## ` sections of every environment README, in this order."""
READINGS_TABLE = ("<!-- readings:begin -->", "<!-- readings:end -->")
"""The README's table of example replies and their reading under every convention."""
CORPUS = "replies.jsonl"
"""The labelled reply corpus (one JSON object a line: `id`, `reply`, `expected` per
convention, `shape`, `reason`), in the environment's test folder."""
CORPUS_FIELDS = ("id", "reply", "expected", "shape", "reason")

BESIDE_THE_FOLDER = {
    "configs/eval/<package>*.toml": "its paper settings, a file each (`make configs` renders configs/prime/)",
    "tests/<package>/": f"its own tests and its labelled reply corpus `{CORPUS}`",
}
"""What an environment of the collection keeps outside its folder (a test environment keeps
both inside its own: `configs/eval/` and `replies.jsonl`)."""
LISTINGS = {
    "pyproject.toml": "[tool.uv.sources] and the dev group install it (a workspace member is "
    "installed only as a dependency); [tool.mutmut] mutates its replies, scoring and report modules",
    "compat/*/pyproject.toml": "each other verifiers line's project (0.3.0, 0.3.1, 0.4.0, prime-rl's "
    "pin) installs it from its folder",
    "README.md": "the table of environments",
    "CITATION.cff": "its paper, under references",
    ".github/workflows/release.yml": "its release tag (GitHub reads tag filters before any checkout)",
}
"""Files that name every environment of the collection and cannot derive the list (TOML,
Markdown, YAML): each is checked against the folders by a test, so an environment left out
fails, naming the file (tests/test_contract.py, tests/test_workflows.py)."""
RECORDED = {
    "uv.lock": "`uv lock`",
    "compat/*/uv.lock": "`uv lock --project compat/<line>` for each line",
    "tests/scoring_fingerprints.json": "`make fingerprints`",
    "tests/cross_line.json": "`uv run python -m tests.test_cross_line --update`",
    "<package>/eval_fingerprints.json": "`uv run python scripts/eval_fingerprints.py DATA_DIR`",
}
"""Files written by a command once the environment is there (each test that reads one says
which command when it is stale)."""


class ContractError(ValueError):
    """A folder that cannot be read as an environment (one line naming the file)."""


@dataclass(frozen=True)
class Environment:
    """One environment folder, as its pyproject.toml states it."""

    folder: Path
    name: str
    """The distribution name (`med-halt`), as published."""
    version: str
    package: str
    """The import package (`med_halt`), the folder holding the modules."""
    env_id: str
    """The id it registers (`eval <id>`, trace files, `medhal report`)."""
    entry_point: str
    project: dict[str, Any]
    test_folder: Path
    """Its tests: `tests/<package>/` for the collection, the folder itself for a test environment."""
    settings_dir: Path
    """Where its paper settings are: the repository's configs/eval, or a test environment's own."""
    published: bool
    """In the collection (published on its own), or a test environment."""

    @property
    def package_dir(self) -> Path:
        return self.folder / self.package

    @property
    def corpus(self) -> Path:
        return self.test_folder / CORPUS

    def settings(self) -> list[Path]:
        """Its paper settings: the configs/eval files whose `[taskset] id` is this environment."""
        return [path for path in sorted(self.settings_dir.glob("*.toml")) if setting_id(path) == self.env_id]


def setting_id(path: Path) -> str | None:
    """The environment id a paper setting names (`[taskset] id`), None if it names none."""
    try:
        value = tomllib.loads(path.read_text(encoding="utf-8")).get("taskset", {}).get("id")
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ContractError(f"{path}: not a readable TOML file ({e})") from e
    return value if isinstance(value, str) else None


def read_environment(folder: Path, root: Path) -> Environment:
    """The environment in `folder` (under `root`, the repository), from its pyproject.toml."""
    pyproject = folder / "pyproject.toml"
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        name, version = project["name"], project["version"]
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError) as e:
        raise ContractError(f"{pyproject}: cannot read [project] name and version ({e})") from e
    entries = project.get("entry-points", {}).get(ENTRY_POINT_GROUP, {})
    if not isinstance(entries, dict) or len(entries) != 1:
        raise ContractError(
            f'{pyproject}: needs exactly one [project.entry-points."{ENTRY_POINT_GROUP}"] entry'
        )
    ((env_id, target),) = entries.items()
    published = folder.parent == root / ENVIRONMENTS_DIR
    return Environment(
        folder=folder,
        name=name,
        version=version,
        package=str(target).split(".", 1)[0],
        env_id=env_id,
        entry_point=str(target),
        project=project,
        test_folder=root / "tests" / folder.name if published else folder,
        settings_dir=root / SETTINGS_DIR if published else folder / SETTINGS_DIR,
        published=published,
    )


def environments(root: Path, *, tests: bool = False) -> list[Environment]:
    """The collection's environments (`environments/*/`), by folder name; with `tests`, the
    test environments (`tests/environments/*/`) after them."""
    dirs = [ENVIRONMENTS_DIR, *([TEST_ENVIRONMENTS_DIR] if tests else [])]
    return [
        read_environment(pyproject.parent, root)
        for directory in dirs
        for pyproject in sorted((root / directory).glob("*/pyproject.toml"))
    ]


def settings_dirs(root: Path) -> list[Path]:
    """Every configs/eval folder: the repository's, then each test environment's that has one."""
    own = [env.settings_dir for env in environments(root, tests=True) if not env.published]
    return [root / SETTINGS_DIR, *(d for d in own if d.is_dir())]


# ------------------------------------------------------------------------------ checks


def problems(env: Environment, root: Path) -> list[str]:
    """What `env`'s files get wrong against the contract, read without importing anything."""
    found = [f"{env.folder / name}: missing" for name in FOLDER_FILES if not (env.folder / name).is_file()]
    licence = env.folder / "LICENSE"
    if licence.is_file() and licence.read_bytes() != (root / "LICENSE").read_bytes():
        found.append(f"{licence}: must be a copy of the repository's LICENSE")
    if env.entry_point != ENTRY_POINT_TARGET.format(package=env.package):
        found.append(
            f"{env.folder / 'pyproject.toml'}: the entry point is {env.entry_point!r}, "
            f"not {ENTRY_POINT_TARGET.format(package=env.package)!r}"
        )
    found += [
        f"{env.package_dir / f'{module}.py'}: missing"
        for module in MODULES
        if not (env.package_dir / f"{module}.py").is_file()
    ]
    found += [
        f"{env.package_dir / name}: missing"
        for name in PACKAGE_FILES
        if not (env.package_dir / name).is_file()
    ]
    found += _defined_problems(env.package_dir / "benchmark.py", DECLARATIONS)
    found += _defined_problems(env.package_dir / "scoring.py", SCORING)
    found += _export_problems(env.package_dir / "__init__.py")
    found += readme_problems(env.folder / "README.md")
    if not env.corpus.is_file():
        found.append(f"{env.corpus}: missing (the labelled reply corpus)")
    found += naming_problems(env)
    return found


def naming_problems(env: Environment) -> list[str]:
    """One name throughout: the folder is the import package, the distribution name is the
    package with `-` for `_` (`make` derives package names from folder names), and every paper
    setting's file starts with the package (`medhal reproduce` finds them by that prefix)."""
    found = []
    if not env.folder.name == env.package == env.name.replace("-", "_"):
        found.append(
            f"{env.folder}: folder {env.folder.name!r}, import package {env.package!r} and distribution "
            f"{env.name!r} must be one name (the distribution with '-' for '_')"
        )
    settings = env.settings()
    if not settings:
        found.append(f"{env.settings_dir}: no paper setting names {env.env_id!r} ([taskset] id)")
    found += [
        f"{path}: a paper setting's file name starts with {env.package!r}"
        for path in settings
        if not path.name.startswith(env.package)
    ]
    return found


def defined_names(path: Path) -> set[str]:
    """Names a module binds at its top level (assignments, functions, classes, imports)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _defined_problems(path: Path, required: Iterable[str]) -> list[str]:
    if not path.is_file():
        return []
    missing = [name for name in required if name not in defined_names(path)]
    return [f"{path}: does not define {', '.join(missing)}"] if missing else []


def exported_names(path: Path) -> list[str]:
    """The literal `__all__` of a module ([] without one)."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            value = ast.literal_eval(node.value)
            return [str(v) for v in value]
    return []


def _export_problems(path: Path) -> list[str]:
    if not path.is_file():
        return []
    missing = [name for name in EXPORTS if name not in exported_names(path)]
    return [f"{path}: __all__ does not list {', '.join(missing)}"] if missing else []


# ------------------------------------------------------------------------------ READMEs


def outside_code_blocks(text: str) -> list[str]:
    """The lines of a Markdown text that are not inside a fenced code block."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def headings(text: str) -> list[str]:
    """The `## ` headings of a Markdown text, outside code blocks."""
    return [line[3:].strip() for line in outside_code_blocks(text) if line.startswith("## ")]


def section(text: str, title: str) -> str:
    """The body of the `## title` section, up to the next `## ` heading."""
    lines = outside_code_blocks(text)
    start = lines.index(f"## {title}") + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    return "\n".join(lines[start:end])


def readme_problems(path: Path) -> list[str]:
    if not path.is_file():
        return []
    text = path.read_text(encoding="utf-8")
    found = []
    if headings(text) != list(README_SECTIONS):
        found.append(f"{path}: its sections are {headings(text)}, not {list(README_SECTIONS)}")
    begin, end = READINGS_TABLE
    if text.count(begin) != 1 or text.count(end) != 1:
        found.append(f"{path}: needs one table of example readings between {begin} and {end}")
    return found
