"""Verify a released image: its digest is signed by the release key, and its SBOM and SLSA provenance are
attested by that key for that very digest. Any failure names the image, the digest and what is wrong."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from securesystemslib.dsse import Envelope
from securesystemslib.exceptions import FormatError, VerificationError
from securesystemslib.signer import Key

from pytorch_cuda.errors import EXIT_CHECKS_FAILED, UserError
from pytorch_cuda.release.attestations import DSSE_MEDIA_TYPE
from pytorch_cuda.release.registry_client import Manifest, RegistryClient, open_image, reference
from pytorch_cuda.release.statements import (
    KINDS,
    PROVENANCE,
    SBOM,
    SIGNATURE,
    SIGNATURE_TYPE,
    STATEMENT_TYPE,
    Kind,
    attachment_tag,
)

FIX = (
    "do not use this image: it is not the one that was released and signed. Pull the release by the digest in "
    "its release notes, or ask the publisher whether the tag was moved"
)


class VerificationFailedError(UserError):
    """The image is not signed and attested by the release key. Exit status 1."""

    exit_status = EXIT_CHECKS_FAILED


@dataclass(frozen=True)
class Verified:
    image: str
    digest: str
    keyid: str
    sbom_components: int
    builder_id: str
    revision: str


def _fail(image: str, digest: str, what: str) -> VerificationFailedError:
    return VerificationFailedError(cause=f"{image} (digest {digest}) failed verification: {what}", fix=FIX)


def _payload(client: RegistryClient, image: str, target: Manifest, kind: Kind, key: Key) -> dict[str, Any]:
    """The verified payload of the `kind` attachment of `target`, or a VerificationFailedError."""
    ref = reference(image)
    tag = f"{ref.repository}:{attachment_tag(target.digest, kind)}"
    found = client.manifest(tag)
    if found is None:
        raise _fail(
            image,
            target.digest,
            f"it has no {kind.name} ({tag} does not exist): this digest was never "
            "signed, or the tag now points at another image than the signed one",
        )
    document = json.loads(found.raw)
    subject = (document.get("subject") or {}).get("digest")
    layers = document.get("layers") or []
    if subject != target.digest or len(layers) != 1 or layers[0].get("mediaType") != DSSE_MEDIA_TYPE:
        raise _fail(image, target.digest, f"{tag} is not a DSSE attachment of this digest (its subject is {subject})")
    try:
        dsse = Envelope.from_dict(json.loads(client.blob(ref, str(layers[0]["digest"]))))
    except (KeyError, TypeError, ValueError, FormatError) as exc:
        raise _fail(image, target.digest, f"the {kind.name} blob is not a DSSE envelope ({exc})") from exc
    if dsse.payload_type != kind.payload_type:
        raise _fail(image, target.digest, f"the {kind.name} envelope has payload type {dsse.payload_type!r}")
    try:
        dsse.verify([key], 1)
    except VerificationError as exc:
        raise _fail(
            image,
            target.digest,
            f"the {kind.name} envelope's signature does not verify with the release "
            f"key {key.keyid[:16]}... ({exc}): it was signed by another key, or altered",
        ) from exc
    payload: dict[str, Any] = json.loads(dsse.payload)
    return payload


def _check_statement(image: str, digest: str, kind: Kind, payload: dict[str, Any]) -> dict[str, Any]:
    hexdigest = digest.partition(":")[2]
    subjects = [s.get("digest", {}).get("sha256") for s in payload.get("subject") or []]
    if payload.get("_type") != STATEMENT_TYPE or payload.get("predicateType") != kind.predicate_type:
        raise _fail(image, digest, f"the {kind.name} is not an in-toto Statement of {kind.predicate_type}")
    if hexdigest not in subjects:
        raise _fail(image, digest, f"the signed {kind.name} statement is about sha256:{subjects}, not this digest")
    predicate: dict[str, Any] = payload.get("predicate") or {}
    return predicate


def verify_image(image: str, key: Key, builder_id: str | None = None) -> Verified:
    client, target = open_image(image)
    payloads = {kind.name: _payload(client, image, target, kind, key) for kind in KINDS}
    signed = payloads[SIGNATURE.name].get("critical") or {}
    if (signed.get("image") or {}).get("docker-manifest-digest") != target.digest or signed.get(
        "type"
    ) != SIGNATURE_TYPE:
        raise _fail(image, target.digest, f"the signature is over {signed.get('image')}, not this digest")
    sbom = _check_statement(image, target.digest, SBOM, payloads[SBOM.name])
    if sbom.get("bomFormat") != "CycloneDX":
        raise _fail(image, target.digest, "the SBOM attestation holds no CycloneDX document")
    built = _check_statement(image, target.digest, PROVENANCE, payloads[PROVENANCE.name])
    builder = str(((built.get("runDetails") or {}).get("builder") or {}).get("id", ""))
    if builder_id is not None and builder != builder_id:
        raise _fail(image, target.digest, f"the provenance names the builder {builder!r}, not {builder_id!r}")
    revisions = [
        d["digest"]["gitCommit"]
        for d in (built.get("buildDefinition") or {}).get("resolvedDependencies") or []
        if "gitCommit" in (d.get("digest") or {})
    ]
    return Verified(
        image, target.digest, key.keyid, len(sbom.get("components") or []), builder, revisions[0] if revisions else ""
    )
