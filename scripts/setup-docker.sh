#!/usr/bin/env bash
# Make sure a Docker engine answers and the offline base bootstrapper exists.
# Where no engine runs, install Debian's docker.io (Engine 20.10, whose client
# builds with DOCKER_BUILDKIT=1) and start dockerd in the background with overlay2.
# Needs root. Says what it does; changes nothing that already works.
set -euo pipefail

log() { printf 'setup-docker: %s\n' "$*"; }
die() { printf 'setup-docker: error: %s\n' "$*" >&2; exit 2; }

[ "$(id -u)" -eq 0 ] || die "run as root (sudo scripts/setup-docker.sh): it installs packages and starts dockerd"

apt_install() {
  log "installing with apt-get: $*"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >/tmp/setup-docker-apt.log 2>&1; then
    log "apt-get install failed; refreshing the package lists and trying again"
    apt-get update -q >>/tmp/setup-docker-apt.log 2>&1 || die "apt-get update failed; see /tmp/setup-docker-apt.log (is the Debian archive reachable?)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >>/tmp/setup-docker-apt.log 2>&1 \
      || die "apt-get install $* failed; see /tmp/setup-docker-apt.log"
  fi
}

engine_answers() { docker_client info >/dev/null 2>&1; }
docker_client() { if [ -x /usr/bin/docker ]; then /usr/bin/docker "$@"; else docker "$@"; fi; }

need=()
command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
if engine_answers; then
  log "a Docker engine already answers: $(docker_client version --format 'server {{.Server.Version}}, client {{.Client.Version}}' 2>/dev/null)"
else
  command -v dockerd >/dev/null || need+=(docker.io)
fi
# Unpacking the nvidia-* wheels and Debian's packages needs these in the bootstrapped base's host side too.
command -v newuidmap >/dev/null || need+=(uidmap)
if [ ${#need[@]} -gt 0 ]; then apt_install "${need[@]}"; fi

if ! engine_answers; then
  log "starting dockerd (overlay2) in the background; its log is /var/log/dockerd.log"
  "$(dirname "$0")/daemon.sh" /var/log/dockerd.log dockerd --storage-driver=overlay2 >/dev/null
  for _ in $(seq 1 60); do
    engine_answers && break
    sleep 1
  done
  engine_answers || die "dockerd did not answer within 60 s; see /var/log/dockerd.log"
fi
log "engine ready: $(docker_client version --format 'Docker Engine {{.Server.Version}}' 2>/dev/null), storage $(docker_client info --format '{{.Driver}}' 2>/dev/null)"
log "mmdebstrap: $(mmdebstrap --version 2>/dev/null | head -1)"
