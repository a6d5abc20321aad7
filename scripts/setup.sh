#!/usr/bin/env bash
# Set up a fresh Debian machine: a Docker engine (+ mmdebstrap), a local registry on 127.0.0.1:5000, PostgreSQL for the results store's tests, chromium for the report tests, the Python venv, and buildx (for the bake test).
set -euo pipefail
here="$(dirname "$0")"
"$here/setup-docker.sh"
"$here/setup-registry.sh"
"$here/setup-postgres.sh"
"$here/setup-browser.sh"
"$here/setup-python.sh"
"$here/setup-buildx.sh"
