#!/usr/bin/env python3
"""The release check: build every package, inspect it as PyPI and the Hub will see it,
install each environment as a stranger would, and say how to publish.

Why: the environments are installed from the Prime Environments Hub by people who never
clone this repository. A wheel that only works next to the workspace, metadata PyPI
rejects, a test fixture or a local path shipped by accident, or a version range that
cannot resolve are all found here, before a release, instead of by a user.

Subcommands (default `all`):

- `build`: `uv build` (sdist, then the wheel from the sdist) of `medhal` and of every
  `environments/*` package (and of each `--environment` folder, such as a test environment;
  `--only` limits the environments) into DIST/<name>/; checks each package's metadata (version,
  licence, classifiers, URLs, Python range, README type, the CHANGELOG's top entry, for an
  environment the `verifiers` and `medhal` ranges and its one entry point) and each
  artifact's contents (listed; fails on anything under tests/ or outputs/, bytecode, a
  file over 1 MB, an absolute local path in a text file and, when MEDHAL_SHARED_DATA
  holds the upstream files, any run of 12 words from them); then `twine check --strict`.
- `all`: `build`, then for each environment a fresh virtual environment with its wheel,
  the `medhal` wheel and PyPI only (outside the checkout, `--no-sources`, no uv config),
  where it runs `eval <id>` on the bundled demo sample against the scripted endpoint
  (answering the first item's gold reply) and `medhal report` on the result (complete, no
  errors, versions recorded); then what the Hub's automated check does with a pushed
  environment (`project.tags` required, above): its directory alone, installed with
  `uv pip install <dir>` from another working directory (no `tool.uv` setting of this
  repository applies, and a `[tool.uv.sources]` of its own is refused there), and
  `vf.load_environment("<id>", **kwargs)`, the v0 path; prints the publish commands.
- `publish`: publish what the release tag names (`--tag`, else RELEASE_TAG or
  GITHUB_REF_NAME): `medhal-vX.Y.Z` runs `uv publish` on DIST/medhal/, `<env>-vX.Y.Z`
  runs `prime env push` for that environment. The tag's version must be the package's.
  With `--dry-run` (or MEDHAL_PUBLISH_DRY_RUN=1) it prints the command instead.

Exit status: 0 passed; 1 a check failed (every problem is listed); 2 bad input (one line).

Usage: uv run python scripts/release_check.py [all|build|publish] [--dist DIR] [--keep] [--tag T] [--dry-run]
       [--environment FOLDER]... [--only NAME]...
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from email.parser import Parser
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = "medhal"
MAX_FILE_BYTES = 1_000_000
"""No file in a distribution may be larger (the largest today, a published.csv, is ~56 kB)."""
FORBIDDEN_DIRS = frozenset({"tests", "outputs", "__pycache__"})
TEXT_SUFFIXES = frozenset(
    {".py", ".txt", ".md", ".json", ".jsonl", ".csv", ".toml", ".cfg", ".yaml", ".yml", ".jinja", ".html"}
)
TEXT_NAMES = frozenset(
    {"METADATA", "PKG-INFO", "RECORD", "WHEEL", "entry_points.txt", "LICENSE", "NOTICE", ".gitignore"}
)
SHINGLE_WORDS = 12
"""A run of this many words shared with an upstream file counts as upstream text (shorter
runs are answer options and rule names quoted on purpose)."""
PRIME_CLI = "prime==0.18.0"
"""The Prime CLI that pushes environments to the Hub, run through `uvx` at this version."""
REQUIRED_CLASSIFIER_PREFIXES = ("Programming Language :: Python :: 3", "Topic :: ", "Intended Audience :: ")
REQUIRED_URLS = ("Homepage", "Repository", "Changelog")
TAG = re.compile(r"(?P<name>[a-z0-9][a-z0-9-]*?)-v(?P<version>\d+\.\d+\.\d+)")
CHANGELOG_ENTRY = re.compile(r"^## \[?v?(\d+\.\d+\.\d+)\]?", re.MULTILINE)
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


class BadInput(Exception):
    """A wrong tag, a missing file: one line, exit 2."""


@dataclass(frozen=True)
class Package:
    """One publishable package: the shared library or an environment."""

    name: str
    version: str
    directory: Path
    project: dict[str, Any]

    @property
    def is_environment(self) -> bool:
        return self.name != LIBRARY

    @property
    def module(self) -> str:
        return self.name.replace("-", "_")

    @property
    def env_id(self) -> str:
        """The id the environment registers (its one `medhal.environments` entry point)."""
        entries = self.project.get("entry-points", {}).get("medhal.environments", {})
        return next(iter(entries), self.name)

    def dist(self, root: Path) -> Path:
        return root / self.name

    def artifacts(self, root: Path) -> list[Path]:
        stem = f"{self.module}-{self.version}"
        return sorted(p for p in self.dist(root).glob(f"{stem}*") if p.name.endswith((".whl", ".tar.gz")))

    def wheel(self, root: Path) -> Path:
        wheels = [p for p in self.artifacts(root) if p.suffix == ".whl"]
        if len(wheels) != 1:
            raise BadInput(
                f"{self.dist(root)}: expected one {self.module}-{self.version} wheel, "
                f"found {len(wheels)} (run `make build`)"
            )
        return wheels[0]


def packages(extra: Sequence[Path] = ()) -> list[Package]:
    """medhal first (the environments need it), then the environments by directory name, then
    the folders in `extra` (`--environment`: a test environment, built and checked like the
    others). The glob is the contract's `environments/*` (`medhal.kit.contract`), written here
    because `publish` runs without the project installed."""
    found = []
    folders = [
        *sorted((ROOT / "environments").glob("*/pyproject.toml")),
        *(Path(f) / "pyproject.toml" for f in extra),
    ]
    for pyproject in [ROOT / "pyproject.toml", *folders]:
        try:
            project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
            found.append(Package(project["name"], project["version"], pyproject.parent, project))
        except (OSError, tomllib.TOMLDecodeError, KeyError) as e:
            raise BadInput(f"{pyproject}: cannot read [project] name and version ({e})") from e
    return found


def run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(argv, capture_output=True, text=True, check=False, **kwargs)
    if proc.returncode != 0:
        raise CheckFailed(
            [
                (
                    f"`{shlex.join(map(str, argv))}` exited {proc.returncode}:\n"
                    f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
                )
            ]
        )
    return proc


class CheckFailed(Exception):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


# ------------------------------------------------------------------------------- metadata


def changelog_version(path: Path) -> str | None:
    """The version of the CHANGELOG's top `## X.Y.Z` entry (None without one)."""
    try:
        match = CHANGELOG_ENTRY.search(path.read_text(encoding="utf-8"))
    except OSError:
        return None
    return match.group(1) if match else None


