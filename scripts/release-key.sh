#!/usr/bin/env bash
# Sourced by release.yml's signing steps: sets $key to the release signer, or fails the step; never skips.
#   RELEASE_SIGNER_URI       a KMS/HSM signer URI (awskms:, gcpkms:, azurekms:, hsm:, hv:): used as it is;
#   RELEASE_SIGNING_KEY      else a passphrase-encrypted PEM private key (with RELEASE_KEY_PASSPHRASE), written to a
#                            mktemp -d folder under $RUNNER_TEMP that the EXIT trap removes, whatever happens next.
# Usage (in a step's bash): source scripts/release-key.sh; then pass --key "$key".
keys_dir=$(mktemp -d "${RUNNER_TEMP:-/tmp}/release-key.XXXXXX")
trap 'rm -rf "$keys_dir"' EXIT  # armed before the key exists
if [ -n "${RELEASE_SIGNER_URI:-}" ]; then
  key="$RELEASE_SIGNER_URI"
elif [ -n "${RELEASE_SIGNING_KEY:-}" ] && [ -n "${RELEASE_KEY_PASSPHRASE:-}" ]; then
  key="$keys_dir/release.key"
  (umask 077 && printf '%s\n' "$RELEASE_SIGNING_KEY" > "$key")
else
  echo "::error::no release key: set the release environment's variable RELEASE_SIGNER_URI (KMS/HSM), or its secrets RELEASE_SIGNING_KEY and RELEASE_KEY_PASSPHRASE (docs/release.md, Keys)"
  exit 1
fi
