"""Prime Intellect's own CLI (prime 0.18.0, in the dev group) on our environments and paper
settings, offline: every prime command runs for real (argument parsing, config loading,
`prime env push`'s build and packaging, the hosted request it assembles) and only the Prime
platform is replaced, by `Hub` below, which records each request and answers in the shape
prime's code reads. What this cannot check: the platform's side (it accepting an upload,
listing the package as v1, installing it, and how the hosted runner calls the environment).

- configs/prime/ is rendered from configs/eval/ (`scripts/prime_configs.py`) and current;
- `prime eval run configs/prime/X.toml --hosted` sends each paper setting's environment,
  options, sampling and task count, and vf-eval's loader reads the same from the file;
- `prime env push` builds a v1 package of each environment, with every file it needs, and a
  hosted run of a paper setting then resolves to what was pushed;
- the `prime` commands of the README's "Run on Prime" do what the README says.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import shlex
import shutil
import subprocess
import tarfile
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from packaging.requirements import Requirement

from medhal.kit import contract
from medhal.kit.contract import Environment
from scripts import prime_configs

ROOT = Path(__file__).parents[1]
SOURCES = prime_configs.sources()
"""Every paper setting: configs/eval/ and each test environment's own."""
OWNER = "medhal-test"
MODEL = "some-org/hosted-model"
ENVIRONMENTS = contract.environments(ROOT, tests=True)


class Hub:
    """Stands in for prime's `APIClient` (and the evaluations client and upload URLs): records
    every request; answers the ones `prime env push` and `prime eval run --hosted` make, with
    the fields prime 0.18.0's code reads from them. Any other request fails the test."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, Any]] = []
        self.uploads: dict[str, bytes] = {}
        self.created: list[dict[str, Any]] = []
        self.pushed: dict[str, str] = {}  # "owner/name" -> version
        self.resolved: list[str] = []  # environment references a hosted run resolved

    def client(self, *args: Any, **kwargs: Any) -> SimpleNamespace:
        return SimpleNamespace(
            config=SimpleNamespace(team_id=None, frontend_url="https://app.primeintellect.ai"),
            get=self.get,
            post=self.post,
        )

    def post(self, path: str, json: Any = None) -> dict[str, Any]:
        self.posts.append((path, json))
        if path == "/environmentshub/resolve":
            return {"data": {"id": f"env-{json['name']}", "owner": {"name": OWNER}, "created": True}}
        if re.fullmatch(r"/environmentshub/env-[\w-]+/wheels", path):
            return {"data": {"wheel_id": "w1", "upload_url": "https://upload.invalid/wheel"}}
        if re.fullmatch(r"/environmentshub/env-[\w-]+/versions", path):
            self.pushed[f"{OWNER}/{path.split('/')[2].removeprefix('env-')}"] = json["semantic_version"]
            return {"data": {"version_id": "v1", "upload_url": "https://upload.invalid/source"}}
        if path.endswith("/wheels/w1/finalize"):
            return {}
        if path.endswith("/versions/v1/finalize"):
            return {"data": {"success": True}}
        raise AssertionError(f"unexpected POST {path}")

    def get(self, path: str, params: Any = None) -> dict[str, Any]:
        from prime_cli.client import APIError

        match = re.fullmatch(r"/environmentshub/([\w-]+)/([\w-]+)/@latest", path)
        if match and f"{match[1]}/{match[2]}" in self.pushed:
            slug = f"{match[1]}/{match[2]}"
            return {
                "data": {"id": f"env-{match[2]}", "latest_version": {"semantic_version": self.pushed[slug]}}
            }
        if match or path in ("/user/whoami", "/user/teams"):
            raise APIError("404 not found")
        raise AssertionError(f"unexpected GET {path}")

    def put(self, url: str, content: bytes = b"", **kwargs: Any) -> SimpleNamespace:
        self.uploads[url] = content
        return SimpleNamespace(raise_for_status=lambda: None)

    def evals_client(self, api_client: Any) -> SimpleNamespace:
        def create_hosted_evaluation(environment_ids, model, eval_config, name=None):
            self.created.append(
                {"environment_ids": environment_ids, "model": model, "config": eval_config, "name": name}
            )
            return {"evaluation_id": f"eval-{len(self.created)}"}

        return SimpleNamespace(create_hosted_evaluation=create_hosted_evaluation)

    def posted(self, path: str) -> Any:
        return next(body for p, body in self.posts if p == path)


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Hub:
    """prime with the platform replaced: its config under a temporary HOME, no version check
    against PyPI, every client, upload and evaluation request answered by `Hub`."""
    import httpx
    import prime_cli.commands.env as env_commands
    import prime_cli.commands.evals as eval_commands
    from prime_cli.utils import eval_environment

    fake = Hub()
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PRIME_DISABLE_VERSION_CHECK", "1")
    for module in (env_commands, eval_commands, eval_environment):
        monkeypatch.setattr(module, "APIClient", fake.client)
    monkeypatch.setattr(eval_commands, "EvalsClient", fake.evals_client)
    monkeypatch.setattr(httpx, "put", fake.put)
    return fake


def prime(*args: str) -> Any:
    """`prime ARGS` in this process (its typer app, as the `prime` script runs it)."""
    from prime_cli.main import app
    from typer.testing import CliRunner

    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def paper_setting(source: Path) -> tuple[str, dict[str, Any], dict[str, Any], int]:
    """(environment id, taskset options, sampling, rollouts per task) as configs/eval states them."""
    declared = tomllib.loads(source.read_text())
    options = dict(declared["taskset"])
    return options.pop("id"), options, declared.get("sampling", {}), declared.get("num_rollouts", 1)


def valid_options(env_id: str, options: dict[str, Any]) -> None:
    """The options are the environment's own (names and values), as `eval` would validate them."""
    from verifiers.v1.loaders import taskset_config_type

    taskset_config_type(env_id).model_validate({"id": env_id, **options})


