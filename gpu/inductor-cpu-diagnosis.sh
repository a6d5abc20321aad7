#!/usr/bin/env bash
# Why the CPU Inductor probe dies on a GPU host (issue 50): gpu/inductor_cpu_diagnosis.py's experiments on the
# carried shipped stack, then the probe on the host's own torch for comparison, from the repo root:
#   OUT=/some/dir bash gpu/inductor-cpu-diagnosis.sh
# Then the shipped stack's probe again, once the host's torch has filled the shared default cache.
# Writes $OUT/inductor-shipped.json. Exit status 0.
set -u
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=gpu/common.sh
. gpu/common.sh
gpu_out ""
gpu_host "$PY"
timeout 330 "$PY" gpu/inductor_cpu_diagnosis.py "$OUT/inductor-shipped.json"
echo "==== the host's own torch: the probe, in the default cache"
timeout 110 python3 -X faulthandler conformance/support/processes/cpu_compile_probe.py 2>&1 | tail -c 1500
echo "probe exit ${PIPESTATUS[0]}"
echo "==== the shipped stack again, now that the host's torch has filled the default cache"
find /tmp/torchinductor_root -maxdepth 1 2>&1 | head -20
timeout 110 "$PY" -X faulthandler conformance/support/processes/cpu_compile_probe.py 2>&1 | tail -c 1500
echo "probe exit ${PIPESTATUS[0]}"
exit 0
