"""Every environment keeps the collection's contract (`medhal.kit.contract`).

One suite for every environment this finds, in `environments/` and in `tests/environments/`
(the made-up ones, staged by tests/conftest.py as if installed): its files, modules and
declaration block; its one entry point, registered and naming a report spec of its own id;
its exports; its demo rows, which load, and whose gold and wrong replies earn the top and
bottom of the reward under every reading convention, through `score` and through the task;
its paper settings, valid options of its own; its published figures; its labelled corpus; and
a demo run end to end: `eval` against a scripted endpoint, then `medhal report`. A new
environment is checked by all of it without a line here naming it.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from medhal.kit import contract
from medhal.kit.contract import Environment
from medhal.kit.outcomes import CONVENTIONS
from tests.running import eval_main, medhal_main
from tests.scripted_endpoint import ScriptedEndpoint, last_user_text

ROOT = Path(__file__).resolve().parents[1]
ENVIRONMENTS = contract.environments(ROOT, tests=True)
DEMO_TASKS = 3
"""Demo tasks each end-to-end run covers (gold, wrong, gold)."""


def ids(env: Environment) -> str:
    return env.env_id


every_environment = pytest.mark.parametrize("env", ENVIRONMENTS, ids=ids)


def module(env: Environment, name: str) -> Any:
    return importlib.import_module(f"{env.package}.{name}")


def demo_options(env: Environment) -> dict[str, Any]:
    """The demo rows, with the demo prompts where the environment has a `prompts` option."""
    from medhal.kit.lines import taskset_config_type

    options = dict(module(env, "benchmark").DEMO_OPTIONS)
    if "prompts" in taskset_config_type(env.env_id).model_fields:
        options["prompts"] = "demo"
    return options


def demo_tasks(env: Environment, **options: Any) -> list[Any]:
    from medhal.kit.lines import select_tasks, taskset_class, taskset_config_type

    config = taskset_config_type(env.env_id).model_validate(
        {"id": env.env_id, **demo_options(env), **options}
    )
    return select_tasks(taskset_class(env.env_id)(config))


# ------------------------------------------------------------------------------ files


def test_both_places_hold_environments():
    """The collection has environments, and so does tests/environments/ (the proof that an
    environment is its folder): a suite that found none would pass on nothing."""
    assert any(env.published for env in ENVIRONMENTS)
    assert any(not env.published for env in ENVIRONMENTS)
    assert len({env.env_id for env in ENVIRONMENTS}) == len(ENVIRONMENTS)


@every_environment
def test_files_modules_and_declarations(env):
    assert contract.problems(env, ROOT) == []


def test_the_checks_find_what_a_folder_lacks(tmp_path):
    """A copy of an environment with a module, a declaration, an export, a README section and
    its corpus missing, and a wrong entry point, shows each."""
    import shutil

    source = next(env for env in ENVIRONMENTS if not env.published)
    folder = tmp_path / contract.TEST_ENVIRONMENTS_DIR / source.folder.name
    shutil.copytree(source.folder, folder)
    shutil.copy(ROOT / "LICENSE", tmp_path / "LICENSE")
    package = folder / source.package
    (package / "prompts.py").unlink()
    benchmark = (package / "benchmark.py").read_text()
    (package / "benchmark.py").write_text(benchmark.replace("FULL_SIZE =", "SIZE ="))
    init = (package / "__init__.py").read_text()
    (package / "__init__.py").write_text(init.replace('"DEMO_OPTIONS",', ""))
    readme = (folder / "README.md").read_text()
    (folder / "README.md").write_text(readme.replace("## Validation", "## Checks"))
    (folder / contract.CORPUS).unlink()
    pyproject = (folder / "pyproject.toml").read_text()
    (folder / "pyproject.toml").write_text(pyproject.replace(".report:REPORT", ".taskset:REPORT"))
    env = contract.read_environment(folder, tmp_path)
    found = contract.problems(env, tmp_path)
    expected = [
        "entry point is",
        "prompts.py: missing",
        "does not define FULL_SIZE",
        "does not list DEMO_OPTIONS",
    ]
    expected += ["its sections are", "the labelled reply corpus"]
    assert len(found) == len(expected), found
    for problem, text in zip(found, expected, strict=True):
        assert text in problem, (problem, text)


@every_environment
def test_corpus_is_labelled_for_every_convention(env):
    lines = [line for line in env.corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    cases = [json.loads(line) for line in lines]
    assert len(cases) >= 12, "a corpus of a dozen replies at least"
    for case in cases:
        assert set(contract.CORPUS_FIELDS) <= set(case), case
        assert set(case["expected"]) == set(CONVENTIONS), case["id"]
    assert len({case["id"] for case in cases}) == len(cases)
    for convention in ("authors", "strict"):
        assert any(c["expected"][convention] != c["expected"]["medhal"] for c in cases), convention


@every_environment
def test_paper_settings_are_options_of_its_own(env):
    from medhal.kit.lines import taskset_config_type

    for path in env.settings():
        declared = tomllib.loads(path.read_text(encoding="utf-8"))
        taskset_config_type(env.env_id).model_validate(declared["taskset"])


# ------------------------------------------------------------------------------ imports


@every_environment
def test_registered_under_its_id(env):
    """The entry point is installed (or staged) and names a report spec of this id, which is
    the declaration block's ENV_ID; the registry finds the package by it."""
    from medhal.reports.registry import installed, package, report_spec

    assert env.env_id in installed()
    spec = report_spec(env.env_id)
    assert spec.benchmark == env.env_id == module(env, "benchmark").ENV_ID
    assert package(env.env_id) == env.package
    assert spec.published == module(env, "benchmark").PUBLISHED


