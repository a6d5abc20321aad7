#!/usr/bin/env bash
# Create .venv with the builder's pinned dependencies and the test tools (pyproject.toml).
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf 'setup-python: %s\n' "$*"; }
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  log "creating .venv with $($python --version)"
  "$python" -m venv .venv
fi
log "installing pytorch-cuda and its pinned dependencies (.[test]) into .venv"
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
log "ready: $(.venv/bin/python -c 'import docker, pydantic, matplotlib; print("docker SDK", docker.__version__, "pydantic", pydantic.VERSION, "matplotlib", matplotlib.__version__)') (no torch on the host: the suite's own tests run inside the image)"
