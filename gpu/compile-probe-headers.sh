#!/usr/bin/env bash
# The compile probe's precompiled C++ header on a GPU host (the carried shipped stack,
# gpu/common.sh; STACK=host for the host's torch; no network), from the repo root:   OUT=/some/dir bash gpu/compile-probe-headers.sh
# (a) the probe's unit tests on this torch (tests/conformance/support/processes/: test_precompiled_headers.py,
#     test_forked_starts.py):
#     must end "N passed";
# (b) the probe twice with TORCHINDUCTOR_CACHE_DIR set to a new folder (what the build's check volume is): each
#     must print no "error", "precompiled_headers" naming that folder, and the folder must hold a .gch after the
#     first run; the second run's compile_and_run_s is the warm case;
# (c) the probe without TORCHINDUCTOR_CACHE_DIR: "precompiled_headers": null (torch's own folder is kept);
# (d) the whole suite, all markers, --require-gpu (the probe runs in it, without the variable): no failure.
# Writes compile-probe-headers.txt and results.json into $OUT.
set -u
# shellcheck source=gpu/common.sh
. "$(dirname "$0")/common.sh"
gpu_out "$PWD/out"
LOG="$OUT/compile-probe-headers.txt"
: > "$LOG"
gpu_host "$PY" | tee -a "$LOG"

echo "== (a) unit tests" | tee -a "$LOG"
timeout 300 "$PY" -m pytest -p no:cacheprovider -q tests/conformance/support/processes/test_precompiled_headers.py \
  tests/conformance/support/processes/test_forked_starts.py 2>&1 | tail -n 3 | tee -a "$LOG"

cache=$(mktemp -d)
for run in 1 2; do
  echo "== (b) probe run $run, TORCHINDUCTOR_CACHE_DIR=$cache" | tee -a "$LOG"
  start=$(date +%s.%N)
  TORCHINDUCTOR_CACHE_DIR="$cache" timeout 300 "$PY" conformance/support/processes/cpu_compile_probe.py 2>&1 |
    tail -n 1 | tee -a "$LOG"
  echo "probe wall: $("$PY" -c "print(round($(date +%s.%N) - $start, 1))") s" | tee -a "$LOG"
  echo "headers: $(find "$cache/precompiled_headers" -name '*.gch' -printf '%f %s bytes\n' 2>/dev/null)" | tee -a "$LOG"
done

echo "== (c) probe without TORCHINDUCTOR_CACHE_DIR" | tee -a "$LOG"
timeout 300 "$PY" conformance/support/processes/cpu_compile_probe.py 2>&1 | tail -n 1 | tee -a "$LOG"

echo "== (d) whole suite, --require-gpu" | tee -a "$LOG"
start=$(date +%s)
timeout 400 "$PY" -m pytest -p no:cacheprovider -q -W ignore::DeprecationWarning conformance \
  -m "cpu or gpu or multigpu" --require-gpu --conformance-json "$OUT/results.json" 2>&1 | tail -n 3 | tee -a "$LOG"
echo "suite wall: $(( $(date +%s) - start )) s" | tee -a "$LOG"