@every_environment
def test_exports_one_taskset_and_the_v0_face(env):
    import verifiers.v1 as vf

    package = importlib.import_module(env.package)
    exported = {name: getattr(package, name) for name in package.__all__}
    tasksets = [v for v in exported.values() if isinstance(v, type) and issubclass(v, vf.Taskset)]
    assert len(tasksets) == 1, tasksets
    assert callable(exported["load_environment"])
    assert exported["DEMO_OPTIONS"] == module(env, "benchmark").DEMO_OPTIONS


@every_environment
def test_declarations_hold(env):
    from medhal.kit.published import Published

    benchmark = module(env, "benchmark")
    assert isinstance(benchmark.FULL_SIZE, int) and benchmark.FULL_SIZE > 0
    assert Path(benchmark.EVAL_FINGERPRINTS) == env.package_dir / "eval_fingerprints.json"
    assert all(isinstance(p, Published) for p in benchmark.PUBLISHED)
    assert Path(benchmark.DEMO_OPTIONS["dataset_path"]).resolve().is_relative_to(env.package_dir.resolve())
    readers = module(env, "replies").READERS
    assert tuple(readers) == CONVENTIONS


@every_environment
def test_demo_gold_and_wrong_replies_under_every_convention(env):
    """Every demo item: its gold reply is right and its wrong reply wrong, read the same way
    under every convention, through `score` and through the task's own rubric."""
    from medhal.kit.outcomes import CORRECT, READINGS, correct_key, parsed_key
    from medhal.kit.task import score_reply

    scoring = module(env, "scoring")
    tasks = demo_tasks(env)
    assert len(tasks) >= DEMO_TASKS
    for task in tasks:
        for reply, right in ((scoring.gold_reply(task.data), 1.0), (scoring.wrong_reply(task.data), 0.0)):
            scored = scoring.score(task.data, reply)
            assert set(scored.info[READINGS]) == set(CONVENTIONS)
            for convention in CONVENTIONS:
                assert scored.metrics[correct_key(convention)] == right, (task.data.idx, convention, reply)
                assert scored.metrics[parsed_key(convention)] == 1.0, (task.data.idx, convention, reply)
            trace = asyncio.run(score_reply(task, reply))
            assert trace.metrics[CORRECT] == right
        assert asyncio.run(task.validate()), task.data.idx


# ------------------------------------------------------------------------------ a demo run


