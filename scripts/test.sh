#!/usr/bin/env bash
# The project's tests, in the order CI runs them:
#   lint (ruff; scripts/lint-ci.sh: workflows, action pins, dependabot, Dockerfiles) -> types (mypy)
#   -> images/ up to date -> unit tests (fake engine)
#   -> integration (real engine: builds the cu12 image through build.py, then checks
#   it and its broken variants) -> the conformance suite's own tests, inside that image
#   (it has torch; the host venv need not download it a second time).
# `scripts/test.sh --unit` stops before the integration tests; it runs the suite's own
# tests on the host only when the host venv has torch (pip install -e '.[suite-host]').
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
[ -x "$py" ] || { echo "test: .venv is missing; run scripts/setup.sh first" >&2; exit 2; }

stage() { printf '\n==> %s\n' "$*"; }
started=$(date +%s)

stage "ruff (lint and format)"
.venv/bin/ruff check .
.venv/bin/ruff format --check .

stage "CI configuration (actionlint + shellcheck, action pins, check-jsonschema, hadolint)"
scripts/lint-ci.sh

stage "mypy (strict)"
.venv/bin/mypy

stage "images/ matches templates/ and matrix.yaml"
"$py" build.py --check-render

stage "unit tests (fake engine) and report tests (recorded results, headless chromium)"
"$py" -m pytest tests/unit tests/report -q

if [ "${1:-}" != "--unit" ]; then
  stage "integration tests (real Docker engine, real PyPI wheels, builds pytorch-cuda:v2.9)"
  "$py" -m pytest tests/integration -v -s --durations=15
  [ -f build-output/integration-timings.json ] && cat build-output/integration-timings.json
  stage "conformance-suite tests, inside pytorch-cuda:v2.9 (its torch, its pytest)"
  scripts/suite-tests-in-image.sh pytorch-cuda:v2.9 -q
elif "$py" -c "import torch" 2>/dev/null; then
  stage "conformance-suite tests (the host venv's torch)"
  "$py" -m pytest tests/conformance -q
else
  stage "conformance-suite tests skipped: no torch in .venv (they run inside the image without --unit)"
fi

printf '\n==> all tests passed in %s s\n' "$(( $(date +%s) - started ))"
