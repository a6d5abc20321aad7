"""Release an image you can verify: promote the tested digest, sign and attest it, verify it (docs/release.md)."""
