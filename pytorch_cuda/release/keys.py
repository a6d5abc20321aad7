"""The release key pair (ed25519), made and read by securesystemslib and pyca/cryptography: no crypto here.

The private key is a PEM (PKCS#8) file readable by its owner only; the public key a PEM file to publish.
"""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.hazmat.primitives.serialization import (
    Encoding,
    PublicFormat,
    load_pem_private_key,
    load_pem_public_key,
)
from securesystemslib.signer import CryptoSigner, SSlibKey

from pytorch_cuda.errors import UserError


class KeyFileError(UserError):
    """A key file is missing, unreadable or not a key."""


def generate(private_path: Path, public_path: Path) -> SSlibKey:
    """Write a new ed25519 key pair; refuse to overwrite either file."""
    for path in (private_path, public_path):
        if path.exists():
            raise KeyFileError(
                cause=f"{path} exists already",
                fix="choose another path, or remove it yourself if you mean to replace the release key",
            )
    signer = CryptoSigner.generate_ed25519()
    descriptor = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as private_file:
        private_file.write(signer.private_bytes)
    public_pem = (
        load_pem_private_key(signer.private_bytes, None)
        .public_key()
        .public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    )
    public_path.write_bytes(public_pem)
    return signer.public_key


def public_key(path: Path) -> SSlibKey:
    try:
        crypto_key = load_pem_public_key(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise KeyFileError(
            cause=f"cannot read the public key {path} ({type(exc).__name__}: {exc})",
            fix="give the release's public key (PEM), e.g. docs/release.md's keys/release.pub",
        ) from exc
    return SSlibKey.from_crypto(crypto_key)


def signer(private_path: Path, public_path: Path) -> CryptoSigner:
    key = public_key(public_path)
    try:
        return CryptoSigner.from_priv_key_uri(f"file2:{private_path}", key)
    except (OSError, ValueError) as exc:
        raise KeyFileError(
            cause=f"cannot load the private key {private_path} for {public_path} ({type(exc).__name__}: {exc})",
            fix="give the private key that belongs to that public key (PEM, PKCS#8, no passphrase)",
        ) from exc