# ------------------------------------------------------------------------ configs/prime


def test_prime_configs_are_rendered_from_configs_eval():
    assert prime_configs.main(["--check"]) == 0, "run `make configs`"
    assert all(prime_configs.target(p).is_file() for p in SOURCES)


def test_a_source_key_without_a_mapping_is_refused(tmp_path):
    path = tmp_path / "x.toml"
    for text, message in (
        ('max_concurrent = 4\n[taskset]\nid = "medhallu"\n', "keys ['max_concurrent'] have no mapping"),
        ('[taskset]\nid = "medhallu"\n[timeout]\nsetup = 9\n', "[timeout] keys ['setup'] have no mapping"),
        ('[taskset]\nsubset = "all"\n', "[taskset] id is missing"),
    ):
        path.write_text(text)
        with pytest.raises(prime_configs.BadSource, match=re.escape(message)):
            prime_configs.render(path)


def test_neither_format_serves_both_loaders(hub, tmp_path):
    """Why configs/prime/ exists: prime's hosted loader refuses a configs/eval file (no
    `[[eval]]` table) and, given one, our `[timeout]` (tests/test_configs.py shows `eval @`
    refusing an `[[eval]]` table)."""
    source = SOURCES[0].read_text()
    result = prime("eval", "run", str(SOURCES[0]), "--hosted", "-m", MODEL)
    assert (
        result.exit_code == 1 and "Config file must contain at least one" in result.output
    )  # rich drops "[[eval]]"
    both = tmp_path / "both.toml"
    # rollouts_per_example, which eval also takes (for num_rollouts), and an [[eval]] table:
    # the [timeout] table remains, and prime refuses it.
    both.write_text(
        source.replace("num_rollouts", "rollouts_per_example").replace(
            "[taskset]", '[[eval]]\nenv_id = "med-halt"\n\n[taskset]', 1
        )
    )
    result = prime("eval", "run", str(both), "--hosted", "-m", MODEL)
    assert result.exit_code == 1 and "hosted eval config does not support: `timeout`" in result.output
    assert hub.created == []


@pytest.fixture
def resolves_to_owner(hub: Hub, monkeypatch: pytest.MonkeyPatch) -> Hub:
    """Hosted runs of a bare environment id resolve to OWNER's copy (as after a push)."""
    import prime_cli.commands.evals as eval_commands

    def resolve(environment: str, **kwargs: Any) -> tuple[str, str]:
        hub.resolved.append(environment)
        return f"{OWNER}/{environment}", f"env-{environment}"

    monkeypatch.setattr(eval_commands, "_resolve_hosted_environment", resolve)
    return hub


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_prime_and_vf_eval_read_the_setting_eval_reads(source, resolves_to_owner):
    """configs/prime/X.toml, read by prime's hosted path and by vf-eval's loader, is the
    setting configs/eval/X.toml gives `eval @` (tests/test_configs.py checks that side)."""
    from verifiers.utils.eval_utils import load_toml_config

    env_id, options, sampling, rollouts = paper_setting(source)
    target = prime_configs.target(source)
    result = prime("eval", "run", str(target), "--hosted", "-m", MODEL)
    assert result.exit_code == 0, result.output
    (created,) = resolves_to_owner.created
    assert resolves_to_owner.resolved == [env_id]
    assert created["environment_ids"] == [f"env-{env_id}"] and created["model"] == MODEL
    assert created["config"] == {
        "num_examples": -1,  # every task
        "rollouts_per_example": rollouts,
        "allow_sandbox_access": True,
        "allow_instances_access": False,
        "allow_tunnel_access": True,
        **({"env_args": options} if options else {}),  # prime sends no empty table
        "sampling_args": sampling,
    }
    valid_options(env_id, options)

    (vf,) = load_toml_config(target)
    assert vf["env_id"] == env_id and vf.get("env_args", {}) == options and vf["sampling_args"] == sampling
    assert vf["num_examples"] == -1 and vf["rollouts_per_example"] == rollouts