@every_environment
def test_demo_run_end_to_end(env, tmp_path, monkeypatch):
    """`eval <id>` on the first demo tasks against a scripted endpoint (gold, wrong, gold, by
    prompt), then `medhal report`: one trace per task, the rewards the replies earn, and a
    complete report of the run."""
    from medhal.kit.task import prompt_messages

    scoring = module(env, "scoring")
    tasks = demo_tasks(env)[:DEMO_TASKS]
    replies = {}
    for position, task in enumerate(tasks):
        make = scoring.gold_reply if position % 2 == 0 else scoring.wrong_reply
        replies[str(prompt_messages(task.data)[-1].content)] = make(task.data)
    assert len(replies) == len(tasks), "two demo tasks with one prompt"
    shared = os.environ.get("MEDHAL_SHARED_DATA")
    if shared:
        monkeypatch.setenv("MEDHAL_ASSETS_DIR", shared)
    args = []
    for key, value in demo_options(env).items():
        args += [f"--taskset.{key}", value if isinstance(value, str) else json.dumps(value)]
    with ScriptedEndpoint(lambda body, _n: replies[last_user_text(body)]) as endpoint:
        out = tmp_path / "run"
        proc = eval_main(
            env.env_id,
            *("--client.base-url", endpoint.base_url, "--no-push", "--no-rich", "-m", "scripted"),
            *("-o", str(out), "-n", str(DEMO_TASKS), *args),
        )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [json.loads(line) for line in (out / "traces.jsonl").read_text().splitlines() if line.strip()]
    assert len(rows) == DEMO_TASKS and not any(row.get("errors") for row in rows)
    report = medhal_main("report", str(out), "--no-plots")
    assert report.returncode == 0, report.stderr[-3000:]
    figures = json.loads((out / "report.json").read_text())
    assert figures["n"] == DEMO_TASKS and figures["n_errors"] == 0
    assert figures["benchmark"] == env.env_id


@every_environment
def test_the_release_check_finds_its_sources_whole(env):
    """`scripts/release_check.py`'s rules for a package's own files (metadata, changelog, the
    verifiers and medhal ranges, the one entry point, the licence), for every environment."""
    from tests.test_release import rc

    pkgs = rc.packages([] if env.published else [env.folder])
    library = pkgs[0]
    (package,) = [p for p in pkgs if p.directory == env.folder]
    assert rc.source_problems(package, library.version) == []


# ------------------------------------------------------------------------------ listings
#
# What cannot be derived from the folders, each checked against the contract so that an
# environment left out fails here, naming the file, instead of going untested or unlisted.
# Test environments belong to none of these: they are never installed, published or cited.

COLLECTION = [env for env in ENVIRONMENTS if env.published]


