"""The release check (scripts/release_check.py, `make release-check`, `make publish`).

The fast tests feed the checks made-up artifacts and metadata to show each rule can
fail; the slow one runs `make release-check` itself: every package built and
inspected, each environment installed in a fresh venv from wheels + PyPI and run there.
"""

from __future__ import annotations

import importlib.util
import io
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from medhal.kit import contract
from tests.staging import staged_environments

pytestmark = pytest.mark.slow(
    reason="the release check itself: builds every package and installs each environment "
    "in a fresh venv from the wheels and PyPI"
)

ROOT = Path(__file__).resolve().parents[1]
ENVIRONMENTS = contract.environments(ROOT)
"""The collection (`medhal.kit.contract`): what `make release-check` builds and installs."""


def load_script():
    spec = importlib.util.spec_from_file_location("release_check", ROOT / "scripts" / "release_check.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["release_check"] = module
    spec.loader.exec_module(module)
    return module


rc = load_script()


def wheel(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


def sdist(path: Path, top: str, files: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


# --------------------------------------------------------------------------- contents


def test_clean_wheel_passes_and_is_listed(tmp_path):
    artifact = wheel(
        tmp_path / "pkg-0.2.0-py3-none-any.whl",
        {"pkg/__init__.py": b'"""Fine."""\n', "pkg/demo/rows.jsonl": b'{"a": 1}\n'},
    )
    listing, problems = rc.content_problems(artifact, upstream=None)
    assert problems == []
    assert [line.split()[-1] for line in listing] == ["pkg/__init__.py", "pkg/demo/rows.jsonl"]


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("pkg/tests/test_x.py", b"", "must not be shipped"),
        ("tests/conftest.py", b"", "must not be shipped"),
        ("pkg/outputs/run/traces.jsonl", b"", "must not be shipped"),
        ("pkg/__pycache__/x.cpython-311.pyc", b"", "must not be shipped"),
        ("pkg/big.bin", b"\0" * 1_000_001, "is 1,000,001 bytes"),
        ("pkg/paths.py", b'DATA = "/home/alice/data.csv"\n', "local path '/home/alice"),
        ("pkg/paths.txt", b"see C:\\Users\\bob\\x\n", "local path"),
        ("pkg/here.md", f"built in {ROOT}/dist\n".encode(), f"local path '{ROOT}"),
    ],
)
def test_each_content_rule_fails(tmp_path, name, data, expected):
    artifact = wheel(tmp_path / "pkg-0.2.0-py3-none-any.whl", {"pkg/__init__.py": b"", name: data})
    _, problems = rc.content_problems(artifact, upstream=None)
    assert len(problems) == 1 and expected in problems[0], problems


def test_url_paths_are_not_local_paths(tmp_path):
    artifact = wheel(
        tmp_path / "pkg-0.2.0-py3-none-any.whl",
        {"pkg/urls.py": b'URL = "https://example.org/tmp/home/x"\nAPI = "/v1/chat/completions"\n'},
    )
    assert rc.content_problems(artifact, upstream=None)[1] == []


def test_sdist_top_folder_is_dropped_before_the_rules(tmp_path):
    artifact = sdist(
        tmp_path / "pkg-0.2.0.tar.gz", "pkg-0.2.0", {"pkg/__init__.py": b"", "tests/test_a.py": b""}
    )
    listing, problems = rc.content_problems(artifact, upstream=None)
    assert [line.split()[-1] for line in listing] == ["pkg/__init__.py", "tests/test_a.py"]
    assert len(problems) == 1 and "tests/test_a.py must not be shipped" in problems[0]


def test_upstream_text_is_found_inside_strings(tmp_path):
    # A made-up "upstream" file, and a module that pastes 12 of its words into a string.
    upstream = tmp_path / "shared"
    upstream.mkdir()
    (upstream / "prompts.json").write_text(
        '{"system": "Read the passage below carefully and then decide whether each of the listed '
        'statements is true."}'
    )
    (upstream / "README.md").write_text(
        "our own words, never upstream: " + "one two three four five six seven eight nine ten eleven twelve"
    )
    windows = rc.upstream_windows(upstream)
    pasted = (
        b'PROMPT = "Please: read the passage below carefully and then decide whether each of the\\nlisted"\n'
    )
    short = b'NOTE = "read the passage below carefully"\n'
    readme_words = b'X = "one two three four five six seven eight nine ten eleven twelve"\n'
    artifact = wheel(
        tmp_path / "pkg-0.2.0-py3-none-any.whl",
        {"pkg/a.py": pasted, "pkg/b.py": short, "pkg/c.py": readme_words},
    )
    problems = rc.content_problems(artifact, upstream=windows)[1]
    assert len(problems) == 1 and problems[0].startswith(
        "pkg-0.2.0-py3-none-any.whl: pkg/a.py contains upstream text"
    ), problems


# --------------------------------------------------------------------------- metadata


def package(tmp_path: Path, **project) -> object:
    directory = tmp_path / "environments" / "demo_env"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "CHANGELOG.md").write_text("# Changelog\n\n## 0.2.0\n\n- x\n\n## 0.1.0\n")
    (directory / "LICENSE").write_bytes((ROOT / "LICENSE").read_bytes())
    base = {
        "name": "demo-env",
        "version": "0.2.0",
        "description": "d",
        "readme": "README.md",
        "license": "Apache-2.0",
        "license-files": ["LICENSE"],
        "requires-python": ">=3.11",
        "authors": [{"name": "a"}],
        "keywords": ["k"],
        "classifiers": ["c"],
        "urls": {"Homepage": "h"},
        "tags": ["eval"],
        "dependencies": ["verifiers>=0.2.1,<0.3", "medhal>=0.2,<0.3"],
        "entry-points": {"medhal.environments": {"demo-env": "demo_env.report:REPORT"}},
    }
    base.update(project)
    return rc.Package(base["name"], base["version"], directory, base)


