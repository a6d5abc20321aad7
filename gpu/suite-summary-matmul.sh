#!/usr/bin/env bash
# The suite's results, its precision summary and a plain-matmul cross-check, on a bare GPU host
# (the carried shipped stack, gpu/common.sh; STACK=host for the host's torch; no Docker, no network), from the repo root:
#   OUT=/some/dir gpu/suite-summary-matmul.sh
# 1. the conformance suite -> $OUT/results.json (+ log), 2. the in-image precision summary -> $OUT/summary.md,
# 3. plain torch.matmul at the suite's GEMM size, compared with the suite's numbers (within 5%) -> $OUT/matmul.txt.
# Then, on the dev machine: scripts/report-h200.sh $OUT/results.json   (regenerates evidence/reports/h200).
set -uo pipefail
# shellcheck source=gpu/common.sh
. "$(dirname "$0")/common.sh"
gpu_out ""
"$PY" -m pytest conformance -m "cpu or gpu" -p no:cacheprovider -o console_output_style=classic \
  --conformance-json "$OUT/results.json" --junitxml "$OUT/junit.xml" >"$OUT/conformance-log.txt" 2>&1
echo "conformance exit status $?" | tee -a "$OUT/conformance-log.txt"
tail -5 "$OUT/conformance-log.txt"
"$PY" -m conformance.support.results.summary "$OUT/results.json"
"$PY" gpu/matmul_crosscheck.py --compare "$OUT/results.json" | tee "$OUT/matmul.txt"
echo "matmul comparison exit status ${PIPESTATUS[0]} (0: every dtype within 5% of the suite)" | tee -a "$OUT/matmul.txt"
