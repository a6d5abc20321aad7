#!/usr/bin/env bash
# usage: scripts/daemon.sh LOG COMMAND [ARG...]
# Start COMMAND in the background, in a session of its own, appending its output to LOG, with no open file
# descriptor but stdin/stdout/stderr: a descriptor inherited from the caller (the lock of a
# `flock /tmp/pytorch-cuda-docker.lock scripts/setup.sh`, say) would otherwise stay held for as long as
# the daemon runs. Prints the daemon's PID.
set -euo pipefail
log=$1
shift
for fd in /proc/self/fd/*; do
  fd=${fd##*/}
  if [ "$fd" -gt 2 ] && [ "$fd" != 255 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
done
setsid "$@" </dev/null >>"$log" 2>&1 &
echo $!