def source_problems(package: Package, library_version: str) -> list[str]:
    """What the package's own files get wrong, before anything is built."""
    where = package.directory / "pyproject.toml"
    project = package.project
    problems = [
        f"{where}: project.{k} is missing"
        for k in (
            "description",
            "readme",
            "license",
            "license-files",
            "requires-python",
            "authors",
            "keywords",
            "classifiers",
            "urls",
        )
        if not project.get(k)
    ]
    if "version" in project.get("dynamic", []):
        problems.append(f"{where}: the version must be the static `version` field (its one source)")
    top = changelog_version(package.directory / "CHANGELOG.md")
    if top != package.version:
        problems.append(
            f"{package.directory / 'CHANGELOG.md'}: the top entry is {top!r}, "
            f"not the version {package.version!r} "
            "(add a `## X.Y.Z` entry for every release)"
        )
    if package.is_environment:
        problems += environment_problems(package, library_version)
    return problems


def environment_problems(package: Package, library_version: str) -> list[str]:
    from packaging.requirements import Requirement
    from packaging.version import Version

    from medhal.kit.contract import ENTRY_POINT_GROUP, ENTRY_POINT_TARGET

    where = package.directory / "pyproject.toml"
    project = package.project
    problems = []
    if not project.get("tags"):
        problems.append(f"{where}: project.tags is missing (the Hub shows them and its check requires them)")
    declared = tomllib.loads(where.read_text(encoding="utf-8")) if where.is_file() else {}
    uv_sources = declared.get("tool", {}).get("uv", {}).get("sources")
    if uv_sources:
        problems.append(
            f"{where}: [tool.uv.sources] names {sorted(uv_sources)}; the Hub installs the directory alone "
            "(`uv pip install <dir>`), where uv refuses a workspace source: declare it in the workspace root"
        )
    entries = project.get("entry-points", {}).get(ENTRY_POINT_GROUP, {})
    target = ENTRY_POINT_TARGET.format(package=package.module)
    if len(entries) != 1 or next(iter(entries.values()), "") != target:
        problems.append(
            f'{where}: needs exactly one [project.entry-points."{ENTRY_POINT_GROUP}"] entry, '
            f'"<id>" = "{target}"'
        )
    requirements = {}
    for text in project.get("dependencies", []):
        requirement = Requirement(text)
        requirements[requirement.name] = requirement
    verifiers = requirements.get("verifiers")
    lower = [
        Version(s.version)
        for s in (verifiers.specifier if verifiers else [])
        if s.operator in (">=", "==", "~=")
    ]
    if not lower or max(lower) < Version("0.2.0"):
        problems.append(
            f"{where}: the verifiers requirement needs a lower bound >= 0.2.0 "
            "(the Hub's mark of a v1 environment)"
        )
    library = requirements.get(LIBRARY)
    current = Version(library_version)
    next_minor = Version(f"{current.major}.{current.minor + 1}.0")
    if library is None or not library.specifier.contains(current) or library.specifier.contains(next_minor):
        problems.append(
            f"{where}: the medhal requirement must admit {current} and stop before {next_minor} "
            f"(e.g. medhal>={current.major}.{current.minor},<{next_minor.major}.{next_minor.minor}); "
            f"it is {str(library) if library else None!r}"
        )
    licence = package.directory / "LICENSE"
    if not licence.is_file() or licence.read_bytes() != (ROOT / "LICENSE").read_bytes():
        problems.append(
            f"{licence}: must be a copy of the repository's LICENSE "
            "(license-files cannot reach outside the package)"
        )
    return problems


