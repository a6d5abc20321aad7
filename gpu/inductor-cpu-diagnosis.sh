#!/usr/bin/env bash
# Why the CPU Inductor probe dies on a GPU host (issue 50), round two: gpu/inductor_cpu_diagnosis.py's experiments on
# the carried shipped stack (gpu/common.sh; STACK=host for the host's torch), from the repo root:
#   OUT=/some/dir bash gpu/inductor-cpu-diagnosis.sh
# Writes $OUT/inductor-shipped.json and the generated kernel sources to $OUT/inductor-kernels/. Exit status 0.
set -u
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=gpu/common.sh
. gpu/common.sh
gpu_out ""
gpu_host "$PY"
timeout 300 "$PY" gpu/inductor_cpu_diagnosis.py "$OUT/inductor-shipped.json"
exit 0
