#!/usr/bin/env bash
# Issue 12 on a GPU host, bare (python3 + torch 2.11, no Docker, no network), from the repo root:
#   OUT=/some/dir gpu/issue-12.sh
# Runs precision-check on the three examples (at their GPU size: compute-bound), the CNN at its
# CI size (small: expect "not faster"), and the transformer under torch.compile. Writes
# $OUT/precision-check-<name>.{json,txt} and prints each verdict and its numbers. About 2 minutes.
# Look for: overflow_mlp -> "fp16 overflows in `expand` at step 0 ...: use bf16 (N.Nx faster ...)";
# transformer and cnn -> a dtype with its speedup, memory saving and final-loss agreement;
# cnn-small -> "fp32: not faster (...)"; every run exits 0.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/issue-12}"
mkdir -p "$OUT"

run() {
  local name=$1
  shift
  echo
  echo "=== $name: precision-check $*"
  timeout 180 python3 -m precision_check "$@" --json "$OUT/precision-check-$name.json" 2>&1 |
    tee "$OUT/precision-check-$name.txt"
  echo "=== $name: exit ${PIPESTATUS[0]}"
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"

run transformer examples/precision_check/transformer.py:factory --dtypes fp32,tf32,fp16,bf16
run cnn examples/precision_check/cnn.py:factory
run overflow_mlp examples/precision_check/overflow_mlp.py:factory
PRECISION_CHECK_EXAMPLE_SIZE=small run cnn-small examples/precision_check/cnn.py:factory
run transformer-compile examples/precision_check/transformer.py:factory --dtypes fp32,bf16 --steps 10 --compile

echo
echo "=== verdicts and their numbers"
python3 - "$OUT" <<'PY'
import json, pathlib, sys

for path in sorted(pathlib.Path(sys.argv[1]).glob("precision-check-*.json")):
    doc = json.loads(path.read_text())
    print(f"\n{path.stem}: {doc['verdict']['headline']}")
    for dtype, run in doc["runs"].items():
        t = run["timing"] or {}
        c = run["compiled"]
        print(
            f"  {dtype}: final loss {run['final_loss']}, rel diff end {run['rel_diff_final']}, "
            f"max {run['rel_diff_max']} (step {run['rel_diff_max_step']}), non-finite {len(run['nonfinite_steps'])}, "
            f"step {t.get('median_ms')} ms, peak {run['peak_mem_mib']} MiB"
            + (f", skipped {len(run['scaler']['skipped_steps'])}, scale {run['scaler']['scale'][-1]}" if run["scaler"] else "")
            + (f", zero grads {run['zero_grads']}" if run["zero_grads"] else "")
            + (f", overflow {run['overflows'][0]}" if run["overflows"] else "")
            + (f", compiled {c['timing']['median_ms']} ms (compile {c['compile_s']:.1f} s)" if c else "")
        )
    print("  numbers:", json.dumps(doc["verdict"]["numbers"]))
PY
