#!/usr/bin/env bash
# A local image registry for the push tests: Debian's docker-registry (Distribution 2.8),
# listening on 127.0.0.1:5000 only, without auth, its storage under /var/lib/docker-registry.
# The Docker engine treats 127.0.0.0/8 as an insecure registry, so plain HTTP needs no
# daemon.json change. Also installs skopeo, which promotes a tested digest to the release tags inside a
# registry (build.py release promote, docs/release.md). Needs root. Says what it does; changes nothing that
# already works.
set -euo pipefail

log() { printf 'setup-registry: %s\n' "$*"; }
die() { printf 'setup-registry: error: %s\n' "$*" >&2; exit 2; }

addr="${PYTORCH_CUDA_REGISTRY_ADDR:-127.0.0.1:5000}"
config=/etc/pytorch-cuda/registry.yml
storage=/var/lib/docker-registry
answers() { curl -fsS -o /dev/null "http://$addr/v2/" 2>/dev/null; }

apt_install() {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >/tmp/setup-registry-apt.log 2>&1 || {
    apt-get update -q >>/tmp/setup-registry-apt.log 2>&1 || die "apt-get update failed; see /tmp/setup-registry-apt.log"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" \
      >>/tmp/setup-registry-apt.log 2>&1 || die "apt-get install $* failed; see /tmp/setup-registry-apt.log"
  }
}

if ! command -v skopeo >/dev/null; then
  [ "$(id -u)" -eq 0 ] || die "skopeo is missing; run as root (sudo scripts/setup-registry.sh) to install it"
  log "installing skopeo with apt-get"
  apt_install skopeo
fi

if answers; then
  log "a registry already answers on $addr"
  exit 0
fi
[ "$(id -u)" -eq 0 ] || die "run as root (sudo scripts/setup-registry.sh): it installs a package and starts a service"

if ! command -v docker-registry >/dev/null || ! command -v curl >/dev/null; then
  log "installing docker-registry with apt-get"
  apt_install docker-registry curl
fi

# Our own configuration: the package's default one asks for an htpasswd file it does not ship
# and listens on every interface.
install -d /etc/pytorch-cuda
cat >"$config" <<EOF
version: 0.1
log:
  level: info
  fields:
    service: registry
storage:
  cache:
    blobdescriptor: inmemory
  filesystem:
    rootdirectory: $storage
  delete:
    enabled: true
http:
  addr: $addr
  headers:
    X-Content-Type-Options: [nosniff]
EOF
install -d -o docker-registry -g docker-registry "$storage" 2>/dev/null || install -d "$storage"

log "starting docker-registry on $addr (storage $storage, log /var/log/docker-registry.log)"
if id docker-registry >/dev/null 2>&1; then
  "$(dirname "$0")/daemon.sh" /var/log/docker-registry.log setpriv --reuid=docker-registry --regid=docker-registry \
    --init-groups docker-registry serve "$config" >/dev/null
else
  "$(dirname "$0")/daemon.sh" /var/log/docker-registry.log docker-registry serve "$config" >/dev/null
fi
for _ in $(seq 1 30); do
  answers && break
  sleep 1
done
answers || die "docker-registry did not answer on http://$addr/v2/ within 30 s; see /var/log/docker-registry.log"
log "ready: http://$addr/v2/ ($(docker-registry --version 2>/dev/null | head -1))"
