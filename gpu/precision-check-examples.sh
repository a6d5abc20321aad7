#!/usr/bin/env bash
# precision-check's four examples on a GPU host, on the carried shipped stack (gpu/common.sh; STACK=host for the host's torch; no Docker, no network), from a
# copy of the repository root:   OUT=/some/dir gpu/precision-check-examples.sh
# Runs `python3 -m precision_check` on the examples at their GPU size (the factories get device="cuda":
# compute-bound sizes), the CNN at its CPU size too (small: expect "not faster"), the transformer under
# torch.compile, and the linear regression fitted exactly (precision-limited in bf16: its loss stalls far above fp32's); then the
# tests/precision_check unit tests. Every run's terminal output is tee'd to <name>.txt, its report is <name>.json,
# and its exit code goes to $OUT/summary.txt; a failing run does not stop the others. The per-run files are packed
# into $OUT/precision-check-examples.tar.gz at the end (two files in $OUT: the device tool returns at most 8).
# About 3 to 4 minutes on an H200 (the compile run is the longest: two torch.compile's of the transformer).
# Prints one "CHECK ok" or "CHECK FAIL" line per expectation at the end; look for:
#   linear_regression    kind precision-limited, NOT bf16 (the old rule said "bf16: safe ... within 6059%"):
#                        "fp32: bf16 is precision-limited on this model: bf16's loss stalls at 0.0005 ..., NNx fp32's"
#                        (fp16/tf32 keep 10 mantissa bits: they may reach fp32's loss, or be limited too);
#   transformer          fp32 loss falling steadily, noise floor far below 1%, kind faster: bf16 (or fp16);
#   cnn                  a dtype with its numbers; fp16's skipped step(s) and fp32 trained skipping them;
#   overflow_mlp         "fp16 overflows in `expand` at step 0 (|x| = inf/nan > 65504): use bf16 (N.Nx faster ...)";
#   cnn-small            kind not-faster: "fp32: not faster (...)";
#   transformer-compile  "with torch.compile: bf16 runs at N.NNx compiled fp32's speed".
# Exit status: 0 when every run exited 0 and every CHECK held, else 1.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=gpu/common.sh
. gpu/common.sh
gpu_out "$PWD/gpu-out"
RUNS="$(mktemp -d)"  # the per-run files, packed into $OUT at the end
status=0
started=$SECONDS
: >"$OUT/summary.txt"

run() { # run NAME TIMEOUT_S ARGS...: python3 -m precision_check ARGS --json $RUNS/NAME.json, tee'd to $RUNS/NAME.txt
  local name=$1 limit=$2
  shift 2
  printf '\n=== %s: python3 -m precision_check %s\n' "$name" "$*"
  local began=$SECONDS
  timeout "$limit" "$PY" -m precision_check "$@" --json "$RUNS/$name.json" 2>&1 | tee "$RUNS/$name.txt"
  local rc=${PIPESTATUS[0]}
  [ "$rc" = 0 ] || status=1
  printf '=== %s: exit %s after %ss\n' "$name" "$rc" "$((SECONDS - began))" | tee -a "$OUT/summary.txt"
}

gpu_host "$PY" 2>&1 | tee "$RUNS/host.txt"

T=examples/precision_check
run linear_regression 90 "$T/linear_regression.py:factory" --steps 300 --dtypes fp32,tf32,fp16,bf16
run transformer 150 "$T/transformer.py:factory" --steps 80 --dtypes fp32,tf32,fp16,bf16
run cnn 60 "$T/cnn.py:factory" --steps 100
run overflow_mlp 60 "$T/overflow_mlp.py:factory" --steps 50
PRECISION_CHECK_EXAMPLE_SIZE=small run cnn-small 60 "$T/cnn.py:factory" --steps 50
run transformer-compile 200 "$T/transformer.py:factory" --steps 10 --timed-steps 10 --dtypes fp32,bf16 --compile

# test_examples.py runs the same examples on the CPU (a minute): here they ran on the GPU above
printf '\n=== unit tests: tests/precision_check but test_examples.py (verdicts from recorded runs, whole-run watches, contract, report)\n'
timeout 180 "$PY" -m pytest -q -p no:cacheprovider tests/precision_check --ignore=tests/precision_check/test_examples.py 2>&1 |
  tee "$RUNS/unit-tests.txt"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || status=1
echo "=== unit tests: exit $rc" | tee -a "$OUT/summary.txt"

printf '\n=== verdicts, loss curves, noise floors and checks\n'
"$PY" gpu/precision-check-examples.py "$RUNS" 2>&1 | tee -a "$OUT/summary.txt"
[ "${PIPESTATUS[0]}" = 0 ] || status=1

tar -czf "$OUT/precision-check-examples.tar.gz" -C "$RUNS" . && rm -rf "$RUNS"
echo "=== done in $((SECONDS - started))s: exit status $status (outputs in $OUT/precision-check-examples.tar.gz)" |
  tee -a "$OUT/summary.txt"
exit "$status"
