#!/usr/bin/env bash
# Rebuild evidence/site/ from the committed real runs: a results store in a temporary folder (build.py results
# ingest), the site (build.py site) into evidence/site/html/, the store's generated index and `results list`, and
# two screenshots from headless chromium (the home table, the H200 page with its history and regressions).
# usage: scripts/site-evidence.sh   (the runs are those scripts/decay-evidence.sh stores; its judgement goes to
# evidence/site/judgement.txt)
# Needs .venv (scripts/setup-python.sh) and chromium (scripts/setup-browser.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
out=evidence/site
store="$(mktemp -d)/store"
trap 'rm -rf "$(dirname "$store")"' EXIT
py=.venv/bin/python
# Every committed run, by purpose (nightly, fault, control), and what the history flags: scripts/decay-evidence.sh
mkdir -p "$out"
scripts/decay-evidence.sh "$store" > "$out/judgement.txt"
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
