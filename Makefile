# Two entry points for a fresh machine: `make demo` and `make test`.
# Both install uv when it is missing and let `uv run` install everything else
# (the workspace, its environments, and the dev/test tools) from uv.lock.

UV_VERSION := 0.13.9
SHARED_DATA := $(abspath ../shared/data)
export MEDHAL_SHARED_DATA ?= $(if $(wildcard $(SHARED_DATA)),$(SHARED_DATA),)
# Put uv's own binary on PATH (the stock `null` harness, used in one test, calls it).
UV_BIN := $(shell command -v uv 2>/dev/null || { python3 -m uv --version >/dev/null 2>&1 || python3 -m pip install --quiet "uv==$(UV_VERSION)" >&2; python3 -c "import uv; print(uv.find_uv_bin())"; })
export PATH := $(dir $(UV_BIN)):$(PATH)

.PHONY: test demo

test:
	uv run --locked pytest

demo:
	uv run --locked medhal demo
