#!/usr/bin/env bash
# The whole conformance suite, untouched and under the real faults the nightly history must flag (a debugging
# setting left on, cuDNN's v8 API off, cuBLAS without a workspace, a busy GPU), on one GPU host, on the carried
# shipped stack (gpu/common.sh; STACK=host for the host's torch), from the repo root:
#   OUT=/some/dir bash gpu/decay-runs.sh [CASE...]
# CASE: untouched launch-blocking cudnn-v8-off cublas-workspace-0 busy-gpu (default: all, in that order).
# Writes $OUT/host.txt and $OUT/runs.tar.gz: CASE.json (the results file) and CASE.log per case.
# `build.py results ingest --fault CASE` stores a fault run apart from the nightly history; `build.py results
# judge` then says what the history flags. Exit status 0 (each case's own status is in its log and results file).
set -u
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=gpu/common.sh
. gpu/common.sh
gpu_out ""
work="$OUT/runs"
mkdir -p "$work"
gpu_host "$PY" | tee "$OUT/host.txt"
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(untouched launch-blocking cudnn-v8-off cublas-workspace-0 busy-gpu)

suite() {  # CASE [VAR=VALUE...]: the whole suite under those settings
  local name=$1
  shift
  local started
  started=$(date +%s)
  env "$@" timeout 300 "$PY" -m pytest conformance -p no:cacheprovider -q -W ignore::DeprecationWarning \
    --conformance-json "$work/$name.json" >"$work/$name.log" 2>&1
  echo "$name: exit $?, $(( $(date +%s) - started )) s, $(tail -n 1 "$work/$name.log")" | tee -a "$OUT/host.txt"
}

for case in "${cases[@]}"; do
  case "$case" in
    untouched) suite untouched ;;
    launch-blocking) suite launch-blocking CUDA_LAUNCH_BLOCKING=1 ;;
    cudnn-v8-off) suite cudnn-v8-off TORCH_CUDNN_V8_API_DISABLED=1 ;;
    cublas-workspace-0) suite cublas-workspace-0 CUBLAS_WORKSPACE_CONFIG=:0:0 ;;
    busy-gpu)
      script=$("$PY" -c 'from fault_coverage.injection import BUSY_GPU_SCRIPT; print(BUSY_GPU_SCRIPT)')
      "$PY" -c "$script" >"$OUT/busy.out" 2>&1 &
      busy=$!
      for _ in $(seq 120); do grep -q ready "$OUT/busy.out" && break; sleep 0.5; done
      if grep -q ready "$OUT/busy.out"; then suite busy-gpu; else echo "busy-gpu: the busy process did not start"; fi
      kill "$busy" 2>/dev/null
      wait "$busy" 2>/dev/null
      rm -f "$OUT/busy.out"
      ;;
    *) echo "decay-runs: unknown case $case" >&2; exit 2 ;;
  esac
done
tar -czf "$OUT/runs.tar.gz" -C "$work" .
rm -rf "$work"