def test_a_complete_environment_has_no_source_problems(tmp_path):
    assert rc.source_problems(package(tmp_path), "0.2.0") == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"dependencies": ["verifiers>=0.1.9", "medhal>=0.2,<0.3"]}, "lower bound >= 0.2.0"),
        (
            {"dependencies": ["verifiers>=0.2.1,<0.3", "medhal>=0.1.0"]},
            "must admit 0.2.0 and stop before 0.3.0",
        ),
        ({"dependencies": ["verifiers>=0.2.1,<0.3", "medhal>=0.3,<0.4"]}, "must admit 0.2.0"),
        ({"dependencies": ["verifiers>=0.2.1,<0.3"]}, "medhal requirement"),
        ({"version": "0.3.0"}, "the top entry is '0.2.0', not the version '0.3.0'"),
        ({"tags": []}, "project.tags is missing"),
        ({"entry-points": {}}, "exactly one"),
        ({"classifiers": []}, "project.classifiers is missing"),
        ({"license-files": None}, "project.license-files is missing"),
        ({"dynamic": ["version"]}, "static `version` field"),
    ],
)
def test_each_metadata_rule_fails(tmp_path, change, expected):
    problems = rc.source_problems(package(tmp_path, **change), "0.2.0")
    assert len(problems) == 1 and expected in problems[0], problems


def test_an_environment_names_no_uv_source(tmp_path):
    # The Hub installs the directory alone (`uv pip install <dir>`); uv refuses a member's
    # `workspace = true` source outside its workspace ("references a workspace ... but is not
    # a workspace member"), so the sources live in the workspace root.
    pkg = package(tmp_path)
    (pkg.directory / "pyproject.toml").write_text("[tool.uv.sources]\nmedhal = { workspace = true }\n")
    problems = rc.source_problems(pkg, "0.2.0")
    assert len(problems) == 1 and "[tool.uv.sources] names ['medhal']" in problems[0], problems


