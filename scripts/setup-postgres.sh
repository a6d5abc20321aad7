#!/usr/bin/env bash
# PostgreSQL for the tests of the PostgreSQL results store (pytorch_cuda/run_store/postgres_store.py): Debian's
# `postgresql` package, its binaries only. No service is started here: each test session makes a throwaway
# cluster with initdb in a temporary folder and starts it with pg_ctl on a free loopback port
# (tests/support/postgres_server.py). Needs root to install. Says what it does; changes nothing that already works.
set -euo pipefail

log() { printf 'setup-postgres: %s\n' "$*"; }
die() { printf 'setup-postgres: error: %s\n' "$*" >&2; exit 2; }

found() { command -v initdb >/dev/null || compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; }

if found; then
  log "PostgreSQL is installed ($(compgen -G '/usr/lib/postgresql/*/bin/postgres' | head -1))"
  exit 0
fi
[ "$(id -u)" -eq 0 ] || die "PostgreSQL is missing; run as root (sudo scripts/setup-postgres.sh) to install it"
log "installing postgresql with apt-get"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends postgresql >/tmp/setup-postgres-apt.log 2>&1 || {
  apt-get update -q >>/tmp/setup-postgres-apt.log 2>&1 || die "apt-get update failed; see /tmp/setup-postgres-apt.log"
  apt-get install -y -q --no-install-recommends postgresql >>/tmp/setup-postgres-apt.log 2>&1 ||
    die "apt-get install postgresql failed; see /tmp/setup-postgres-apt.log"
}
found || die "postgresql was installed but no initdb was found under /usr/lib/postgresql/*/bin"
log "ready: $(compgen -G '/usr/lib/postgresql/*/bin/postgres' | head -1)"
