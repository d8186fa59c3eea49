"""Shared machinery for medhal's benchmark environments.

Nothing in this package knows about a particular benchmark: each environment under
`environments/` brings its own data, prompts, reading and scoring and a small
`ReportSpec`, and reuses the reply reader, harness, asset and dataset loaders, trace
reader, metrics and report writer defined here.
"""

from medhal.kit.provenance import package_version

__version__ = package_version("medhal")
"""The version in pyproject.toml (its one source), as installed."""
