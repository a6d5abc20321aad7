#!/usr/bin/env bash
# The project's tests, in the order CI runs them:
#   lint (ruff) -> types (mypy) -> images/ up to date -> unit tests (fake engine)
#   -> conformance-suite tests (CPU torch) -> integration (real engine: builds the
#   cu12 image through build.py, then checks it and its broken variants).
# `scripts/test.sh --unit` stops before the integration tests.
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
[ -x "$py" ] || { echo "test: .venv is missing; run scripts/setup.sh first" >&2; exit 2; }

stage() { printf '\n==> %s\n' "$*"; }
started=$(date +%s)

stage "ruff (lint and format)"
.venv/bin/ruff check .
.venv/bin/ruff format --check .

stage "mypy (strict)"
.venv/bin/mypy

stage "images/ matches templates/ and matrix.yaml"
"$py" build.py --check-render

stage "unit tests (fake engine), report tests (recorded results, headless chromium), conformance-suite and precision-check tests (CPU torch)"
"$py" -m pytest tests/unit tests/report tests/conformance tests/precision_check -q

if [ "${1:-}" != "--unit" ]; then
  stage "integration tests (real Docker engine, real PyPI wheels, builds pytorch-cuda:v2.9)"
  "$py" -m pytest tests/integration -v -s --durations=15
  [ -f build-output/integration-timings.json ] && cat build-output/integration-timings.json
fi

printf '\n==> all tests passed in %s s\n' "$(( $(date +%s) - started ))"
