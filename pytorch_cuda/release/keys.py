"""The release key: ECDSA P-256 (cosign's default key type, which `cosign verify --key` reads), made and read by
pyca/cryptography and securesystemslib; no cryptography is written here.

A signer comes from either
- a passphrase-encrypted PEM private key file (PKCS#8; the passphrase in $RELEASE_KEY_PASSPHRASE), or
- a securesystemslib signer URI: a KMS or HSM key (`awskms:...`, `gcpkms:...`, `azurekms:...`, `hsm:...`,
  `hv:...`), whose private key never leaves the service.
The public key is a PEM file to publish (the repository's is keys/release.pub).
"""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import (
    BestAvailableEncryption,
    Encoding,
    PrivateFormat,
    PublicFormat,
    load_pem_private_key,
    load_pem_public_key,
)
from securesystemslib.signer import SIGNER_FOR_URI_SCHEME, CryptoSigner, Signer, SSlibKey

from pytorch_cuda.errors import UserError

PASSPHRASE_VARIABLE = "RELEASE_KEY_PASSPHRASE"
URI_SCHEMES = tuple(sorted(scheme for scheme in SIGNER_FOR_URI_SCHEME if scheme not in ("file2", "gnupg")))


class KeyFileError(UserError):
    """A key is missing, unreadable, not a key, or not the one its public key names."""


def _passphrase(purpose: str) -> bytes:
    value = os.environ.get(PASSPHRASE_VARIABLE, "")
    if not value:
        raise KeyFileError(
            cause=f"${PASSPHRASE_VARIABLE} is empty, so the private key cannot be {purpose}",
            fix=f"export {PASSPHRASE_VARIABLE} (the release environment's secret in CI), or sign with a KMS/HSM "
            f"key URI ({', '.join(f'{s}:' for s in URI_SCHEMES)})",
        )
    return value.encode()


def generate(private_path: Path, public_path: Path) -> SSlibKey:
    """Write a new ECDSA P-256 key pair, the private key encrypted with $RELEASE_KEY_PASSPHRASE; never overwrite."""
    for path in (private_path, public_path):
        if path.exists():
            raise KeyFileError(
                cause=f"{path} exists already",
                fix="choose another path, or remove it yourself if you mean to replace the release key",
            )
    private_key = ec.generate_private_key(ec.SECP256R1())
    encrypted = private_key.private_bytes(
        Encoding.PEM, PrivateFormat.PKCS8, BestAvailableEncryption(_passphrase("encrypted"))
    )
    descriptor = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as private_file:
        private_file.write(encrypted)
    public_path.write_bytes(private_key.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo))
    return SSlibKey.from_crypto(private_key.public_key())


def public_key(path: Path) -> SSlibKey:
    try:
        crypto_key = load_pem_public_key(path.read_bytes())
        return SSlibKey.from_crypto(crypto_key)
    except (OSError, ValueError) as exc:
        raise KeyFileError(
            cause=f"cannot read the public key {path} ({type(exc).__name__}: {exc})",
            fix="give the release's public key (PEM), e.g. keys/release.pub",
        ) from exc


def signer(key: str, public_path: Path) -> Signer:
    """The signer for `key`: a KMS/HSM URI, or the path of a passphrase-encrypted private key file."""
    expected = public_key(public_path)
    scheme = key.partition(":")[0]
    if scheme in URI_SCHEMES:
        try:
            return Signer.from_priv_key_uri(key, expected)
        except Exception as exc:  # each KMS client raises its own errors
            raise KeyFileError(
                cause=f"cannot open the signer {key} ({type(exc).__name__}: {exc})",
                fix="check the URI, the service's credentials and that the key matches " + str(public_path),
            ) from exc
    path = Path(key)
    try:
        private_key = load_pem_private_key(path.read_bytes(), _passphrase("decrypted"))
    except (OSError, ValueError, TypeError) as exc:
        raise KeyFileError(
            cause=f"cannot load the private key {path} ({type(exc).__name__}: {exc})",
            fix=f"give the passphrase-encrypted PEM key written by `release keygen` and its passphrase in "
            f"${PASSPHRASE_VARIABLE}, or a KMS/HSM key URI",
        ) from exc
    found = SSlibKey.from_crypto(private_key.public_key())
    if found.keyid != expected.keyid:
        raise KeyFileError(
            cause=f"the private key {path} (key id {found.keyid[:16]}) does not match public key {public_path} "
            f"(key id {expected.keyid[:16]})",
            fix="give the private key that belongs to that public key",
        )
    return CryptoSigner(private_key, expected)
