"""Test environments (`tests/environments/<package>/`) made findable as if installed.

A test environment is a made-up benchmark laid out as one of the collection's folders; it is
not a workspace member and never installed. `stage` makes it one for this process and every
process it starts: its folder goes on `sys.path` and `PYTHONPATH` (so `import <package>` and
`eval <id>` find it), and a temporary site folder holds a `<name>-<version>.dist-info` with its
metadata and entry point (so `importlib.metadata`, and with it medhal's registry, finds it
exactly as it finds an installed environment). Nothing in the repository is written.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

from medhal.kit.contract import ENTRY_POINT_GROUP, Environment, environments

ROOT = Path(__file__).resolve().parents[1]


def dist_info(env: Environment, site: Path) -> Path:
    """Write `env`'s installed-distribution metadata (METADATA, entry_points.txt) under `site`."""
    folder = site / f"{env.name.replace('-', '_')}-{env.version}.dist-info"
    folder.mkdir(parents=True)
    requires = "".join(f"Requires-Dist: {r}\n" for r in env.project.get("dependencies", []))
    (folder / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {env.name}\nVersion: {env.version}\n{requires}", encoding="utf-8"
    )
    (folder / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\n{env.env_id} = {env.entry_point}\n", encoding="utf-8"
    )
    return folder


def stage(envs: list[Environment]) -> list[Path]:
    """Make `envs` importable and registered here and in child processes; the paths added."""
    if not envs:
        return []
    site = Path(tempfile.mkdtemp(prefix="medhal-test-environments-"))
    atexit.register(shutil.rmtree, site, ignore_errors=True)
    for env in envs:
        dist_info(env, site)
    paths = [site, *(env.folder for env in envs)]
    for path in reversed(paths):
        sys.path.insert(0, str(path))
    inherited = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([*map(str, paths), *([inherited] if inherited else [])])
    return paths


def staged_environments() -> list[Environment]:
    """The test environments under tests/environments/."""
    return [env for env in environments(ROOT, tests=True) if not env.published]