# ----------------------------------------------------------------------- prime env push


def package_files(env: Environment) -> set[str]:
    """The files of an environment's import package on disk, as paths inside the package."""
    module = env.package_dir
    return {
        p.relative_to(module.parent).as_posix()
        for p in module.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }


def wheel_contents(data: bytes) -> tuple[set[str], dict[str, str]]:
    """(package files, dist-info files by name) of a wheel."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = set(archive.namelist())
        info = {n.split("/", 1)[1]: archive.read(n).decode() for n in names if ".dist-info/" in n}
    return {n for n in names if ".dist-info/" not in n}, info


@pytest.mark.slow(reason="builds each environment's wheel with prime's own build step")
@pytest.mark.parametrize("env", ENVIRONMENTS, ids=lambda env: env.env_id)
def test_push_builds_a_v1_package_and_a_hosted_run_finds_it(env, hub, tmp_path, monkeypatch):
    """`prime env push` on a copy of the environment (it writes dist/ and .prime/ there), the
    platform replaced by `Hub`; then, from that tree, a hosted run of one of its paper settings
    (configs/prime/, a bare environment id) resolves through the metadata the push wrote."""
    work = tmp_path / "checkout"
    folder = env.package
    env_dir = work / "environments" / env.folder.name
    shutil.copytree(
        env.folder,
        env_dir,
        ignore=shutil.ignore_patterns("__pycache__", "dist", ".prime"),
    )
    project = tomllib.loads((env_dir / "pyproject.toml").read_text())["project"]
    name, version = project["name"], project["version"]

    result = prime("env", "push", "--path", str(env_dir), "--visibility", "PUBLIC")
    assert result.exit_code == 0, result.output
    assert "Publishing as verifiers v1 (from the verifiers requirement)" in result.output
    assert hub.posted("/environmentshub/resolve") == {"name": name, "visibility": "PUBLIC"}
    wheel = hub.posted(f"/environmentshub/env-{name}/wheels")
    assert wheel["runtime_hint"] == "VERIFIERS_V1"  # what the Hub lists it as
    assert wheel["filename"] == f"{folder}-{version}-py3-none-any.whl"
    assert wheel["semantic_version"] == version and wheel["metadata"]["tags"] == project["tags"]

    # The wheel: every file of the package, its entry point, and the requirements the Hub's
    # installer resolves on PyPI.
    data = hub.uploads["https://upload.invalid/wheel"]
    assert hashlib.sha256(data).hexdigest() == wheel["sha256"]
    files, info = wheel_contents(data)
    assert files == package_files(env)
    assert f"[medhal.environments]\n{name} = {folder}.report:REPORT" in info["entry_points.txt"]
    metadata = Parser().parsestr(info["METADATA"])
    requires = sorted(metadata.get_all("Requires-Dist"))
    assert (
        requires
        == sorted(wheel["metadata"]["requires_dist"])
        == sorted(str(Requirement(r)) for r in project["dependencies"])
    )
    assert "LICENSE" in (metadata.get_all("License-File") or [])

    # The source archive (what `prime env pull` unpacks): README, pyproject and every folder
    # (the package; a test environment's configs/ too); a top-level LICENSE, CHANGELOG.md or
    # corpus is not among prime's patterns. It still builds the same package (only the licence
    # file is then missing from the wheel).
    with tarfile.open(fileobj=io.BytesIO(hub.uploads["https://upload.invalid/source"])) as archive:
        source_files = {m.name for m in archive.getmembers() if m.isfile()}
        unpacked = tmp_path / "pulled"
        archive.extractall(unpacked, filter="data")
    in_folders = {
        p.relative_to(env.folder).as_posix()
        for p in env.folder.rglob("*")
        if p.is_file() and p.parent != env.folder and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }
    assert package_files(env) <= in_folders
    assert source_files == {"README.md", "pyproject.toml", *in_folders}
    subprocess.run(
        ["uv", "build", "--wheel", "--quiet", "--out-dir", "dist"], cwd=unpacked, check=True, timeout=300
    )
    (rebuilt,) = (unpacked / "dist").glob("*.whl")
    assert wheel_contents(rebuilt.read_bytes())[0] == files

    recorded = json.loads((env_dir / ".prime" / ".env-metadata.json").read_text())
    assert (recorded["owner"], recorded["name"], recorded["version"]) == (OWNER, name, version)

    setting = next(p for p in SOURCES if paper_setting(p)[0] == name)
    monkeypatch.chdir(work)
    result = prime("eval", "run", str(prime_configs.target(setting)), "--hosted", "-m", MODEL)
    assert result.exit_code == 0, result.output
    assert f"Using hosted environment {OWNER}/{name}@latest" in result.output
    (created,) = hub.created
    assert created["environment_ids"] == [f"env-{name}"]
    assert created["config"].get("env_args", {}) == paper_setting(setting)[1]


# --------------------------------------------------------------------- README commands


def readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def shell_commands(section: str, program: str) -> list[list[str]]:
    """The commands in the section's fenced blocks that start with `program`, line
    continuations joined and comments dropped, split as a shell would."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", section, flags=re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words[: len(program.split())] == program.split():
                commands.append(words)
    return commands


