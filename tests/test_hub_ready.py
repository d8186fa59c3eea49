"""Each environment builds, installs and runs on its own, as the Hub will install it."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]


def test_every_environment_is_hub_ready(offline_assets):
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "check_hub_ready.py")],
        capture_output=True, text=True, timeout=1500,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    for env_id in ("medfact-bench", "med-halt", "medhallu"):
        assert any(line.startswith(f"{env_id}: wheel ") and "report and v0 load_environment OK" in line for line in lines), proc.stdout
