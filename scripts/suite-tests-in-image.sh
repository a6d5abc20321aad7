#!/usr/bin/env bash
# Run the suite's own tests and precision-check's (tests/conformance, tests/precision_check) inside a built image, which
# already has torch, pytest and nvidia-ml-py: the host needs no torch of its own. The
# image's own manifest and records are hidden (an empty /etc/pytorch-cuda, no
# $PYTORCH_CUDA_MANIFEST): those tests simulate a host, and bring their own manifests.
# The tree goes in through a tar stream, not a bind mount: the image's user (uid 1000) could not
# read a checkout under a directory only root may enter (/root, or a `mktemp -d`).
# The host's tool caches stay out of it (.mypy_cache: 30 of the tree's 52 MB after the unit tier, once per shard).
# The tests run in one container per core (at most $SUITE_SHARDS, default 2), each with one shard
# of them (tests/support/shard.py); each container's output follows when all have finished.
# Each shard's torch uses one OpenMP thread (OMP_NUM_THREADS=1): the shards are the parallelism, and with
# torch's default of a thread per core in each, the threads spun against each other on a 2-core runner
# (two shards' transformer and CNN examples: 69 s side by side, 9 s with one thread each).
#   scripts/suite-tests-in-image.sh [IMAGE] [pytest args...]     (IMAGE: pytorch-cuda:v2.9)
set -euo pipefail
cd "$(dirname "$0")/.."
image="${1:-pytorch-cuda:v2.9}"
shift || true
cores=$(nproc)
shards="${SUITE_SHARDS:-2}"
[ "$cores" -lt "$shards" ] && shards=$cores
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

run_shard() {  # $1: the shard, K/N; then pytest's arguments
  local shard=$1
  shift
  tar -c --exclude=./.git --exclude=./.venv --exclude=./build-output --exclude=./.wt --exclude=./.gpu \
    --exclude=./.mypy_cache --exclude=./.ruff_cache --exclude=./.pytest_cache . |
    docker run --rm -i --network none --shm-size=1g --tmpfs /etc/pytorch-cuda -e PYTHONDONTWRITEBYTECODE=1 \
      -e PYTEST_SHARD="$shard" -e OMP_NUM_THREADS=1 "$image" sh -c 'mkdir -p /tmp/src && tar -x -C /tmp/src && cd /tmp/src && exec env -u PYTORCH_CUDA_MANIFEST python -m pytest -p no:cacheprovider -p tests.support.shard tests/conformance tests/precision_check "$@"' sh "$@"
}

pids=()
for shard in $(seq 1 "$shards"); do
  run_shard "$shard/$shards" "$@" >"$logs/$shard.log" 2>&1 &
  pids+=("$!")
done
status=0
for shard in $(seq 1 "$shards"); do
  wait "${pids[$((shard - 1))]}" || status=$?
  printf '\n--- shard %s/%s ---\n' "$shard" "$shards"
  cat "$logs/$shard.log"
done
exit "$status"