def test_environment_licence_must_be_the_repositorys(tmp_path):
    pkg = package(tmp_path)
    (pkg.directory / "LICENSE").write_text("MIT")
    problems = rc.source_problems(pkg, "0.2.0")
    assert len(problems) == 1 and "copy of the repository's LICENSE" in problems[0]


def test_wheel_metadata_fields_are_checked(tmp_path):
    meta = (
        "Metadata-Version: 2.4\nName: demo-env\nVersion: 0.2.0\nSummary: s\nLicense-Expression: MIT\n"
        "Requires-Python: >=3.11\nDescription-Content-Type: text/markdown\nKeywords: k\nAuthor: a\n"
        "Classifier: Programming Language :: Python :: 3\nClassifier: Topic :: X\n"
        "Classifier: Intended Audience :: Y\n"
        "Project-URL: Homepage, h\nProject-URL: Repository, r\n\nbody\n"
    )
    artifact = wheel(
        tmp_path / "demo_env-0.2.0-py3-none-any.whl", {"demo_env-0.2.0.dist-info/METADATA": meta.encode()}
    )
    problems = rc.metadata_problems(package(tmp_path), artifact)
    # Wrong licence, no License-File, no Changelog URL: three problems, hand-counted.
    assert len(problems) == 3, problems
    assert any("License-Expression" in p for p in problems)
    assert any("License-File" in p for p in problems)
    assert any("'Changelog'" in p for p in problems)


def test_every_package_in_the_repository_passes_the_source_checks():
    pkgs = rc.packages()
    assert [p.name for p in pkgs] == ["medhal", *(env.name for env in ENVIRONMENTS)]
    library = pkgs[0]
    for pkg in pkgs:
        assert rc.source_problems(pkg, library.version) == [], pkg.name


# ---------------------------------------------------------------------------- publish


def test_release_tags_name_a_package_at_its_version():
    pkgs = rc.packages()
    versions = {p.name: p.version for p in pkgs}
    assert rc.package_of_tag(f"medhal-v{versions['medhal']}", pkgs).name == "medhal"
    for env in ENVIRONMENTS:
        assert rc.package_of_tag(f"{env.name}-v{env.version}", pkgs).directory == env.folder
    for tag, expected in [
        ("medhal-v9.9.9", "says 9.9.9 but pyproject.toml has version"),
        ("medhal-0.2.0", "is not <package>-vX.Y.Z"),
        ("nothing-v0.2.0", "names no package"),
        ("medhal-v0.2", "is not <package>-vX.Y.Z"),
    ]:
        with pytest.raises(rc.BadInput, match=expected):
            rc.package_of_tag(tag, pkgs)


def test_publish_commands():
    pkgs = {p.name: p for p in rc.packages()}
    env = ENVIRONMENTS[0]
    assert rc.publish_command(pkgs[env.name], ROOT / "dist") == [
        "uvx",
        "--from",
        rc.PRIME_CLI,
        "prime",
        "env",
        "push",
        "--path",
        f"environments/{env.folder.name}",
        "--visibility",
        "PUBLIC",
    ]


def make(*args: str, env: dict[str, str], timeout: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **env},
        timeout=timeout,
        check=False,
    )


