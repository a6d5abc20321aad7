"""Sign an image digest and attest its SBOM and provenance: DSSE envelopes (securesystemslib) pushed beside the
image as OCI artifacts whose `subject` is the image, tagged `sha256-<hex>.{sig,sbom,provenance}`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from securesystemslib.dsse import Envelope
from securesystemslib.signer import Signer

from pytorch_cuda.release.registry_client import (
    Manifest,
    RegistryAccessError,
    RegistryClient,
    open_image,
    reference,
)
from pytorch_cuda.release.statements import (
    PROVENANCE,
    SBOM,
    SIGNATURE,
    BuildRun,
    Kind,
    attachment_tag,
    canonical,
    provenance,
    signature_payload,
    statement,
)

DSSE_MEDIA_TYPE = "application/vnd.dsse.envelope.v1+json"
KIND_ANNOTATION = "dev.pytorch-cuda.release.kind"


@dataclass(frozen=True)
class Attached:
    kind: str
    ref: str  # repository:sha256-<hex>.<kind>
    digest: str


def envelope(kind: Kind, payload: Mapping[str, Any], signer: Signer) -> bytes:
    dsse = Envelope(canonical(payload), kind.payload_type, {})
    dsse.sign(signer)
    return canonical(dsse.to_dict())


def image_labels(client: RegistryClient, image: Manifest) -> dict[str, str]:
    """The image config's labels (none for an index: a multi-platform image has one config per platform)."""
    document = json.loads(image.raw)
    config = document.get("config")
    if not isinstance(config, dict) or "digest" not in config:
        return {}
    blob = json.loads(client.blob(reference(image.ref), str(config["digest"])))
    labels = (blob.get("config") or {}).get("Labels") or {}
    return {str(key): str(value) for key, value in labels.items()}


def sign_image(
    image_ref: str,
    signer: Signer,
    sbom: Mapping[str, Any],
    run: BuildRun,
    materials: Mapping[str, str] | None = None,
) -> tuple[str, list[Attached]]:
    """Sign the digest `image_ref` names (or its tag resolves to now) and attach SBOM and provenance."""
    ref = reference(image_ref)
    client, image = open_image(image_ref)
    if sbom.get("bomFormat") != "CycloneDX":
        raise RegistryAccessError(
            cause="the SBOM is not a CycloneDX document (no bomFormat: CycloneDX)",
            fix="give the build's SBOM, build-output/sbom-<variant>.cdx.json (or /etc/pytorch-cuda/sbom.cdx.json)",
        )
    repository, digest = ref.repository, image.digest
    payloads: list[tuple[Kind, dict[str, Any]]] = [
        (SIGNATURE, signature_payload(repository, digest)),
        (SBOM, statement(repository, digest, str(SBOM.predicate_type), sbom)),
        (
            PROVENANCE,
            statement(
                repository,
                digest,
                str(PROVENANCE.predicate_type),
                provenance(image_labels(client, image), run, materials or {}),
            ),
        ),
    ]
    attached = []
    for kind, payload in payloads:
        tag = attachment_tag(digest, kind)
        annotations = {KIND_ANNOTATION: kind.name, "org.opencontainers.image.ref.name": tag}
        pushed = client.attach(image, tag, envelope(kind, payload, signer), DSSE_MEDIA_TYPE, annotations)
        attached.append(Attached(kind.name, f"{repository}:{tag}", pushed))
    return digest, attached
