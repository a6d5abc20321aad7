#!/usr/bin/env bash
# Install Debian's chromium, which the report tests use to open report.html headless
# (no console errors, charts present, a screenshot). Needs root. Changes nothing that already works.
set -euo pipefail
log() { printf 'setup-browser: %s\n' "$*"; }
die() { printf 'setup-browser: error: %s\n' "$*" >&2; exit 2; }

# Debian's chromium first; a preinstalled Chrome (GitHub's Ubuntu runners) serves the same tests.
for name in chromium chromium-browser google-chrome google-chrome-stable; do
  if command -v "$name" >/dev/null; then
    log "already installed: $("$name" --version 2>/dev/null | head -1)"
    exit 0
  fi
done
[ "$(id -u)" -eq 0 ] || die "chromium is missing; run as root (sudo scripts/setup-browser.sh) to install it"
log "installing Debian's chromium with apt-get"
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >/tmp/setup-browser-apt.log 2>&1; then
  log "apt-get install failed; refreshing the package lists and trying again"
  apt-get update -q >>/tmp/setup-browser-apt.log 2>&1 || die "apt-get update failed; see /tmp/setup-browser-apt.log"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium >>/tmp/setup-browser-apt.log 2>&1 \
    || die "apt-get install chromium failed; see /tmp/setup-browser-apt.log"
fi
log "ready: $(chromium --version 2>/dev/null | head -1)"