def metadata_problems(package: Package, wheel: Path) -> list[str]:
    """What PyPI and the Hub will read, from the built wheel's METADATA."""
    with zipfile.ZipFile(wheel) as archive:
        name = next((n for n in archive.namelist() if n.endswith(".dist-info/METADATA")), None)
        if name is None:
            return [f"{wheel.name}: no METADATA"]
        meta = Parser().parsestr(archive.read(name).decode("utf-8"), headersonly=True)
    problems = []
    checks = {
        "Name": meta.get("Name") == package.name,
        "Version": meta.get("Version") == package.version,
        "Summary": bool(meta.get("Summary")),
        "License-Expression": meta.get("License-Expression") == "Apache-2.0",
        "License-File": "LICENSE" in (meta.get_all("License-File") or []),
        "Requires-Python": bool(meta.get("Requires-Python")),
        "Description-Content-Type": (meta.get("Description-Content-Type") or "").startswith("text/markdown"),
        "Keywords": bool(meta.get("Keywords")),
        "Author": bool(meta.get("Author") or meta.get("Author-email")),
    }
    problems += [
        f"{wheel.name}: METADATA field {field} is missing or wrong ({meta.get(field)!r})"
        for field, ok in checks.items()
        if not ok
    ]
    classifiers = meta.get_all("Classifier") or []
    problems += [
        f"{wheel.name}: no `{prefix}...` classifier"
        for prefix in REQUIRED_CLASSIFIER_PREFIXES
        if not any(c.startswith(prefix) for c in classifiers)
    ]
    urls = {u.split(",", 1)[0].strip().lower() for u in meta.get_all("Project-URL") or []}
    problems += [
        f"{wheel.name}: no Project-URL {label!r}" for label in REQUIRED_URLS if label.lower() not in urls
    ]
    return problems


# ------------------------------------------------------------------------------- contents


