#!/usr/bin/env bash
# Install docker buildx, for the test that runs `docker buildx bake --print` on build.py bake's file
# (tests/pytorch_cuda/cli/test_bake_buildx.py). Debian 12 has no buildx package; Debian 13 (trixie) has
# docker-buildx, a Go binary that needs only libc6 >= 2.34. It is fetched through apt from trixie's signed index
# (a private package list: the machine's sources stay as they are), its bytes are checked against the pin below,
# and only the binary is unpacked, to $PYTORCH_CUDA_BUILDX (default /opt/pytorch-cuda/buildx/docker-buildx), which
# is no Docker CLI plugin folder: no docker client on this machine starts to use it, build.py's builds stay on the
# engine's own client. It runs standalone (`docker-buildx bake --print -f FILE`), without an engine.
# Needs root for apt-get. Changes nothing that already works: a binary of the pinned version is kept.
# `--current` installs the second buildx the comparison runs with, a current one: Debian sid's docker-buildx
# (0.29.1), the same way, to $PYTORCH_CUDA_BUILDX_CURRENT (default /opt/pytorch-cuda/buildx-current/docker-buildx),
# where the test looks for it. sid moves on: when it no longer serves the pinned version, pin the one it serves.
set -euo pipefail
log() { printf 'setup-buildx: %s\n' "$*"; }
die() { printf 'setup-buildx: error: %s\n' "$*" >&2; exit 2; }

suite=trixie
version="0.13.1+ds1-3"  # trixie's docker-buildx (buildx 0.13.1)
sha256="fcf8c48204d1603c8f209451d7827eb91bf30759578baf7704e9e1a87e5f1d7f"  # its .deb, amd64
dest="${PYTORCH_CUDA_BUILDX:-/opt/pytorch-cuda/buildx/docker-buildx}"
case "${1:-}" in
  "") ;;
  --current)
    suite=sid
    version="0.29.1+ds1-4"  # sid's docker-buildx (buildx 0.29.1), fetched on 2026-12-07
    sha256="6103bcc4eab8169ae679f806d3949ffc99a1545a61fddea6124da826f115f2bf"
    dest="${PYTORCH_CUDA_BUILDX_CURRENT:-/opt/pytorch-cuda/buildx-current/docker-buildx}" ;;
  *) die "unknown argument $1 (no argument: trixie's buildx 0.13.1; --current: sid's 0.29.1)" ;;
esac

if [ -x "$dest" ] && "$dest" version 2>/dev/null | grep -qF "${version%-*}"; then
  log "already installed: $("$dest" version)"
  exit 0
fi
if [ "$suite" = trixie ] && docker buildx version > /dev/null 2>&1; then  # GitHub's runners: the client's plugin
  log "the docker client has buildx already: $(docker buildx version)"
  exit 0
fi
arch="$(dpkg --print-architecture)"
[ "$arch" = amd64 ] || die "the pinned docker-buildx is amd64's; this machine is $arch"
[ "$(id -u)" -eq 0 ] || die "run as root (sudo scripts/setup-buildx.sh): it fetches a Debian package with apt-get"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" \
  > "$work/sources.list"
apt=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o APT::Sandbox::User=root)
log "reading $suite's package index (signed by debian-archive-keyring)"
apt-get "${apt[@]}" update -q > "$work/apt.log" 2>&1 || {
  cat "$work/apt.log" >&2
  die "apt-get update failed (is deb.debian.org reachable?)"
}
(cd "$work" && apt-get "${apt[@]}" download "docker-buildx=$version" >> "$work/apt.log" 2>&1) || {
  cat "$work/apt.log" >&2
  die "$suite no longer serves docker-buildx $version; pin here the version it serves and its SHA256"
}
deb=("$work"/docker-buildx_*.deb)
echo "$sha256  ${deb[0]}" | sha256sum --check --quiet - || die "${deb[0]} does not match the pinned SHA256"
dpkg-deb -x "${deb[0]}" "$work/root"
install -D -m 0755 "$work/root/usr/libexec/docker/cli-plugins/docker-buildx" "$dest"
log "ready: $dest ($("$dest" version))"