def test_release_check_builds_installs_and_publishes(tmp_path):
    """`make release-check` end to end, then `make publish` (dry run) for a library tag, an
    environment tag and a tag whose version is not the package's: the commands the
    release workflow runs."""
    dist = tmp_path / "dist"
    proc = make("release-check", env={"MEDHAL_DIST": str(dist)}, timeout=2400)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    out = proc.stdout
    pkgs = {p.name: p for p in rc.packages()}
    version = pkgs["medhal"].version
    for env in ENVIRONMENTS:
        assert any(
            line.startswith(f"{env.env_id}: ")
            and f"eval ran {demo_size(env)} rollouts; medhal report OK; the Hub's check" in line
            for line in out.splitlines()
        ), out[-3000:]
    for wheel_name in ("medhal", *(env.package for env in ENVIRONMENTS)):
        assert f"{wheel_name}-" in out and "-py3-none-any.whl (" in out
    commands = out[out.index("Publish in this order") :].splitlines()[2:]
    assert (
        commands[0].strip()
        == f"uv publish {dist}/medhal/medhal-{version}-py3-none-any.whl {dist}/medhal/medhal-{version}.tar.gz"
    )
    pushes = commands[1 : 1 + len(ENVIRONMENTS)]
    assert [c.split("--path ")[1].split()[0] for c in pushes] == [
        f"environments/{env.folder.name}" for env in ENVIRONMENTS
    ]
    assert all("prime env push" in c for c in pushes)

    dry = {"MEDHAL_DIST": str(dist), "MEDHAL_PUBLISH_DRY_RUN": "1"}
    library = make("publish", env={**dry, "GITHUB_REF_NAME": f"medhal-v{version}"}, timeout=300)
    assert library.returncode == 0, library.stderr[-2000:]
    assert f"would run: {commands[0].strip()}" in library.stdout
    assert (
        f"Checking medhal-{version}-py3-none-any.whl" in library.stderr
    )  # uv publish --dry-run ran on the files
    first = ENVIRONMENTS[0]
    environment = make(
        "publish", env={**dry, "GITHUB_REF_NAME": f"{first.name}-v{first.version}"}, timeout=300
    )
    assert environment.returncode == 0, environment.stderr[-2000:]
    assert f"would run: {commands[1].strip()}" in environment.stdout
    wrong = make("publish", env={**dry, "GITHUB_REF_NAME": f"{first.name}-v9.0.0"}, timeout=300)
    assert wrong.returncode != 0
    assert (
        f"release check: release tag '{first.name}-v9.0.0' says 9.0.0 "
        f"but environments/{first.folder.name}/pyproject.toml has version {first.version}" in wrong.stderr
    )


def demo_size(env: contract.Environment) -> int:
    """The tasks of the environment's demo rows (with its demo prompts): what the check runs."""
    from medhal.kit.lines import select_tasks, taskset_class, taskset_config_type
    from medhal.reports.registry import benchmark_module

    options = dict(benchmark_module(env.env_id).DEMO_OPTIONS)
    config_type = taskset_config_type(env.env_id)
    if "prompts" in config_type.model_fields:
        options["prompts"] = "demo"
    return len(
        select_tasks(taskset_class(env.env_id)(config_type.model_validate({"id": env.env_id, **options})))
    )


def test_a_test_environment_is_built_installed_and_run_as_the_collection_is(tmp_path):
    """The release check on a test environment (`--environment`, `--only`): built with medhal,
    its metadata and contents checked, installed in a fresh venv from the wheels and PyPI, run
    there with `eval` and reported: nothing outside its folder names it."""
    for env in staged_environments():
        proc = subprocess.run(
            [
                *(sys.executable, str(ROOT / "scripts" / "release_check.py"), "all"),
                *(
                    "--dist",
                    str(tmp_path / env.package),
                    "--environment",
                    str(env.folder),
                    "--only",
                    env.name,
                ),
            ],
            capture_output=True,
            text=True,
            timeout=2400,
            check=False,
        )
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
        line = f"eval ran {demo_size(env)} rollouts; medhal report OK; the Hub's check"
        assert any(row.startswith(f"{env.env_id}: ") and line in row for row in proc.stdout.splitlines())


def test_publish_without_a_prime_key_is_one_line(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PRIME_API_KEY", "MEDHAL_PUBLISH_DRY_RUN")}
    first = ENVIRONMENTS[0]
    proc = subprocess.run(
        [
            *(sys.executable, str(ROOT / "scripts" / "release_check.py")),
            *("publish", "--tag", f"{first.name}-v{first.version}"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2
    assert (
        proc.stderr.strip() == "release check: PRIME_API_KEY is not set (the Hub push authenticates with it)"
    )
