#!/usr/bin/env bash
# Create .venv with the host tools, hash-locked (uv.lock, exported to requirements/<profile>.txt by
# scripts/lock-host-tools.sh):
#   scripts/setup-python.sh          profile `test`: the builder's dependencies, the linters and the test tools
#   scripts/setup-python.sh build    profile `build`: the builder's dependencies only (build, GPU, release jobs)
#   scripts/setup-python.sh postgres profile `postgres`: build's and psycopg (a nightly on a shared PostgreSQL store)
# pip installs with --require-hashes --no-deps: a package that is not in the lock, or a download whose bytes match
# none of its hashes, fails the install. The checkout itself goes on the venv's path through a .pth file (what an
# editable install does, without a build backend to download).
# pip compiles the .pyc files (no --no-compile; measured 2026-12-07, 2 cores): skipping it saves 5.4 CPU-seconds
# of the build profile's install (15.0 -> 9.7 s), and a first run then writes what it imports once (build.py's
# imports 0.32 -> 0.74 s, then 0.29 s). But where PYTHONDONTWRITEBYTECODE is set (this project's machines, many
# containers) every process compiles its imports again: those imports 0.27 -> 0.64 s each time, and the contract
# and cli unit tests 43-47 -> 53 CPU-seconds, more than the install saves.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf 'setup-python: %s\n' "$*"; }
profile="${1:-test}"
case "$profile" in
  build | test | postgres) ;;
  *) echo "setup-python: unknown profile '$profile'; give build, test or postgres (or nothing: test)" >&2; exit 2 ;;
esac
lock="requirements/$profile.txt"
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  log "creating .venv with $($python --version)"
  "$python" -m venv .venv
fi
log "installing the hash-locked host tools of $lock into .venv (--require-hashes)"
.venv/bin/python -m pip install -q --disable-pip-version-check --require-hashes --no-deps -r "$lock"
site="$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
pwd >"$site/pytorch-cuda-checkout.pth"
log "ready: $(.venv/bin/python -c 'import docker, pydantic, pytorch_cuda; print("docker SDK", docker.__version__, "pydantic", pydantic.VERSION, "pytorch_cuda from", pytorch_cuda.__path__[0])') (no torch on the host: the suite's own tests run inside the image)"
