"""Shared machinery for medhal's benchmark environments.

Nothing in this package knows about a particular benchmark: each environment under
`environments/` brings its own data, prompts, scoring and a small `ReportSpec`, and
reuses the harness, asset and dataset loaders, trace reader, metrics and report
writer defined here.
"""

__version__ = "0.1.0"
