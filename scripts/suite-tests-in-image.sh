#!/usr/bin/env bash
# Run the suite's own tests and precision-check's (tests/conformance, tests/precision_check) inside a built image, which
# already has torch, pytest and nvidia-ml-py: the host needs no torch of its own. The
# image's own manifest and records are hidden (an empty /etc/pytorch-cuda, no
# $PYTORCH_CUDA_MANIFEST): those tests simulate a host, and bring their own manifests.
#   scripts/suite-tests-in-image.sh [IMAGE] [pytest args...]     (IMAGE: pytorch-cuda:v2.9)
set -euo pipefail
cd "$(dirname "$0")/.."
image="${1:-pytorch-cuda:v2.9}"
shift || true
exec docker run --rm --network none --shm-size=1g --tmpfs /etc/pytorch-cuda \
  -v "$PWD:/src:ro" -w /src -e PYTHONDONTWRITEBYTECODE=1 \
  "$image" env -u PYTORCH_CUDA_MANIFEST python -m pytest -p no:cacheprovider tests/conformance tests/precision_check "$@"
