"""Signatures in the two shapes cosign reads: a raw ECDSA signature over the simple-signing payload (base64 in the
layer annotation), and a DSSE envelope over an in-toto Statement (`keyid` empty, as `cosign attest --key` writes
it). securesystemslib signs and verifies (its PAE, its keys); nothing cryptographic is written here."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from typing import Any

from securesystemslib.dsse import Envelope
from securesystemslib.exceptions import UnverifiedSignatureError, VerificationError
from securesystemslib.signer import Key, Signature, Signer

from pytorch_cuda.release.cosign_layout import compact


def sign_raw(signer: Signer, payload: bytes) -> bytes:
    """The DER signature over `payload` (ECDSA P-256, SHA-256)."""
    return bytes.fromhex(signer.sign(payload).signature)


def verifying_key(keys: Sequence[Key], data: bytes, signature: bytes) -> Key | None:
    """The first key of `keys` whose signature over `data` `signature` is, or None."""
    for key in keys:
        try:
            key.verify_signature(Signature(key.keyid, signature.hex()), data)
        except (UnverifiedSignatureError, VerificationError):
            continue
        return key
    return None


def dsse_envelope(signer: Signer, payload: bytes, payload_type: str) -> bytes:
    """{"payloadType", "payload", "signatures": [{"keyid": "", "sig"}]}, cosign's order and empty keyid."""
    pae = Envelope(payload, payload_type, {}).pae()
    signature = base64.b64encode(sign_raw(signer, pae)).decode()
    return compact(
        {
            "payloadType": payload_type,
            "payload": base64.b64encode(payload).decode(),
            "signatures": [{"keyid": "", "sig": signature}],
        }
    )


class EnvelopeError(ValueError):
    pass


def open_envelope(data: bytes, keys: Sequence[Key]) -> tuple[str, bytes, Key | None]:
    """(payload type, payload, the policy key that signed it or None); EnvelopeError when it is no envelope."""
    try:
        document: dict[str, Any] = json.loads(data)
        payload = base64.b64decode(document["payload"], validate=True)
        payload_type = str(document["payloadType"])
        signatures = [base64.b64decode(s["sig"], validate=True) for s in document.get("signatures") or []]
    except (ValueError, KeyError, TypeError, binascii.Error) as exc:
        raise EnvelopeError(f"not a DSSE envelope ({type(exc).__name__}: {exc})") from exc
    pae = Envelope(payload, payload_type, {}).pae()
    for signature in signatures:
        key = verifying_key(keys, pae, signature)
        if key is not None:
            return payload_type, payload, key
    return payload_type, payload, None