def members(artifact: Path) -> Iterator[tuple[str, int, bytes]]:
    """(path inside the package, size, bytes) for each file of a wheel or sdist; an sdist's
    top folder (`name-version/`) is dropped."""
    if artifact.suffix == ".whl":
        with zipfile.ZipFile(artifact) as archive:
            for info in archive.infolist():
                if not info.is_dir():
                    yield info.filename, info.file_size, archive.read(info)
        return
    with tarfile.open(artifact, "r:gz") as archive:
        for info in archive.getmembers():
            if info.isfile():
                path = info.name.split("/", 1)[1] if "/" in info.name else info.name
                handle = archive.extractfile(info)
                yield path, info.size, handle.read() if handle else b""


def is_text(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name in TEXT_NAMES or any(name.endswith(s) for s in TEXT_SUFFIXES)


def local_path_pattern() -> re.Pattern[str]:
    """Absolute paths of this machine (the checkout, home, temp) and of any user's home or
    scratch folder. Not preceded by a word, a dot, a slash or a colon: URL paths such as
    `https://host/tmp/x` are not local paths."""
    own = sorted({str(ROOT), str(Path.home()), tempfile.gettempdir()} - {"/", ""}, key=len, reverse=True)
    posix = [*(re.escape(p) for p in own), r"/(?:home|Users|root|work|tmp|private/var|var/folders)/[\w.-]+"]
    return re.compile(rf"(?<![\w./:-])(?:{'|'.join(posix)})|\b[A-Za-z]:\\(?:Users|home)\\")


def content_problems(artifact: Path, upstream: set[int] | None) -> tuple[list[str], list[str]]:
    """(listing lines, problems) for one artifact."""
    listing, problems = [], []
    local = local_path_pattern()
    for path, size, data in members(artifact):
        listing.append(f"    {size:>9,}  {path}")
        parts = path.split("/")
        if FORBIDDEN_DIRS & set(parts[:-1]) or path.endswith((".pyc", ".pyo")):
            problems.append(
                f"{artifact.name}: {path} must not be shipped (tests, outputs and bytecode stay out)"
            )
        if size > MAX_FILE_BYTES:
            problems.append(f"{artifact.name}: {path} is {size:,} bytes (over {MAX_FILE_BYTES:,})")
        if not is_text(path):
            continue
        text = data.decode("utf-8", errors="replace")
        for line_no, line in enumerate(text.splitlines(), start=1):
            found = local.search(line)
            if found:
                problems.append(f"{artifact.name}: {path}, line {line_no}: local path {found.group(0)!r}")
                break
        if upstream is not None and not path.endswith(("RECORD", "LICENSE")):
            shared = next((w for w in windows(words(text)) if w in upstream), None)
            if shared is not None:
                problems.append(
                    f"{artifact.name}: {path} contains upstream text "
                    f"({SHINGLE_WORDS} words in a row from MEDHAL_SHARED_DATA)"
                )
    return listing, problems


def words(text: str) -> list[str]:
    """Lower-cased words, with escapes (`\\n`, `\\t`, `\\"`) read as breaks, so text
    stored inside a JSON or Python string matches the same text in a plain file."""
    return re.findall(r"[a-z0-9]+", re.sub(r"\\[nrt\"']", " ", text.lower()))


def windows(tokens: list[str]) -> Iterator[int]:
    for i in range(len(tokens) - SHINGLE_WORDS + 1):
        yield hash(tuple(tokens[i : i + SHINGLE_WORDS]))


def strings_of(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings_of(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings_of(v)


def upstream_texts(path: Path) -> Iterator[str]:
    """The text of one upstream file: its string values (JSON, JSON lines), cells (CSV) or
    its raw text."""
    raw = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".json":
        try:
            yield from strings_of(json.loads(raw))
            return
        except json.JSONDecodeError:
            pass
    elif path.suffix == ".jsonl":
        for line in raw.splitlines():
            try:
                yield from strings_of(json.loads(line))
            except json.JSONDecodeError:
                yield line
        return
    elif path.suffix == ".csv":
        csv.field_size_limit(1 << 30)
        for row in csv.reader(io.StringIO(raw)):
            yield from row
        return
    yield raw


def upstream_windows(shared: Path) -> set[int]:
    """Every 12-word run of the upstream files in the shared data folder (its README is
    ours, not upstream)."""
    found: set[int] = set()
    for path in sorted(shared.rglob("*")):
        if (
            path.is_file()
            and path.name != "README.md"
            and path.suffix in {".json", ".jsonl", ".csv", ".py", ".txt", ".jinja"}
        ):
            for text in upstream_texts(path):
                found.update(windows(words(text)))
    return found


# ---------------------------------------------------------------------------------- build


def build(pkgs: list[Package], dist: Path) -> None:
    for package in pkgs:
        out = package.dist(dist)
        shutil.rmtree(out, ignore_errors=True)
        # The wheel is built from the sdist (uv's default), so an incomplete sdist fails here.
        run(
            ["uv", "build", "--no-sources", "--quiet", "--out-dir", str(out), str(package.directory)],
            cwd=ROOT,
        )


def check_built(pkgs: list[Package], dist: Path) -> list[str]:
    """Metadata, contents and `twine check --strict` of every artifact; prints each listing."""
    library = next(p for p in pkgs if p.name == LIBRARY)
    shared = os.environ.get("MEDHAL_SHARED_DATA")
    upstream = upstream_windows(Path(shared)) if shared and Path(shared).is_dir() else None
    problems: list[str] = []
    for package in pkgs:
        problems += source_problems(package, library.version)
        artifacts = package.artifacts(dist)
        kinds = sorted(p.suffix for p in artifacts)
        if kinds != [".gz", ".whl"]:
            problems.append(
                f"{package.name}: expected one sdist and one wheel in {package.dist(dist)}, "
                f"found {[p.name for p in artifacts]}"
            )
            continue
        problems += metadata_problems(package, package.wheel(dist))
        for artifact in artifacts:
            listing, found = content_problems(artifact, upstream)
            print(
                f"  {artifact.relative_to(dist)} ({artifact.stat().st_size:,} bytes):",
                *listing,
                sep="\n",
                flush=True,
            )
            problems += found
    if upstream is None:
        print(
            "  upstream-text check skipped: MEDHAL_SHARED_DATA does not point at the upstream files",
            flush=True,
        )
    files = [str(p) for package in pkgs for p in package.artifacts(dist)]
    twine = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *files],
        capture_output=True,
        text=True,
        check=False,
    )
    if twine.returncode != 0:
        problems.append(f"twine check --strict failed:\n{twine.stdout[-3000:]}{twine.stderr[-2000:]}")
    return problems


# -------------------------------------------------------------------------------- install

VERIFIERS_02 = "verifiers>=0.2.1,<0.3"
"""The environments admit verifiers 0.2.1 to 0.4.x; a fresh venv would resolve 0.4.0."""

PROBE = r"""
import importlib, json, sys
from medhal.kit.lines import taskset_class, taskset_config_type
from importlib.metadata import version
env_id, module = sys.argv[1:3]
benchmark = importlib.import_module(module + ".benchmark")
scoring = importlib.import_module(module + ".scoring")
options = dict(benchmark.DEMO_OPTIONS)
config_type = taskset_config_type(env_id)
if "prompts" in config_type.model_fields:
    options["prompts"] = "demo"  # written by medhal for the demo rows: no download needed
tasks = taskset_class(env_id)(config_type.model_validate({"id": env_id, **options})).select()
args = []
for key, value in options.items():
    args += ["--taskset." + key, value if isinstance(value, str) else json.dumps(value)]
print(json.dumps({
    "args": args, "tasks": len(tasks), "reply": scoring.gold_reply(tasks[0].data), "options": options,
    "versions": {"environment": version(module.replace("_", "-")), "medhal": version("medhal")},
}))
"""


HUB_PROBE = r"""
import json, sys
import verifiers as vf
env_id, options = sys.argv[1], json.loads(sys.argv[2])
env = vf.load_environment(env_id, **options)  # the Hub's check: the v0 path, plain keyword arguments
print(json.dumps({"type": type(env).__name__, "rows": len(env.eval_dataset)}))
"""


def check_as_the_hub(package: Package, python: Path, probe: dict[str, Any], work: Path) -> list[str]:
    """What the Hub's automated check does with a pushed environment: the directory alone (its
    source archive; no workspace around it), installed from another working directory with
    `uv pip install <dir>` (so no `tool.uv` setting of this repository applies), then
    `vf.load_environment("<id>", **kwargs)`. The medhal it needs is the one already in the venv
    (from PyPI once released)."""
    copy = work / "hub" / package.directory.name
    shutil.copytree(
        package.directory, copy, ignore=shutil.ignore_patterns("__pycache__", "dist", "build", "outputs")
    )
    install = [
        "uv",
        "pip",
        "install",
        "--quiet",
        "--python",
        str(python),
        "--reinstall-package",
        package.name,
    ]
    run([*install, str(copy)], cwd=work)
    options = json.dumps(probe["options"])
    loaded = run(
        [str(python), "-c", HUB_PROBE, package.env_id, options], cwd=work, env={**os.environ, **OFFLINE}
    )
    found = json.loads(loaded.stdout.strip().splitlines()[-1])
    if found != {"type": "SingleTurnEnv", "rows": probe["tasks"]}:
        return [
            f"{package.name}: vf.load_environment({package.env_id!r}) after `uv pip install <dir>` "
            f"gave {found} for {probe['tasks']} tasks"
        ]
    return []


def code_record(value: Any) -> dict[str, Any] | None:
    """The first `code` record (package versions) anywhere in a report's provenance."""
    if isinstance(value, dict):
        if isinstance(value.get("code"), dict):
            return value["code"]
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            found = code_record(item)
            if found is not None:
                return found
    return None


def fresh_venv(package: Package, library: Package, dist: Path, work: Path) -> Path:
    """A new virtual environment with `package` and medhal from their wheels and everything
    else from PyPI; its bin folder."""
    venv = work / f"venv-{package.module}"
    python = venv / "bin" / "python"
    # Outside the checkout and without uv configuration, so nothing resolves to the workspace.
    run(["uv", "venv", "--quiet", "--no-config", "--python", sys.executable, str(venv)], cwd=work)
    run(
        [
            "uv",
            "pip",
            "install",
            "--quiet",
            "--no-config",
            "--no-sources",
            "--python",
            str(python),
            str(package.wheel(dist)),
            str(library.wheel(dist)),
            # The 0.2 line, which this check's probe and `eval` speak; the 0.4 line is checked
            # by `make test-verifiers-0.4` (compat/verifiers04).
            VERIFIERS_02,
        ],
        cwd=work,
    )
    return venv / "bin"


def demo_eval(package: Package, bin_dir: Path, probe: dict[str, Any], work: Path) -> Path:
    """`eval` on the demo sample in the fresh venv, against the scripted endpoint answering
    the first item's gold reply; the run's folder (one trace per task, none errored)."""
    env = {**os.environ, **OFFLINE}
    endpoint = subprocess.Popen(
        [str(bin_dir / "python"), str(ROOT / "tests" / "scripted_endpoint.py"), "--reply", probe["reply"]],
        stdout=subprocess.PIPE,
        text=True,
        cwd=work,
    )
    try:
        base_url = endpoint.stdout.readline().strip() if endpoint.stdout else ""
        if not base_url.startswith("http"):
            raise CheckFailed([f"{package.name}: the scripted endpoint did not start"])
        out = work / f"run-{package.module}"
        run(
            [
                *(str(bin_dir / "eval"), package.env_id, "--client.base-url", base_url),
                *("--no-push", "--no-rich", "-m", "scripted", "-o", str(out), *probe["args"]),
            ],
            cwd=work,
            env=env,
            timeout=900,
        )
    finally:
        endpoint.terminate()
        endpoint.wait(10)
    traces = sorted(out.glob("**/traces.jsonl"))
    rows = [json.loads(line) for line in traces[0].read_text().splitlines() if line.strip()] if traces else []
    errors = [r.get("errors") for r in rows if r.get("errors")]
    if len(rows) != probe["tasks"] or errors:
        got = f"{len(rows)} traces for {probe['tasks']} tasks, errors: {errors[:2]}"
        raise CheckFailed([f"{package.name}: eval in the fresh venv gave {got}"])
    return traces[0].parent


def report_problems(package: Package, library: Package, report: dict[str, Any], tasks: int) -> list[str]:
    """What the demo run's report.json gets wrong: the code versions it records, its counts,
    and the first item's gold reply scoring nothing."""
    problems = []
    code = code_record(report.get("provenance")) or {}
    expected_code = {
        "environment": package.name,
        "environment_version": package.version,
        "medhal": library.version,
    }
    if {k: code.get(k) for k in expected_code} != expected_code:
        problems.append(f"{package.name}: report.json records code versions {code}, not {expected_code}")
    if report.get("n") != tasks or report.get("n_errors") != 0 or report.get("complete") is not True:
        problems.append(
            f"{package.name}: report.json has n={report.get('n')}, n_errors={report.get('n_errors')}, "
            f"complete={report.get('complete')}"
        )
    if not report.get("micro_accuracy"):
        problems.append(
            f"{package.name}: the first item's gold reply scored nothing "
            f"(micro_accuracy {report.get('micro_accuracy')})"
        )
    return problems


def check_installed(package: Package, library: Package, dist: Path, work: Path) -> str:
    """Install `package` from wheels + PyPI into a fresh venv and run it there, then as the
    Hub's check does."""
    bin_dir = fresh_venv(package, library, dist, work)
    env = {**os.environ, **OFFLINE}
    probe = json.loads(
        run([str(bin_dir / "python"), "-c", PROBE, package.env_id, package.module], cwd=work, env=env)
        .stdout.strip()
        .splitlines()[-1]
    )
    problems = []
    if probe["versions"] != {"environment": package.version, "medhal": library.version}:
        problems.append(f"{package.name}: the fresh venv has {probe['versions']}, not the built versions")
    run_dir = demo_eval(package, bin_dir, probe, work)
    run([str(bin_dir / "medhal"), "report", str(run_dir), "--no-plots"], cwd=work, env=env)
    problems += report_problems(
        package, library, json.loads((run_dir / "report.json").read_text()), probe["tasks"]
    )
    problems += check_as_the_hub(package, bin_dir / "python", probe, work)
    if problems:
        raise CheckFailed(problems)
    return (
        f"{package.env_id}: {package.wheel(dist).name} + {library.wheel(dist).name} install from PyPI alone; "
        f"eval ran {probe['tasks']} rollouts; medhal report OK; the Hub's check (its directory installed "
        "alone, vf.load_environment with keyword arguments) OK"
    )


# -------------------------------------------------------------------------------- publish


def publish_command(package: Package, dist: Path) -> list[str]:
    """The command that publishes `package`: PyPI for medhal, the Hub for an environment."""
    if not package.is_environment:
        files = package.artifacts(dist)
        if not files:
            raise BadInput(
                f"{package.dist(dist)}: no {package.module}-{package.version} artifacts "
                "(run `make build` first)"
            )
        return ["uv", "publish", *(shown(p) for p in files)]
    return [
        "uvx",
        "--from",
        PRIME_CLI,
        "prime",
        "env",
        "push",
        "--path",
        shown(package.directory),
        "--visibility",
        "PUBLIC",
    ]


def shown(path: Path) -> str:
    """A path relative to the checkout when inside it (commands are run from there)."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def package_of_tag(tag: str, pkgs: list[Package]) -> Package:
    match = TAG.fullmatch(tag)
    if not match:
        raise BadInput(
            f"release tag {tag!r} is not <package>-vX.Y.Z (packages: {', '.join(p.name for p in pkgs)})"
        )
    package = next((p for p in pkgs if p.name == match["name"]), None)
    if package is None:
        raise BadInput(f"release tag {tag!r} names no package (packages: {', '.join(p.name for p in pkgs)})")
    if match["version"] != package.version:
        raise BadInput(
            f"release tag {tag!r} says {match['version']} but "
            f"{shown(package.directory / 'pyproject.toml')} has version {package.version}"
        )
    return package


def publish(ns: argparse.Namespace, pkgs: list[Package], dist: Path) -> int:
    tag = ns.tag or os.environ.get("RELEASE_TAG") or os.environ.get("GITHUB_REF_NAME")
    if not tag:
        raise BadInput("no release tag: give --tag, or set RELEASE_TAG (GITHUB_REF_NAME on GitHub)")
    package = package_of_tag(tag, pkgs)
    command = publish_command(package, dist)
    if ns.dry_run or os.environ.get("MEDHAL_PUBLISH_DRY_RUN") == "1":
        print(f"would run: {shlex.join(command)}", flush=True)
        if command[:2] == ["uv", "publish"]:
            # uv's own dry run checks the files against the index without uploading.
            return subprocess.run([*command[:2], "--dry-run", *command[2:]], cwd=ROOT, check=False).returncode
        return 0
    if package.is_environment and not os.environ.get("PRIME_API_KEY"):
        raise BadInput("PRIME_API_KEY is not set (the Hub push authenticates with it)")
    print(f"running: {shlex.join(command)}", flush=True)
    return subprocess.run(command, cwd=ROOT, check=False).returncode


# ----------------------------------------------------------------------------------- main


def arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("step", nargs="?", default="all", choices=("all", "build", "publish"))
    parser.add_argument(
        "--dist",
        type=Path,
        default=Path(os.environ.get("MEDHAL_DIST", ROOT / "dist")),
        help="where artifacts go (MEDHAL_DIST; default dist/)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder of the install check")
    parser.add_argument("--tag", help="publish: the release tag (default RELEASE_TAG or GITHUB_REF_NAME)")
    parser.add_argument("--dry-run", action="store_true", help="publish: print the command only")
    parser.add_argument(
        "--environment",
        action="append",
        type=Path,
        default=[],
        help="all/build: another environment folder to build and check (a test environment)",
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        help="all/build: only these packages (and medhal, which they need)",
    )
    return parser.parse_args(argv)


def install_all(pkgs: list[Package], dist: Path, keep: bool) -> None:
    """Every environment installed in a fresh venv and run there (`check_installed`)."""
    library = pkgs[0]
    work = Path(tempfile.mkdtemp(prefix="medhal-release-"))
    try:
        for package in pkgs[1:]:
            started = time.monotonic()
            line = check_installed(package, library, dist, work)
            print(f"{line} ({time.monotonic() - started:.0f} s)", flush=True)
    finally:
        if keep:
            print(f"scratch kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def print_publish_commands(pkgs: list[Package], dist: Path) -> None:
    print(
        "\nRelease check passed. Publish in this order (medhal first: the environments require it from PyPI),"
    )
    print(
        "from the repository root, or push the tags <package>-vX.Y.Z "
        "and let .github/workflows/release.yml do it:"
    )
    for package in pkgs:
        print(f"  {shlex.join(publish_command(package, dist))}")


def main(argv: list[str] | None = None) -> int:
    ns = arguments(argv)
    dist = ns.dist.resolve()
    try:
        if ns.step == "publish":
            return publish(ns, packages(), dist)
        pkgs = [p for p in packages(ns.environment) if not ns.only or p.name in (LIBRARY, *ns.only)]
        build(pkgs, dist)
        problems = check_built(pkgs, dist)
        if problems:
            raise CheckFailed(problems)
        print(f"built and checked: {', '.join(f'{p.name} {p.version}' for p in pkgs)}", flush=True)
        if ns.step == "build":
            return 0
        install_all(pkgs, dist, ns.keep)
        print_publish_commands(pkgs, dist)
        return 0
    except BadInput as e:
        print(f"release check: {e}", file=sys.stderr)
        return 2
    except CheckFailed as e:
        print("release check FAILED:", *(f"- {p}" for p in e.problems), sep="\n", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
