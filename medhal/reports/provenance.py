"""What a report's provenance says about the run: its taskset options and the versions of the
code that scored it.

A report keeps each distinct provenance record of its traces (`report["provenance"]["data"]`):
one record for the whole run, one per group of a benchmark that loads each group from its own
file (a dict of them), several where the traces disagree (a list, with `mixed_provenance`
set). The first record that holds the field asked for answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def provenance_records(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The report's provenance records, in order, whatever shape holds them."""
    data = report.get("provenance", {}).get("data")
    if isinstance(data, dict) and ("options" in data or "code" in data):
        return [data]
    if isinstance(data, dict):
        data = [v for vs in data.values() for v in (vs if isinstance(vs, list) else [vs])]
    return [record for record in data if isinstance(record, dict)] if isinstance(data, list) else []


def run_options(report: Mapping[str, Any]) -> dict[str, Any]:
    """The taskset options of the run."""
    return next((dict(r["options"]) for r in provenance_records(report) if isinstance(r.get("options"), dict)), {})


def run_code(report: Mapping[str, Any]) -> dict[str, Any]:
    """{environment, environment_version, medhal, verifiers} of the code that scored the run
    (what `medhal.kit.provenance.code_versions` recorded on its traces)."""
    return next((dict(r["code"]) for r in provenance_records(report) if isinstance(r.get("code"), dict)), {})
