#!/usr/bin/env bash
# The conformance suite under every fault and control of fault_coverage/catalogue.py, on one bare GPU host (python3,
# torch, pytest, nvidia-ml-py; as root), from the repo root:
#   OUT=/some/dir CARD=h100 bash gpu/fault-coverage.sh [CASE...]
# With CASE names it runs only those, on top of the runs committed in docs/fault-coverage/$CARD/runs (a partial
# re-run after a fix). Writes into $OUT: matrix.md, matrix.json, runs.tar.gz (each case's results file and log),
# host.txt. Exit status: that of `python3 -m fault_coverage run` (0: every gated check tripped, no finding).
set -u
cd "$(dirname "$0")/.." || exit 2
: "${OUT:?set OUT}" "${CARD:?set CARD (h100, h200)}"
work="$OUT/work"
mkdir -p "$work/runs"
# shellcheck source=gpu/common.sh
. gpu/common.sh
gpu_host python3 | tee "$OUT/host.txt"
if [ $# -gt 0 ] && [ -d "docs/fault-coverage/$CARD/runs" ]; then
  cp "docs/fault-coverage/$CARD/runs/"* "$work/runs/"
fi
python3 -m fault_coverage run --card "$CARD" --out "$work" "$@"
status=$?
cp "$work/matrix.md" "$work/matrix.json" "$OUT/" 2>/dev/null
tar -czf "$OUT/runs.tar.gz" -C "$work" runs
rm -rf "$work"
exit "$status"
