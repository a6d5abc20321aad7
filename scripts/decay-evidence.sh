#!/usr/bin/env bash
# The committed runs in one results store (nightly: evidence/fleet-runs and the untouched runs; faults: evidence/decay-faults
# and the busy-GPU runs; controls: the fault matrix's legitimate setups), then what the history flags
# (build.py results judge). docs/decay.md quotes its output. Usage: scripts/decay-evidence.sh STORE
set -euo pipefail
S="${1:?usage: scripts/decay-evidence.sh STORE (a new folder)}"
B=(.venv/bin/python build.py)
"${B[@]}" results ingest evidence/reports/h200/results.json evidence/fleet-runs/*/*.json evidence/fault-coverage/h100/runs/untouched.json evidence/fault-coverage/h200/runs/untouched.json evidence/gpu-sessions/h200-2026-12-04/conformance-results.json evidence/gpu-sessions/h200-2026-12-04/conformance-results-run1.json evidence/gpu-sessions/h200-2026-12-04-regrouped/conformance-results.json evidence/gpu-sessions/h200-2026-12-04-headers/results.json --store "$S" >/dev/null
# the image's stack carried to a bare host (evidence/shipped-stack): a history of its own, its fault runs apart
"${B[@]}" results ingest evidence/shipped-stack/*/untouched*.json evidence/fault-coverage/h100-shipped/runs/untouched.json --store "$S" >/dev/null
for f in evidence/shipped-stack/*/launch-blocking.json evidence/shipped-stack/*/cublas-workspace-0.json; do
  "${B[@]}" results ingest "$f" --store "$S" --fault "$(basename "$f" .json)" >/dev/null
done
for f in evidence/decay-faults/*/*.json; do n=$(basename "$f" .json); "${B[@]}" results ingest "$f" --store "$S" --fault "$n" >/dev/null; done
for c in h100 h200; do "${B[@]}" results ingest evidence/fault-coverage/$c/runs/busy-gpu.json --store "$S" --fault busy-gpu-gemm-only >/dev/null; done
# a control of round two ran its timed checks apart (CASE.timed.json): that run holds the numbers the history judges
for c in h100 h200; do
  for n in any-uid caching-allocator-off module-loading-eager deterministic-algorithms expandable-segments cudnn-benchmark-on; do
    f=evidence/fault-coverage/$c/runs/$n.timed.json
    [ -f "$f" ] || f=evidence/fault-coverage/$c/runs/$n.json
    [ -f "$f" ] && "${B[@]}" results ingest "$f" --store "$S" --control $n >/dev/null
  done
done
"${B[@]}" results judge --store "$S" --noise
