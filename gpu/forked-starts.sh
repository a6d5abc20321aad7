#!/usr/bin/env bash
# The suite's forked starts on a GPU host (the carried shipped stack, gpu/common.sh; STACK=host for the host's torch;
# no network), from the repo root:   OUT=/some/dir bash gpu/forked-starts.sh
# (a) the unit tests of the forked starts (tests/conformance/support/processes/test_forked_starts.py):
#     must end "5 passed";
# (b) the start method the suite picks here: gloo ranks must be SPAWNED on a GPU host (a forked child
#     must never touch CUDA), NCCL ranks too: must print "gloo on this host: spawn" and "nccl: spawn";
# (c) the CPU-compile probe with its forked vector-ISA loads: must print a vec_isa (not null), no "error",
#     and vec_isa_forked_loads > 0;
# (d) the checks that use them, with the GPU ones: test_distributed (gloo and NCCL) and the compile checks,
#     --require-gpu: must end with no failure ("N passed", skips only with a named reason).
# Writes forked-starts.txt into $OUT.
set -u
# shellcheck source=gpu/common.sh
. "$(dirname "$0")/common.sh"
gpu_out "$PWD/out"
LOG="$OUT/forked-starts.txt"
: > "$LOG"

echo "== (a) unit tests" | tee -a "$LOG"
timeout 300 "$PY" -m pytest -p no:cacheprovider -q tests/conformance/support/processes/test_forked_starts.py 2>&1 | tail -n 3 | tee -a "$LOG"

echo "== (b) start method" | tee -a "$LOG"
timeout 120 "$PY" -c '
from conformance.support.processes.spawn import start_method
print("gloo on this host:", start_method("gloo", fork=True))
print("nccl:", start_method("nccl", fork=True))
' 2>&1 | tee -a "$LOG"

echo "== (c) CPU-compile probe" | tee -a "$LOG"
start=$(date +%s.%N)
timeout 300 "$PY" conformance/support/processes/cpu_compile_probe.py 2>&1 | tail -n 1 | tee -a "$LOG"
echo "probe wall: $("$PY" -c "print(round($(date +%s.%N) - $start, 1))") s" | tee -a "$LOG"

echo "== (d) distributed and compile checks, --require-gpu" | tee -a "$LOG"
timeout 500 "$PY" -m pytest -p no:cacheprovider -q -W ignore::DeprecationWarning conformance \
  -m "cpu or gpu or multigpu" --require-gpu -k "distributed or compile or openmp" 2>&1 | tail -n 5 | tee -a "$LOG"
