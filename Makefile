# Two entry points for a fresh machine: `make demo` and `make test`.
# Both install uv when it is missing and let `uv run` install everything else
# (the workspace, its environments, and the dev/test tools) from uv.lock.

UV_VERSION := 0.13.9
SHARED_DATA := $(abspath ../shared/data)
export MEDHAL_SHARED_DATA ?= $(if $(wildcard $(SHARED_DATA)),$(SHARED_DATA),)
# Put uv's own binary on PATH (the stock `null` harness, used in one test, calls it).
UV_BIN := $(shell command -v uv 2>/dev/null || { python3 -m uv --version >/dev/null 2>&1 || python3 -m pip install --quiet "uv==$(UV_VERSION)" >&2; python3 -c "import uv; print(uv.find_uv_bin())"; })
export PATH := $(dir $(UV_BIN)):$(PATH)
# Python caches compiled modules (__pycache__) unless PYTHONDONTWRITEBYTECODE is set, as it is on
# some CI images: then every process (each xdist worker, each `eval` a test starts) compiles
# verifiers, openai and anthropic from source again (half of the 18 s `eval --help` took here),
# and pytest rewrites every test module's asserts again. The caches are ignored by git.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: test test-slow test-verifiers-0.3 test-verifiers-0.4 test-prime-rl check-prime-rl-configs lint format demo build release-check publish fingerprints configs mutants

# Linters first: a red lint fails CI as a failing test does. Then the suite on every core
# (pytest-xdist): whole modules per worker (--dist loadscope), so a module's shared fixtures (a
# scored run, an eval against a faulty endpoint) are made once; the slowest modules start first
# (SLOW_FIRST in tests/conftest.py). verifiers' `eval` runs in the test process
# (tests/running.py) except where a new process is what is tested. The property tests draw
# PROPERTY_SCALE of their examples here (derandomized: the same examples every run; still more
# than `make mutants` needs to kill the recorded mutants) and all of them in `make test-slow`.
# About 4 minutes on a quiet 2-core machine. PYTEST_ARGS: more pytest options (`make test
# PYTEST_ARGS=-x`).
PROPERTY_SCALE ?= 0.5
test: lint
	MEDHAL_PROPERTY_EXAMPLES_SCALE=$(PROPERTY_SCALE) uv run --locked pytest -n auto --dist loadscope -m "not slow" $(PYTEST_ARGS)

# The tests marked slow, each with its reason in the mark. What stays slow, and why: the release
# check itself (build every package, install each environment in a fresh venv from the wheels
# and PyPI, run it there); the demo on the real local model, which generates on the CPU; eval and
# its --resume as executables against endpoints that fail, stall and ask for retries, which must
# wait those out, and 2,000 rollouts at concurrency 64; eval --server, vf-eval and both verifiers
# lines' executables on every environment (a verifiers start-up of several seconds each);
# reproduce through a stand-in vLLM process; 1 MB hostile replies through every reader; every row
# of the full Med-HALT fake-question and IR files; each environment's wheel built by prime's build
# step; the fingerprints again in a new interpreter; eval --resume around `medhal repair`. With them, the property tests (hypothesis
# marks them) with their whole example budget. CI runs `make test` and then this.
test-slow:
	uv run --locked pytest -n auto --dist loadscope -m "slow or hypothesis" $(PYTEST_ARGS)

