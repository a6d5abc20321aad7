#!/usr/bin/env bash
# Run the conformance suite's own tests (tests/conformance) inside a built image, which
# already has torch, pytest and nvidia-ml-py: the host needs no torch of its own.
#   scripts/suite-tests-in-image.sh [IMAGE] [pytest args...]     (IMAGE: pytorch-cuda:v2.9)
set -euo pipefail
cd "$(dirname "$0")/.."
image="${1:-pytorch-cuda:v2.9}"
shift || true
exec docker run --rm --network none --shm-size=1g \
  -v "$PWD:/src:ro" -w /src -e PYTHONDONTWRITEBYTECODE=1 \
  "$image" python -m pytest -p no:cacheprovider tests/conformance "$@"
