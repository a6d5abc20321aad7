#!/usr/bin/env bash
# Re-lock the host tools (the builder's dependencies and the linters and test tools of pyproject.toml):
#   uv.lock                    every package, version and hash, for every Python >= 3.11 (uv lock)
#   requirements/build.txt     its export for the build, GPU and release jobs: the builder's dependencies only
#   requirements/test.txt      its export for the test jobs: those and the `test` extra
#   requirements/postgres.txt  its export for a nightly on a shared PostgreSQL store: build and the `postgres` extra
# scripts/setup-python.sh installs an export with pip --require-hashes --no-deps. Run this after changing a pin in
# pyproject.toml (or after Dependabot changed uv.lock); tests/repo/test_host_lock.py fails while they disagree.
set -euo pipefail
cd "$(dirname "$0")/.."
uv="${UV:-.venv/bin/uv}"
[ -x "$uv" ] || uv="$(command -v uv)" || { echo "lock-host-tools: uv not found; run scripts/setup-python.sh" >&2; exit 2; }
"$uv" lock
"$uv" export --frozen --no-emit-project --format requirements-txt --no-header -q -o requirements/build.txt
"$uv" export --frozen --no-emit-project --extra test --format requirements-txt --no-header -q -o requirements/test.txt
"$uv" export --frozen --no-emit-project --extra postgres --format requirements-txt --no-header -q \
  -o requirements/postgres.txt
echo "lock-host-tools: uv.lock and requirements/{build,test,postgres}.txt are up to date"