def test_the_workspace_installs_every_environment():
    """uv installs a workspace member (`environments/*`, a glob) only as a dependency, and a
    member used as a dependency needs its `workspace = true` source: both are TOML tables, which
    cannot glob."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["tool"]["uv"]["workspace"]["members"] == [f"{contract.ENVIRONMENTS_DIR}/*"]
    names = {env.name for env in COLLECTION}
    sources = project["tool"]["uv"]["sources"]
    # medhal's own source sits beside them: members inherit the root's sources, so an
    # environment's pyproject names none and its folder installs alone (the Hub's check).
    assert {name for name, source in sources.items() if source == {"workspace": True}} == names | {
        "medhal"
    }, "pyproject.toml [tool.uv.sources]: one `<name> = { workspace = true }` per environment, and medhal's"
    assert names <= set(project["dependency-groups"]["dev"]), "pyproject.toml [dependency-groups] dev"


COMPAT_PROJECTS = sorted((ROOT / "compat").glob("*/pyproject.toml"))


def test_there_is_a_project_per_other_verifiers_line():
    assert [p.parent.name for p in COMPAT_PROJECTS] == [
        "prime-rl",
        "verifiers03",
        "verifiers030",
        "verifiers04",
    ]


@pytest.mark.parametrize("path", COMPAT_PROJECTS, ids=lambda p: p.parent.name)
def test_each_verifiers_line_project_installs_every_environment(path):
    """Each compat/<line> project builds each environment from its folder: a TOML list and
    table again."""
    project = tomllib.loads(path.read_text(encoding="utf-8"))
    where = path.relative_to(ROOT).as_posix()
    assert {env.name for env in COLLECTION} <= set(project["project"]["dependencies"]), where
    sources = project["tool"]["uv"]["sources"]
    for env in COLLECTION:
        assert sources.get(env.name) == {
            "path": f"../../{contract.ENVIRONMENTS_DIR}/{env.folder.name}",
            "editable": False,
        }, f"{where} [tool.uv.sources] {env.name}"


def test_mutation_testing_covers_every_environment():
    """mutmut reads [tool.mutmut] from pyproject.toml (no globs): each environment's package is a
    source, its reading, scoring and report modules are mutated, and its tests run."""
    mutmut = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mutmut"]
    assert mutmut["source_paths"][0] == "medhal"
    assert sorted(mutmut["source_paths"][1:]) == sorted(env.package for env in COLLECTION)
    for env in COLLECTION:
        for name in ("replies", "scoring", "report"):
            assert f"{env.package}/{name}.py" in mutmut["only_mutate"], (
                f"[tool.mutmut] only_mutate {env.package}"
            )
        assert f"tests/{env.folder.name}" in mutmut["pytest_add_cli_args_test_selection"]


def test_the_readme_table_lists_every_environment():
    """The README's table of environments (the first table): one row per environment, linking
    its README and naming its id."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("| environment |")
    rows = [line for line in text[start:].splitlines()[2:] if line.startswith("|")]
    rows = rows[: next((i for i, r in enumerate(rows) if not r.startswith("| [")), len(rows))]
    listed = {}
    for row in rows:
        link = row.split("|")[1].strip()
        listed[link[link.index("[`") + 2 : link.index("`]")]] = link[link.index("](") + 2 : link.index(")")]
    assert listed == {
        env.env_id: f"{contract.ENVIRONMENTS_DIR}/{env.folder.name}/README.md" for env in COLLECTION
    }


def test_citation_cff_cites_every_environments_paper():
    """CITATION.cff lists, under references, the paper each environment README cites."""
    import yaml

    references = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))["references"]
    titles = {reference["title"] for reference in references}
    for env in COLLECTION:
        text = (env.folder / "README.md").read_text(encoding="utf-8")
        citation = text[text.index("\n## Citation\n") :]
        cited = re.search(r"^\s*title\s*=\s*\{(.+?)\},?\s*$", citation, re.MULTILINE)
        assert cited is not None, f"{env.folder / 'README.md'}: no BibTeX title under Citation"
        assert cited.group(1) in titles, f"CITATION.cff: no reference titled {cited.group(1)!r}"


# ------------------------------------------------------------------------------ bench/


def test_the_bench_scripts_find_every_installed_environment(monkeypatch):
    """bench/'s inputs, hostile-reply readers and reward-audit settings come from the installed
    environments, the staged test environments among them; each works on a hostile reply."""
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    import adversarial_replies
    import data
    import reward_audit

    from medhal.reports.registry import installed

    assert set(data.BENCHES) == set(installed())
    readers = adversarial_replies.benchmarks()
    audited = {setting.env_id for setting in reward_audit.demo_settings()}
    for env in ENVIRONMENTS:
        assert env.env_id in readers and env.env_id in audited
        for reader in readers[env.env_id].values():
            reader("{" * 10_000)
        bench = data.BENCHES[env.env_id]
        assert bench.full_size == module(env, "benchmark").FULL_SIZE


@pytest.mark.slow(reason="a bench script end to end in a new process, on every test environment")
def test_a_bench_script_runs_a_test_environment(tmp_path):
    import subprocess
    import sys

    made_up = [env for env in ENVIRONMENTS if not env.published]
    args = [arg for env in made_up for arg in ("--bench", env.env_id)]
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "tasks_and_scoring.py"),
            "--quick",
            "--out",
            str(tmp_path),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    for env in made_up:
        assert f"{env.env_id}: parse+grade" in proc.stdout
