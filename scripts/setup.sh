#!/usr/bin/env bash
# Set up a fresh Debian machine: a Docker engine (+ mmdebstrap) and the Python venv.
set -euo pipefail
here="$(dirname "$0")"
"$here/setup-docker.sh"
"$here/setup-python.sh"
