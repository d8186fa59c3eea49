# Two entry points for a fresh machine: `make demo` and `make test`.
# Both install uv when it is missing and let `uv run` install everything else
# (the workspace, its environments, and the dev/test tools) from uv.lock.

UV_VERSION := 0.13.9
SHARED_DATA := $(abspath ../shared/data)
export MEDHAL_SHARED_DATA ?= $(if $(wildcard $(SHARED_DATA)),$(SHARED_DATA),)
# Put uv's own binary on PATH (the stock `null` harness, used in one test, calls it).
UV_BIN := $(shell command -v uv 2>/dev/null || { python3 -m uv --version >/dev/null 2>&1 || python3 -m pip install --quiet "uv==$(UV_VERSION)" >&2; python3 -c "import uv; print(uv.find_uv_bin())"; })
export PATH := $(dir $(UV_BIN)):$(PATH)

.PHONY: test lint format demo build release-check publish fingerprints

# Linters first: a red lint fails CI as a failing test does.
test: lint
	uv run --locked pytest

# ruff (lint + format check, line length 110) everywhere; mypy strict on the shared library.
lint:
	uv run --locked ruff check .
	uv run --locked ruff format --check .
	uv run --locked mypy

format:
	uv run --locked ruff check --fix .
	uv run --locked ruff format .

demo:
	uv run --locked medhal demo

# Releases (RELEASING.md). `build`: all four packages into dist/ (MEDHAL_DIST), metadata and
# contents checked. `release-check`: that, plus each environment installed in a fresh venv from
# wheels + PyPI and run there; prints the publish commands. `publish`: publishes what the tag in
# RELEASE_TAG / GITHUB_REF_NAME names (stdlib only: no project sync on the release runner).
build:
	uv run --locked python scripts/release_check.py build

release-check:
	uv run --locked python scripts/release_check.py all

publish:
	uv run --no-project --python ">=3.11" python scripts/release_check.py publish

# Re-record tests/scoring_fingerprints.json after a version bump (RELEASING.md).
fingerprints:
	uv run --locked python -m tests.test_scoring_fingerprint --update
