#!/usr/bin/env bash
# Rebuild evidence/site/ from the committed real runs: a results store in a temporary folder (build.py results
# ingest), the site (build.py site) into evidence/site/html/, the store's generated index and `results list`, and
# two screenshots from headless chromium (the home table, the H200 page with its history and regressions).
# usage: scripts/site-evidence.sh [MORE-RESULTS.json ...]   (more clean runs, e.g. evidence/fleet-runs/*/*.json)
# Needs .venv (scripts/setup-python.sh) and chromium (scripts/setup-browser.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
out=evidence/site
store="$(mktemp -d)/store"
trap 'rm -rf "$(dirname "$store")"' EXIT
py=.venv/bin/python
runs=docs/fault-coverage
# Clean runs: the H200 report's run of 2026-12-03, and the untouched and legitimate-setup runs of both cards.
clean=(evidence/reports/h200/results.json)
for card in h200 h100; do
  for setup in untouched any-uid caching-allocator-off module-loading-eager; do
    clean+=("$runs/$card/runs/$setup.json")
  done
done
"$py" build.py results ingest "${clean[@]}" "$@" --store "$store"
# Runs under an injected fault: stored and flagged, never a baseline.
for fault in tf32-forced-env busy-gpu; do
  "$py" build.py results ingest "$runs/h200/runs/$fault.json" "$runs/h100/runs/$fault.json" --store "$store" \
    --fault "$fault"
done
mkdir -p "$out"
"$py" build.py results list --store "$store" > "$out/runs.txt"
cp "$store/index.json" "$out/store-index.json"
"$py" build.py site --store "$store" --out "$out/html"
"$py" - "$out" <<'PY'
import sys
from pathlib import Path
from pytorch_cuda.precision_report.browser import load
out = Path(sys.argv[1])
for page, shot, height in (("index.html", "home.png", 900), ("gpu/nvidia-h200.html", "gpu-h200.png", 2600)):
    loaded = load(out / "html" / page, out / shot, height=height)
    assert loaded.console == (), loaded.console
    print(f"{page}: {loaded.svg_count} SVG charts, no console messages; screenshot {out / shot}")
PY
