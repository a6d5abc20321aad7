#!/usr/bin/env bash
# README command 1's setup: only what `build.py --target cu12` needs on a fresh Debian machine, a Docker engine
# (+ mmdebstrap, which bootstraps the base) and .venv with the builder's hash-locked dependencies (profile build).
# The tests' tools (linters, pytest, the registry, skopeo, chromium, buildx) come with command 2:
# scripts/setup-tests.sh.
set -euo pipefail
here="$(dirname "$0")"
"$here/setup-docker.sh"
"$here/setup-python.sh" build
