#!/usr/bin/env bash
# README command 2's setup: command 1's (scripts/setup.sh), then what only the tests need: .venv's linters and test
# tools (profile test), a local registry on 127.0.0.1:5000 with skopeo (the push and promote tests), PostgreSQL (the
# results store's tests), chromium (the report tests) and buildx (the bake test). Needs root. Changes nothing that
# already works.
set -euo pipefail
here="$(dirname "$0")"
"$here/setup.sh"
"$here/setup-python.sh" test
"$here/setup-registry.sh"
"$here/setup-postgres.sh"
"$here/setup-browser.sh"
"$here/setup-buildx.sh"
