"""A tiny Med-HALT-shaped sample for demos and smoke runs.

Every row in this folder was invented and written by medhal for the demo, in the exact
upstream schemas (one `<config>.csv` per test set, three rows each); none comes from
Med-HALT, and scores on it mean nothing. The prompts are still the authors' pinned
assets, so a demo run needs them (downloaded, or from MEDHAL_ASSETS_DIR).
"""

from pathlib import Path

DEMO_DIR = Path(__file__).parent
DEMO_OPTIONS = {"subset": "all", "dataset_path": str(DEMO_DIR), "num_shots": 2, "shot_seed": 0}
"""Taskset options for a demo run over all seven sets (21 items)."""
