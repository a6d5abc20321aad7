#!/usr/bin/env bash
# The whole suite, timed, and four GPU breakage cases, on a bare GPU host
# (the carried shipped stack, gpu/common.sh; STACK=host for the host's torch; no network), from the repo root:
#   OUT=/some/dir bash gpu/suite-and-breakage.sh
# (a) the full suite, all markers, timed (budget: <= 120 s wall);
# (b) four GPU breakage cases, each a short pytest run restricted with -k, printing the failing checks.
# Writes at most 7 files into $OUT: h200-results.json, h200-log.txt, break-*.json (4), breakage-summary.txt.
set -u
# shellcheck source=gpu/common.sh
. "$(dirname "$0")/common.sh"
gpu_out "$PWD/out"
PYTEST=("$PY" -m pytest -p no:cacheprovider -q -W ignore::DeprecationWarning conformance)
SUMMARY="$OUT/breakage-summary.txt"
: > "$SUMMARY"

failing() {  # print the failing checks of a results file: name, phase, message
  "$PY" - "$1" <<'PYEOF'
import json, sys
doc = json.load(open(sys.argv[1]))
print("  totals:", doc["totals"], "exit", doc["exit_status"])
for nodeid, record in doc["tests"].items():
    if record["outcome"] == "failed":
        print(f"  FAILED {nodeid} [{record['phase']}]: {(record['message'] or '')[:700]}")
PYEOF
}

echo "== (a) full suite, all markers, --require-gpu"
start=$(date +%s.%N)
timeout 400 "${PYTEST[@]}" -m "cpu or gpu or multigpu" --require-gpu --durations=20 --conformance-json "$OUT/h200-results.json" \
  > "$OUT/h200-log.txt" 2>&1
status=$?
end=$(date +%s.%N)
wall=$("$PY" -c "print(round($end - $start, 1))")
echo "full run: exit $status, wall ${wall} s (budget 120 s)" | tee -a "$OUT/h200-log.txt" "$SUMMARY"
grep -A 22 "slowest" "$OUT/h200-log.txt" | head -n 24; tail -n 3 "$OUT/h200-log.txt"
failing "$OUT/h200-results.json" | tee -a "$SUMMARY"

breakage() {  # name, extra env (KEY=VALUE ...), then -- and pytest args
  local name="$1"; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  echo "== (b) $name: env ${envs[*]} pytest $*" | tee -a "$SUMMARY"
  local t0; t0=$(date +%s)
  env "${envs[@]}" timeout 240 "${PYTEST[@]}" "$@" --conformance-json "$OUT/break-$name.json" > /dev/null 2>&1
  echo "  exit $? in $(( $(date +%s) - t0 )) s" | tee -a "$SUMMARY"
  if [ -f "$OUT/break-$name.json" ]; then failing "$OUT/break-$name.json" | tee -a "$SUMMARY"
  else echo "  NO JSON WRITTEN" | tee -a "$SUMMARY"; fi
}

# Forced TF32: fp32 "highest" runs at TF32 speed -> the fp32 upper bound, the fp16/bf16 ratios and the IEEE error band fail.
breakage tf32-override NVIDIA_TF32_OVERRIDE=1 -- -m "cpu or gpu" \
  -k "gemm_ratio or fp32_highest or fp32_ieee or dtype_verdicts or fp32_matmul_policy"
# Compile disabled: the GPU Inductor checks find no generated code.
breakage dynamo-disabled TORCHDYNAMO_DISABLE=1 -- -m gpu -k "inductor_gpu or compiled_matches_eager"
# No GPU visible, GPU required: the access check names CUDA_VISIBLE_DEVICES, the GPU checks fail instead of skipping.
breakage no-gpu CUDA_VISIBLE_DEVICES= -- -m "cpu or gpu" --require-gpu \
  -k "cuda_driver_stack or cuda_initialises or driver_supports or gemm_ratio"
# A sitecustomize that sets TF32 through the new API: a named failing policy check, a JSON, no INTERNALERROR.
SITE="$(mktemp -d)"
printf 'import torch\ntorch.backends.cuda.matmul.fp32_precision = "tf32"\n' > "$SITE/sitecustomize.py"
breakage sitecustomize-tf32 "PYTHONPATH=$SITE" -- -m "cpu or gpu" \
  -k "fp32_matmul_policy or gemm_ratio or fp32_highest or fp32_ieee"
rm -rf "$SITE"
echo "== files in $OUT"; ls -la "$OUT"
