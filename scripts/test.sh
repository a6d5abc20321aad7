#!/usr/bin/env bash
# The project's tests, in the order CI runs them, in two tiers (see --help and docs/testing.md).
# Each stage's wall time is printed in a table at the end (also when a stage fails), with the
# slowest tests (pytest --durations) and the integration timings (build-output/integration-timings.json).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  cat <<'EOF'
usage: scripts/test.sh [--unit | --help]

Tiers (typical wall times on a 2-core runner, with the image already built by README command 1):
  --unit   the inner loop, no Docker: ruff, CI linters (actionlint, shellcheck, hadolint,
           zizmor, schemas), mypy --strict, images/ render check, the unit tests (every test of
           tests/ not marked integration: fake engine, recorded results; no engine, registry,
           PostgreSQL or browser, tests/support/tiers.py holds that) on one pytest-xdist worker
           per core, and the suite's own tests when .venv has torch. About 1-1.5 minutes.
  (none)   everything above, then, in lanes side by side (scripts/test-lanes.sh), the
           integration tests on the real Docker engine (pytorch-cuda:v2.9 built through
           build.py in the background while the linters and unit tests run, or the same content's image
           reused; its broken variants; a real push of it to the registry on 127.0.0.1:5000;
           PostgreSQL; the report and site pages in a real browser) and the suite's own tests inside the image. About 8 minutes
           after command 1; on an empty engine add the base and the cold build (2-4 minutes).
  --help   this text.

Exit status: 0 when every stage passed, the failing stage's status otherwise, 2 on a bad argument
or a missing .venv or test tools (run scripts/setup-tests.sh). A table of stage times is printed at the end.
EOF
}

tier=full
case "${1:-}" in
  "") ;;
  --unit) tier=unit ;;
  -h | --help) usage; exit 0 ;;
  *) printf 'test: unknown argument %q\n\n' "$1" >&2; usage >&2; exit 2 ;;
esac

py=.venv/bin/python
[ -x "$py" ] || { echo "test: .venv is missing; run scripts/setup-tests.sh first" >&2; exit 2; }
[ -x .venv/bin/pytest ] || {  # README command 1 (scripts/setup.sh) installs the builder's profile only
  echo "test: .venv has no test tools (pytest); run scripts/setup-tests.sh first" >&2
  exit 2
}

started=$(date +%s)
stages=()  # "seconds<TAB>name" for the table
current=""
current_started=0
stage() {
  finish_stage
  current="$*"
  current_started=$(date +%s)
  printf '\n==> %s\n' "$current"
}
finish_stage() {
  if [ -n "$current" ]; then
    stages+=("$(( $(date +%s) - current_started ))	$current")
    current=""
  fi
}
image_build_pid=""  # the full tier's image build, in the background while the linters and unit tests run
image_log=build-output/test-image-build.log
mypy_pid=""  # mypy, in the background while ruff, the CI linters and the render check run
report() {
  status=$?
  if [ -n "$mypy_pid" ]; then kill "$mypy_pid" 2>/dev/null || true; fi  # a stage before it failed
  if [ -n "$image_build_pid" ] && kill -0 "$image_build_pid" 2>/dev/null; then
    kill -INT "$image_build_pid" 2>/dev/null || true  # Ctrl-C's way out: no tag moves
    wait "$image_build_pid" 2>/dev/null || true
  fi
  finish_stage
  printf '\n==> stage times (%s tier)\n' "$tier"
  for row in "${stages[@]}"; do
    printf '%6s s  %s\n' "${row%%	*}" "${row#*	}"
  done
  printf '%6s s  %s\n' "$(( $(date +%s) - started ))" "total"
  if [ "$tier" = full ] && [ -f build-output/integration-timings.json ]; then
    printf '\n==> integration timings (build-output/integration-timings.json)\n'
    "$py" -c 'import json, sys
for name, value in json.load(open(sys.argv[1])).items():
    print(f"  {name:<40} {json.dumps(value)}")' build-output/integration-timings.json || true
  fi
  if [ "$status" -eq 0 ]; then
    printf '\n==> all tests passed in %s s\n' "$(( $(date +%s) - started ))"
  else
    printf '\n==> FAILED (exit status %s) after %s s\n' "$status" "$(( $(date +%s) - started ))"
  fi
  exit "$status"
}
trap report EXIT
mkdir -p build-output

if [ "$tier" = full ]; then
  # The integration tests' image, built (or reused: the same content's image) while the linters and the unit tests
  # run: on an empty engine most of a cold build waits on downloads and the engine, and they fill the cores.
  printf '\n==> building pytorch-cuda:v2.9 in the background while the linters and unit tests run (log: %s)\n' "$image_log"
  "$py" build.py --target cu12 --progress plain >"$image_log" 2>&1 &
  image_build_pid=$!
fi

# mypy (one core, about 11 s in a fresh clone) runs beside ruff, the CI linters and the render check, which left the
# other core idle one after another; its output follows theirs.
mypy_log=build-output/mypy.log
.venv/bin/mypy >"$mypy_log" 2>&1 &
mypy_pid=$!

stage "ruff (lint and format)"
.venv/bin/ruff check .
.venv/bin/ruff format --check .

stage "CI configuration (actionlint + shellcheck, zizmor, jq, check-jsonschema, hadolint, kubernetes-validate)"
scripts/lint-ci.sh

stage "images/ matches templates/ and matrix.yaml"
"$py" build.py render --check

stage "mypy (strict; started beside the stages above, this is the rest of its wait)"
mypy_status=0
wait "$mypy_pid" || mypy_status=$?
mypy_pid=""
cat "$mypy_log"
[ "$mypy_status" -eq 0 ] || exit "$mypy_status"

stage "unit tests (fake engine, recorded results; no engine, registry, PostgreSQL or browser), one worker per core"
# The tier is a marker: every test of tests/ that is not marked integration, but the suite's and precision-check's
# own tests (tests/conformance, tests/precision_check: they need torch, and run inside the image in the full tier).
"$py" -m pytest tests -m "not integration" --ignore=tests/conformance --ignore=tests/precision_check \
  -q --durations=10 -n auto  # pytest-xdist: one worker per core

if [ "$tier" = full ]; then
  stage "pytorch-cuda:v2.9 for the integration tests (the background build's rest)"
  build_status=0
  wait "$image_build_pid" || build_status=$?
  image_build_pid=""
  tail -n 12 "$image_log"
  if [ "$build_status" -ne 0 ]; then
    echo "test: the build of pytorch-cuda:v2.9 failed (exit status $build_status; whole log: $image_log)" >&2
    exit "$build_status"
  fi
  stage "integration tests (real Docker engine, real PyPI wheels, builds pytorch-cuda:v2.9) and the suite's tests inside it, in lanes side by side"
  rm -f build-output/integration-timings.json  # this run's timings only
  scripts/test-lanes.sh pytorch-cuda:v2.9
elif "$py" -c "import torch" 2>/dev/null; then
  stage "conformance-suite tests (the host venv's torch)"
  "$py" -m pytest tests/conformance -q
else
  stage "conformance-suite tests skipped: no torch in .venv (they run inside the image without --unit)"
fi
