"""The GitHub workflows (.github/workflows/), checked here because they cannot run here.

Each file must parse, have the keys GitHub requires, and run nothing but Makefile targets
that the test suite itself runs: `make test` is the suite (the README's test command), run
with `make test-slow`, `make test-verifiers-0.3`, `make test-verifiers-0.4` and `make test-prime-rl`
by `.ci/run`; `make release-check` and
`make publish` run in tests/test_release.py. So a workflow cannot drift from what was tested.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
TESTED_TARGETS = {
    "test": ROOT / ".ci" / "run",
    "test-slow": ROOT / ".ci" / "run",
    "test-verifiers-0.3": ROOT / ".ci" / "run",
    "test-verifiers-0.4": ROOT / ".ci" / "run",
    "test-prime-rl": ROOT / ".ci" / "run",
    "release-check": ROOT / "tests" / "test_release.py",
    "publish": ROOT / "tests" / "test_release.py",
}
"""Makefile target -> the file that runs it (the suites, by .ci/run)."""


def load(name: str) -> dict:
    data = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    assert isinstance(data, dict), f"{name}: not a mapping"
    # YAML 1.1 reads the bare key `on` as True.
    if True in data:
        data["on"] = data.pop(True)
    return data


def makefile_targets() -> set[str]:
    return set(
        re.findall(r"^([A-Za-z][\w.-]*):(?!=)", (ROOT / "Makefile").read_text(encoding="utf-8"), re.MULTILINE)
    )


def steps(workflow: dict) -> list[tuple[str, dict]]:
    return [(job_name, step) for job_name, job in workflow["jobs"].items() for step in job["steps"]]


@pytest.mark.parametrize("name", ["ci.yml", "release.yml"])
def test_workflow_structure(name):
    workflow = load(name)
    assert {"name", "on", "jobs", "permissions"} <= workflow.keys(), f"{name}: keys {sorted(workflow)}"
    assert workflow["permissions"] == {"contents": "read"}, f"{name}: the default token must be read-only"
    for job_name, job in workflow["jobs"].items():
        assert {"runs-on", "steps", "timeout-minutes"} <= job.keys(), (
            f"{name}: job {job_name} has {sorted(job)}"
        )
        assert job["defaults"]["run"]["working-directory"] == "main", (
            f"{name}: {job_name} must run in the checkout"
        )
        for step in job["steps"]:
            assert ("uses" in step) != ("run" in step), (
                f"{name}: a step needs exactly one of uses/run: {step}"
            )
            if "uses" in step:
                assert re.fullmatch(r"[\w.-]+/[\w.-]+@v\d+", step["uses"]), (
                    f"{name}: pin {step['uses']} to a major version"
                )
        checkouts = [s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@")]
        assert checkouts[0]["with"]["path"] == "main", (
            f"{name}: {job_name} must check this repository out into main/"
        )


@pytest.mark.parametrize("name", ["ci.yml", "release.yml"])
def test_every_run_is_a_tested_makefile_target(name):
    targets = makefile_targets()
    runs = [step["run"] for _, step in steps(load(name)) if "run" in step]
    assert runs, f"{name}: runs nothing"
    for command in runs:
        match = re.fullmatch(r"make ([\w.-]+)", command.strip())
        assert match, f"{name}: `{command}` is not `make <target>`"
        target = match.group(1)
        assert target in targets, f"{name}: `make {target}` is not a Makefile target"
        assert target in TESTED_TARGETS, f"{name}: `make {target}` is run by no test"
        runner = TESTED_TARGETS[target].read_text(encoding="utf-8")
        assert f"make {target}" in runner or f'make("{target}"' in runner, (
            f"{TESTED_TARGETS[target]} does not run make {target}"
        )


def test_ci_runs_the_readme_test_command_with_the_shared_data():
    """The GitHub workflow runs the suites `.ci/run` runs, in its order."""
    ci = load("ci.yml")
    assert "`make test`" in (ROOT / "README.md").read_text(encoding="utf-8")
    suites = re.findall(r"^make ([\w.-]+)$", (ROOT / ".ci" / "run").read_text(encoding="utf-8"), re.MULTILINE)
    assert suites[0] == "test", suites
    assert [step["run"] for _, step in steps(ci) if "run" in step] == [f"make {s}" for s in suites]
    assert {"push", "pull_request"} <= set(ci["on"])
    # The layout the Makefile expects: this repository in main/, the data in shared/data/.
    assert ci["env"]["MEDHAL_SHARED_DATA"] == "${{ github.workspace }}/shared/data"
    data = [
        s
        for _, s in steps(ci)
        if s.get("uses", "").startswith("actions/checkout@") and s["with"]["path"] == "shared"
    ]
    assert len(data) == 1 and data[0]["with"]["repository"] == "${{ vars.MEDHAL_SHARED_DATA_REPO }}"
    assert "SHARED_DATA := $(abspath ../shared/data)" in (ROOT / "Makefile").read_text(encoding="utf-8")


def test_release_triggers_on_each_package_tag_only():
    from tests.test_release import rc

    patterns = load("release.yml")["on"]["push"]["tags"]
    for package in rc.packages():
        tag = f"{package.name}-v{package.version}"
        matching = [p for p in patterns if fnmatch.fnmatchcase(tag, p)]
        assert len(matching) == 1, f"{tag} matches {matching}"
    for other in ("v0.2.0", "medhalx-v0.2.0", "main"):
        assert not any(fnmatch.fnmatchcase(other, p) for p in patterns), other


def test_release_publishes_after_the_check_with_trusted_publishing_and_the_hub_key():
    release = load("release.yml")
    jobs = release["jobs"]
    assert [s["run"] for s in jobs["check"]["steps"] if "run" in s] == ["make release-check"]
    publish = jobs["publish"]
    assert publish["needs"] == "check"
    assert publish["permissions"]["id-token"] == "write"  # PyPI trusted publishing
    # Trusted publishing: no PyPI token; the only secrets are the Hub key and the data token.
    secrets = set(re.findall(r"secrets\.(\w+)", (WORKFLOWS / "release.yml").read_text(encoding="utf-8")))
    assert secrets == {"PRIME_API_KEY", "MEDHAL_SHARED_DATA_TOKEN"}, secrets
    run_steps = [s for s in publish["steps"] if "run" in s]
    assert [s["run"] for s in run_steps] == ["make publish"]
    assert run_steps[0]["env"] == {"PRIME_API_KEY": "${{ secrets.PRIME_API_KEY }}"}
    # The artifacts the check built are the ones published.
    upload = next(
        s for s in jobs["check"]["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")
    )
    download = next(s for s in publish["steps"] if s.get("uses", "").startswith("actions/download-artifact@"))
    assert upload["with"]["name"] == download["with"]["name"]
    assert upload["with"]["path"] == download["with"]["path"] == "main/dist/"