def test_readme_hosted_commands_send_what_they_say(hub, tmp_path, monkeypatch):
    """Each `prime eval run ... --hosted` of the README, run with the platform replaced (every
    environment published by OWNER, and pushed from a checkout in the working directory, as
    `prime env push` records it): a config sends its paper setting; a slug with `-a` requests
    every task once, with options the environment accepts and the sampling of a paper setting;
    and the output is what the README says a run reports back."""
    monkeypatch.chdir(tmp_path)
    for source in SOURCES:
        env_id = paper_setting(source)[0]
        hub.pushed[f"{OWNER}/{env_id}"] = "0.2.0"
        metadata = tmp_path / "environments" / env_id.replace("-", "_") / ".prime" / ".env-metadata.json"
        metadata.parent.mkdir(parents=True, exist_ok=True)
        metadata.write_text(json.dumps({"owner": OWNER, "name": env_id, "version": "0.2.0"}))
    section = readme_section("Run on Prime")
    commands = [c for c in shell_commands(section, "prime eval run") if "--hosted" in c]
    by_env: dict[str, dict[str, Any]] = {}
    configs = 0
    for command in commands:
        words = [w.replace("<owner>", OWNER).replace("<model>", MODEL) for w in command]
        target = words[3]
        if target.endswith(".toml"):
            words[3] = str(ROOT / target)
        hub.created.clear()
        result = prime(*words[1:])
        assert result.exit_code == 0, (words, result.output)
        (created,) = hub.created
        assert created["model"] == MODEL
        config = created["config"]
        if target.endswith(".toml"):
            env_id, options, sampling, _ = paper_setting(ROOT / "configs" / "eval" / Path(target).name)
            assert created["environment_ids"] == [f"env-{env_id}"]
            assert (config["env_args"], config["sampling_args"]) == (options, sampling)
            configs += 1
            continue
        env_id = target.split("/")[-1]
        assert config["num_examples"] == -1 and config["rollouts_per_example"] == 1, words
        valid_options(env_id, config["env_args"])
        by_env[env_id] = config
        for line in (
            "✓ Hosted evaluation started",
            f"Environment: {OWNER}/{env_id}",
            "Evaluation ID: eval-1",
        ):
            assert line in result.output, result.output
        assert (
            "prime eval logs eval-1 -f" in result.output and "/dashboard/evaluations/eval-1" in result.output
        )
    assert configs >= 1
    assert set(by_env) == {env.env_id for env in ENVIRONMENTS if env.published}
    # Every option is written out, but those the README says do not belong in a hosted run.
    # (`task` only where the task has options of its own, e.g. Med-HALT's wrong_reward.)
    from verifiers.v1 import TaskConfig
    from verifiers.v1.loaders import taskset_config_type

    for env_id, config in by_env.items():
        fields = taskset_config_type(env_id).model_fields
        task_options = set(fields["task"].annotation.model_fields) - set(TaskConfig.model_fields)
        options = set(fields) - {
            "id",
            "dataset_path",
            "shard",
            "revision",
            *([] if task_options else ["task"]),
        }
        assert set(config["env_args"]) == options, env_id
        assert set(config["env_args"].get("task", {})) == task_options, env_id
    # Each example is a paper setting: its options and sampling are those of a configs/eval file.
    settings = {paper_setting(p)[0]: [] for p in SOURCES}
    for p in SOURCES:
        env_id, options, sampling, _ = paper_setting(p)
        settings[env_id].append((options, sampling))
    for env_id, config in by_env.items():
        assert any(
            options.items() <= config["env_args"].items() and config["sampling_args"] == sampling
            for options, sampling in settings[env_id]
        ), (env_id, config)
