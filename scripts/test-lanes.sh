#!/usr/bin/env bash
# The full tier's Docker part in lanes side by side (scripts/test.sh calls it; about 30% of a 2-core runner idled
# while these ran one after another, waiting on the engine, the registry and PyPI):
#   builds  the integration tests (marker integration, anywhere in tests/) that run build.py on this checkout (marker
#           engine_builds): they share its build lock and the engine's candidate tags, so they run one after another
#           (tests/support/integration.py);
#   images  every other integration test that runs containers of the built image or derived images, and the
#           loopback index, registry, PostgreSQL and browser tests beside them;
#   release the release tests (tests/pytorch_cuda/release: `build.py release` against the registry on 127.0.0.1:5000,
#           no engine, no image): mostly Python starting (an index's expiry is met on a clock moved ahead, one of
#           them, 14 s, waited for), which in the images lane lengthened the critical path by their whole wall time;
#   suite   the suite's own tests inside the image (scripts/suite-tests-in-image.sh), started when the first of
#           the other three lanes ends.
# Each line is prefixed with its lane's name, and each lane's output is kept in build-output/lane-NAME.log. The lanes'
# lines interleave, so at the end the summary of every failed lane is printed again, whole, where a CI log's tail
# shows it. Both integration lanes ask for the image through build.py once; a lock makes the second wait for the
# first and reuse it. Exit status: 0 when every lane passed, else the first failing lane's (in the order builds,
# images, release, suite).
#   scripts/test-lanes.sh [IMAGE]     (IMAGE: pytorch-cuda:v2.9)
set -euo pipefail
cd "$(dirname "$0")/.."
image="${1:-pytorch-cuda:v2.9}"
py=.venv/bin/python
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
logs=build-output
mkdir -p "$logs"

lane() {  # $1: the lane's name; then its command. Writes "<seconds> <status>" to $results/<name>.
  local name=$1 started status
  shift
  started=$(date +%s)
  set +e
  "$@" 2>&1 | tee "$logs/lane-$name.log" | sed -u "s/^/[$name] /"
  status=${PIPESTATUS[0]}
  set -e
  echo "$(($(date +%s) - started)) $status" >"$results/$name"
}

failures() {  # $1: a lane's log. pytest's failure reports and its short summary (or the log's last 60 lines).
  local header='^=* \(FAILURES\|ERRORS\) =*$'  # pytest's banner before its failure reports
  if grep -q "$header" "$1"; then
    sed -n "/$header/,\$p" "$1" | tail -n 150
  else
    tail -n 60 "$1"
  fi
}

# The whole tree, selected by marker; the suite's and precision-check's own tests need torch (the suite lane's).
tree=(tests --ignore=tests/conformance --ignore=tests/precision_check)

# shellcheck disable=SC2329  # called through `lane`
builds() {
  "$py" -m pytest "${tree[@]}" -v -rfE -m "integration and engine_builds" --durations=15
}

# shellcheck disable=SC2329  # called through `lane`
images() {
  "$py" -m pytest "${tree[@]}" --ignore=tests/pytorch_cuda/release -v -rfE -m "integration and not engine_builds" \
    --durations=15
}

# shellcheck disable=SC2329  # called through `lane`
release() {
  "$py" -m pytest tests/pytorch_cuda/release -v -rfE -m "integration and not engine_builds" --durations=10
}

# shellcheck disable=SC2329  # called through `lane`
suite() {
  echo "==> conformance-suite tests, inside $image (its torch, its pytest)"
  scripts/suite-tests-in-image.sh "$image" -q --durations=10
}

lane builds builds &
lane images images &
lane release release &
wait -n || true  # the first integration lane to end (its status is in $results)
if ! docker image inspect "$image" >/dev/null 2>&1; then
  echo "test-lanes: $image is not here (the integration lanes build it); the suite lane waits for them" >&2
  wait
fi
lane suite suite &
wait

status=0
printf '\n==> lanes\n'
for name in builds images release suite; do
  read -r seconds lane_status <"$results/$name"
  printf '%6s s  %s (exit status %s)\n' "$seconds" "$name" "$lane_status"
  if [ "$lane_status" -ne 0 ] && [ "$status" -eq 0 ]; then status=$lane_status; fi
done
for name in builds images release suite; do
  read -r _ lane_status <"$results/$name"
  if [ "$lane_status" -ne 0 ]; then
    printf '\n==> lane %s failed (exit status %s); its whole log: %s. Its failures and summary:\n' \
      "$name" "$lane_status" "$logs/lane-$name.log"
    failures "$logs/lane-$name.log"
  fi
done
exit "$status"
