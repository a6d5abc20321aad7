#!/usr/bin/env bash
# Regenerate the committed H200 precision report, evidence/reports/h200/:
#   results.json (the input, copied), report.html, report.md, report.json, screenshot.png, amp.svg.
# usage: scripts/report-h200.sh [RESULTS.json]   (default: the committed evidence/reports/h200/results.json)
# Needs .venv (scripts/setup-python.sh) and chromium (scripts/setup-browser.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
out=evidence/reports/h200
mkdir -p "$out"
if [ $# -gt 0 ] && [ "$(realpath "$1")" != "$(realpath -m "$out/results.json")" ]; then
  cp "$1" "$out/results.json"
fi
[ -f "$out/results.json" ] || { echo "report-h200: no $out/results.json; pass the H200 run's results.json" >&2; exit 2; }
.venv/bin/python build.py report "$out/results.json" --out "$out"
.venv/bin/python -m pytorch_cuda.precision_report.browser "$out/report.html" "$out/screenshot.png"
# The chart README shows as the precision answer: AMP step time and peak memory per dtype.
.venv/bin/python -m pytorch_cuda.precision_report.chart_file "$out/report.json" amp "$out/amp.svg"
