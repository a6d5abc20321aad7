#!/usr/bin/env bash
# Set up a fresh Debian machine: a Docker engine (+ mmdebstrap), chromium for the report tests, and the Python venv.
set -euo pipefail
here="$(dirname "$0")"
"$here/setup-docker.sh"
"$here/setup-browser.sh"
"$here/setup-python.sh"