# The environments on the other verifiers lines, each a project of its own under compat/ (its own
# pyproject and uv.lock: one lock holds one verifiers), which installs medhal (editable) and the
# three environments built from this tree beside that verifiers from PyPI. Each runs what must agree
# on every line: the demo rows through the line's own eval command against a scripted endpoint and
# `medhal report`, compared byte for byte with tests/cross_line.json (which `make test-slow` checks
# on 0.2); the scoring fingerprints; the environments' taskset tests; the v0 face against the
# tasksets (where verifiers still has v0); the trace reader; the platform summary of a mixed
# Med-HALT run against its report; reasoning replies. A few minutes each.
# The environments are the folders under environments/ (medhal.kit.contract: folder = import
# package = distribution name with '-' for '_').
#   compat/verifiers030  verifiers 0.3.0       } `make test-verifiers-0.3`
#   compat/verifiers03   verifiers 0.3.1       }
#   compat/verifiers04   verifiers 0.4.0 (needs openai<3; no v0 API)
#   compat/prime-rl      verifiers 0.3.1.dev62 (= a60a606, what prime-rl 559b447 vendors), Python
#                        3.12 (prime-rl's): also prime-rl's own path, tests/test_prime_rl.py
ENVIRONMENTS := $(notdir $(patsubst %/,%,$(dir $(wildcard environments/*/pyproject.toml))))
LINE_TESTS := tests/test_cross_line.py tests/test_scoring_fingerprint.py tests/medhal/test_traces.py \
	tests/medhal/test_reasoning.py \
	$(wildcard $(foreach env,$(ENVIRONMENTS),tests/$(env)/test_taskset.py tests/$(env)/test_run_summary.py))
LINE_SYNC = uv sync --locked --project $(1) $(foreach env,$(ENVIRONMENTS),--reinstall-package $(subst _,-,$(env)))
LINE_PYTEST = $(1)/.venv/bin/python -m pytest -n auto --dist loadscope
# Python 3.12 for compat/prime-rl: uv finds one on PATH or among its own, or downloads it; where
# pyenv holds a 3.12 that is not its global version (this project's machines), pyenv's.
PYTHON312 := $(or $(shell command -v pyenv >/dev/null 2>&1 && pyenv prefix 3.12 2>/dev/null | sed 's|$$|/bin/python3.12|'),3.12)

test-verifiers-0.3:
	$(call LINE_SYNC,compat/verifiers030)
	$(call LINE_PYTEST,compat/verifiers030) $(LINE_TESTS) tests/medhal/test_v0_v1.py
	$(call LINE_SYNC,compat/verifiers03)
	$(call LINE_PYTEST,compat/verifiers03) $(LINE_TESTS) tests/medhal/test_v0_v1.py

test-verifiers-0.4:
	$(call LINE_SYNC,compat/verifiers04)
	$(call LINE_PYTEST,compat/verifiers04) $(LINE_TESTS) --deselect tests/medhallu/test_taskset.py::test_v0_and_v1_agree

test-prime-rl:
	$(call LINE_SYNC,compat/prime-rl) --python $(PYTHON312)
	$(call LINE_PYTEST,compat/prime-rl) $(LINE_TESTS) tests/medhal/test_v0_v1.py tests/test_prime_rl.py

# configs/rl/ loaded by prime-rl's own RLConfig: its `prime-rl-configs` package, which is not on
# PyPI, installed from a prime-rl checkout (PRIME_RL=<path>, at 559b447) into compat/prime-rl (the
# next `uv sync` there removes it again). Not part of CI, which has no prime-rl source.
check-prime-rl-configs:
	@test -n "$(PRIME_RL)" || { echo "PRIME_RL=<a prime-rl checkout> is required" >&2; exit 2; }
	$(call LINE_SYNC,compat/prime-rl) --python $(PYTHON312)
	uv pip install --python compat/prime-rl/.venv/bin/python --no-deps $(PRIME_RL)/packages/prime-rl-configs
	compat/prime-rl/.venv/bin/python scripts/check_prime_rl_configs.py

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

# Releases (RELEASING.md). `build`: every package into dist/ (MEDHAL_DIST), metadata and
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

# Render configs/prime/ (the paper settings in prime's and vf-eval's [[eval]] format) from
# configs/eval/ after changing a setting; tests/test_prime.py fails while they disagree.
configs:
	uv run --locked python scripts/prime_configs.py

# Mutation testing of the reading, scoring and report code (slow, so not part of `make test`; the
# score per module, its run time and every surviving mutant are in reports/test-quality.md).
# mutmut's settings are [tool.mutmut] in pyproject.toml. It runs in $(MUTANTS_DIR), a flat copy of
# the tree: there medhallu/, med_halt/, medfact_bench/ sit beside medhal/, so a mutated module keeps
# its import name, and PYTHONPATH puts the mutated copies first in subprocesses too (mutants/ is made
# first: Python ignores a PYTHONPATH folder missing at its start for good). A fresh copy
# every run (mutmut would keep earlier verdicts). MUTANTS_CHILDREN: parallel mutants. The
# property tests draw a fifth of their examples per mutant (tests/properties.py).
MUTANTS_DIR := build/mutmut
MUTANTS_CHILDREN ?= 2
mutants:
	rm -rf $(MUTANTS_DIR) && mkdir -p $(MUTANTS_DIR)/mutants
	cp -r medhal tests environments pyproject.toml uv.lock $(MUTANTS_DIR)/
	cp -r $(foreach env,$(ENVIRONMENTS),environments/$(env)/$(env)) $(MUTANTS_DIR)/
	cd $(MUTANTS_DIR) && PYTHONPATH=$(CURDIR)/$(MUTANTS_DIR)/mutants MEDHAL_PROPERTY_EXAMPLES_SCALE=0.2 \
		uv run --locked --project $(CURDIR) mutmut run --max-children $(MUTANTS_CHILDREN)
	cd $(MUTANTS_DIR) && uv run --locked --project $(CURDIR) mutmut results > survivors.txt
	uv run --locked python scripts/mutation_report.py --workdir $(MUTANTS_DIR)
	@echo "Report: reports/test-quality.md; survivors: $(MUTANTS_DIR)/survivors.txt; a mutant's diff: cd $(MUTANTS_DIR) && uv run --project $(CURDIR) mutmut show NAME"
