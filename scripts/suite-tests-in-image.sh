#!/usr/bin/env bash
# Run the suite's own tests and precision-check's (tests/conformance, tests/precision_check) inside a built image, which
# already has torch, pytest and nvidia-ml-py: the host needs no torch of its own. The
# image's own manifest and records are hidden (an empty /etc/pytorch-cuda, no
# $PYTORCH_CUDA_MANIFEST): those tests simulate a host, and bring their own manifests.
# The tree goes in through a tar stream, not a bind mount: the image's user (uid 1000) could not
# read a checkout under a directory only root may enter (/root, or a `mktemp -d`).
#   scripts/suite-tests-in-image.sh [IMAGE] [pytest args...]     (IMAGE: pytorch-cuda:v2.9)
set -euo pipefail
cd "$(dirname "$0")/.."
image="${1:-pytorch-cuda:v2.9}"
shift || true
tar -c --exclude=./.git --exclude=./.venv --exclude=./build-output --exclude=./.wt --exclude=./.gpu . |
  docker run --rm -i --network none --shm-size=1g --tmpfs /etc/pytorch-cuda -e PYTHONDONTWRITEBYTECODE=1 \
    "$image" sh -c 'mkdir -p /tmp/src && tar -x -C /tmp/src && cd /tmp/src && exec env -u PYTORCH_CUDA_MANIFEST python -m pytest -p no:cacheprovider tests/conformance tests/precision_check "$@"' sh "$@"
