#!/usr/bin/env bash
# README command 2's setup: command 1's (scripts/setup.sh: the engine, .venv's build profile), then what only the tests
# need: .venv's linters and test tools (profile test), a local registry on 127.0.0.1:5000 with skopeo (the push and
# promote tests), PostgreSQL (the results store's tests), chromium (the report tests) and buildx (the bake test: the
# installed 0.13.1 and a current one, sid's 0.29.1, which the comparison runs against too).
# Needs root. Changes nothing that already works.
#
# The tests' tools come in two lanes side by side, each line prefixed with its lane's name: `python` (pip: PyPI's
# wheels into .venv) and `system` (apt-get, one package after another: dpkg takes one lock; buildx from the Debian
# archive). They share nothing: the one waits on PyPI while the other waits on the Debian archive. Exit status:
# setup.sh's, else the first failing lane's (python, then system).
set -euo pipefail
here="$(dirname "$0")"
"$here/setup.sh"
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT

lane() {  # $1: the lane's name; then its steps, one command each (the words of a step split on blanks)
  local name=$1 step status=0
  shift
  {
    for step in "$@"; do
      # shellcheck disable=SC2086  # a step is a script and its arguments
      "$here"/$step || { status=$?; echo "setup-tests: $step failed (exit status $status)" >&2; break; }
    done
    echo "$status" >"$results/$name"
  } 2>&1 | sed -u "s/^/[$name] /"
}

lane python "setup-python.sh test" &
lane system setup-registry.sh setup-postgres.sh setup-browser.sh setup-buildx.sh "setup-buildx.sh --current" &
wait

for name in python system; do
  status=$(cat "$results/$name" 2>/dev/null || echo 1)
  [ "$status" -eq 0 ] || exit "$status"
done
