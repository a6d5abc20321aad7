#!/usr/bin/env bash
# The conformance suite under every fault and control of fault_coverage/catalogue.py, on one GPU host, on the carried
# shipped stack (gpu/common.sh; STACK=host for the host's torch; as root), from the repo root:
#   OUT=/some/dir CARD=h100 [PART=controls|faults] bash gpu/fault-coverage.sh [CASE...]
# PART splits the catalogue for leases shorter than the whole run: `controls` (the untouched run and every control
# over the whole suite) and `faults`; unpack both parts' runs.tar.gz into one folder and run
# `python3 -m fault_coverage matrix --card CARD --out FOLDER` there (any host: it reads the results files only).
# With CASE names it runs only those, on top of the runs committed in evidence/fault-coverage/$CARD/runs (a partial
# re-run after a fix); with PART too, only those, on their own (a part split again). Writes into $OUT: matrix.md, matrix.json (once the untouched run is there), runs.tar.gz (each
# run's results file and log), host.txt. Exit status: that of `python3 -m fault_coverage run` (0: every gated check
# tripped, no finding; a part without the untouched run: 0 when it ran).
set -u
cd "$(dirname "$0")/.." || exit 2
: "${OUT:?set OUT}" "${CARD:?set CARD (h100, h200)}"
work="$OUT/work"
mkdir -p "$work/runs"
# shellcheck source=gpu/common.sh
. gpu/common.sh
gpu_python
gpu_host "$PY" | tee "$OUT/host.txt"
if [ $# -gt 0 ] && [ -z "${PART:-}" ] && [ -d "evidence/fault-coverage/$CARD/runs" ]; then
  cp "evidence/fault-coverage/$CARD/runs/"* "$work/runs/"
fi
part=()
if [ -n "${PART:-}" ]; then
  part=(--part "$PART")
fi
"$PY" -m fault_coverage run --card "$CARD" --out "$work" "${part[@]}" "$@"
status=$?
cp "$work/matrix.md" "$work/matrix.json" "$OUT/" 2>/dev/null
tar -czf "$OUT/runs.tar.gz" -C "$work" runs
rm -rf "$work"
exit "$status"
