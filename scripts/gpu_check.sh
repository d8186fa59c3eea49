#!/usr/bin/env bash
# GPU acceptance check for the vLLM backend: serve a small instruct model with the real vLLM,
# run every paper setting of each environment (configs/eval/) on a slice against it with
# `medhal reproduce`, and check the reports. The CPU tests (tests/medhal/test_serve_vllm.py)
# cover the same path with a fake `vllm`; this is the one check that runs the real one.
#
# Needs: an NVIDIA GPU, vLLM >= 0.10.0 (`uv tool install 'vllm>=0.10.0'`, or VLLM=/path/to/vllm),
# and the network (the model and the pinned datasets from the Hugging Face Hub, the pinned prompt
# files), or all of them already cached (`medhal fetch`).
# Not part of `make test` (it refuses to run without a GPU), and CI never runs it.
#
#   scripts/gpu_check.sh                                   # Qwen2.5-0.5B-Instruct, 200 items a setting
#   ENVS=medfact-bench MODEL=Qwen/Qwen2.5-3B-Instruct ITEMS=14274 scripts/gpu_check.sh   # one paper setting whole
#
# Settings (environment): ENVS (environment ids, default every installed environment), MODEL,
# ITEMS (first N tasks of each setting in load order: not a paper-comparable number), OUT
# (default outputs/gpu_check), VLLM, MAX_ERROR_RATE (default 0.02), and VLLM_FLAGS (more
# `medhal reproduce` server flags, e.g. "--tensor-parallel-size 2"). Exits 0 when every item of
# every setting came back scored within the error budget.
set -euo pipefail

MODEL="${MODEL:-Qwen/Qwen2.5-0.5B-Instruct}"
ENVS="${ENVS:-}"
ITEMS="${ITEMS:-200}"
OUT="${OUT:-outputs/gpu_check}"
VLLM="${VLLM:-vllm}"
MAX_ERROR_RATE="${MAX_ERROR_RATE:-0.02}"
VLLM_FLAGS="${VLLM_FLAGS:-}"

cd "$(dirname "${BASH_SOURCE[0]}")/.."

fail() { echo "gpu_check: $*" >&2; exit 2; }

if [ "${CUDA_VISIBLE_DEVICES-unset}" = "" ] || [ "${CUDA_VISIBLE_DEVICES-unset}" = "-1" ]; then
    fail "CUDA_VISIBLE_DEVICES='${CUDA_VISIBLE_DEVICES}' hides every GPU; this check runs only on a GPU machine"
fi
command -v nvidia-smi >/dev/null 2>&1 || fail "no GPU: nvidia-smi is not on PATH; this check runs only on a GPU machine"
gpus="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)"
[ "${gpus:-0}" -ge 1 ] || fail "no GPU: \`nvidia-smi -L\` lists none; this check runs only on a GPU machine"
command -v "$VLLM" >/dev/null 2>&1 || fail "vllm not found: install it with \`uv tool install 'vllm>=0.10.0'\` or set VLLM=/path/to/vllm"
command -v uv >/dev/null 2>&1 || fail "uv not found: \`python3 -m pip install uv\` (or run \`make\` once)"

[ -n "$ENVS" ] || ENVS="$(uv run --locked python -c 'from medhal.reports.registry import installed; print(*installed())')"
echo "gpu_check: ${gpus} GPU(s); vLLM $("$VLLM" --version 2>/dev/null | tail -n 1); model ${MODEL}; ${ENVS}; ${ITEMS} items a setting -> ${OUT}"
rm -rf "$OUT"
for env in $ENVS; do
    # shellcheck disable=SC2086  # VLLM_FLAGS is a list of flags
    uv run --locked medhal reproduce "$env" --backend vllm --vllm "$VLLM" --model "$MODEL" \
        -n "$ITEMS" --max-model-len 8192 --max-error-rate "$MAX_ERROR_RATE" -o "$OUT/$env" $VLLM_FLAGS
done

uv run --locked python - "$OUT" "$ITEMS" "$MODEL" "$MAX_ERROR_RATE" <<'EOF'
"""Every setting's run is complete: one trace per item, all from the served model, errors within budget."""
import json
import sys
from pathlib import Path

out, items, model, max_error_rate = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
problems = []
runs = sorted(p.parent for p in out.glob("*/*/traces.jsonl"))
if not runs:
    problems.append(f"no run under {out}")
for run in runs:
    traces = [json.loads(line) for line in (run / "traces.jsonl").read_text().splitlines() if line.strip()]
    idx = sorted(t["task"]["data"]["idx"] for t in traces)
    report = json.loads((run / "report.json").read_text())
    if len(set(idx)) != len(idx) or len(idx) != min(items, report["n"]) or not report.get("complete"):
        problems.append(f"{run.name}: {len(traces)} traces, complete={report.get('complete')} (missing or repeated idx)")
    models = {t["agent"]["model"] for t in traces}
    if models != {model}:
        problems.append(f"{run.name}: traces name models {sorted(models)}, not {model!r}")
    errors = report["n_errors"] / max(report["n"], 1)
    if errors > max_error_rate:
        problems.append(f"{run.name}: error rate {errors:.3f} above {max_error_rate}")
    print(f"gpu_check: {run.name}: n={report['n']} errors={report['n_errors']} parse_rate={report.get('parse_rate')} "
          f"micro_accuracy={report.get('micro_accuracy')}; report {run / 'report.md'}")
if problems:
    sys.exit("gpu_check: FAILED: " + "; ".join(problems))
print("gpu_check: passed")
EOF
