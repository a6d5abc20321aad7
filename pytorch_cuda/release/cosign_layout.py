"""cosign's registry layout, byte for byte (sigstore/cosign specs/SIGNATURE_SPEC.md and ATTESTATION_SPEC.md):

- `R:sha256-<hex>.sig`: an OCI image manifest whose layer is the simple-signing payload
  (`application/vnd.dev.cosign.simplesigning.v1+json`, the JSON sigstore's payload.Cosign marshals), its
  base64 ECDSA signature in the layer annotation `dev.cosignproject.cosign/signature`;
- `R:sha256-<hex>.att`: an OCI image manifest with one DSSE envelope layer per attestation
  (`application/vnd.dsse.envelope.v1+json`), each annotated with its `predicateType` and an empty
  `dev.cosignproject.cosign/signature` (cosign's reader requires the key; the signature is in the envelope);
- the config blob is the one go-containerregistry's empty image gets when layers are appended (233 bytes for
  one layer), so the manifest is the one cosign writes.

Each manifest also carries `subject` (the signed image) and `artifactType`, so it is an OCI 1.1 referrer;
cosign ignores both fields.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
SIMPLE_SIGNING = "application/vnd.dev.cosign.simplesigning.v1+json"
DSSE_ENVELOPE = "application/vnd.dsse.envelope.v1+json"
SIGNATURE_ANNOTATION = "dev.cosignproject.cosign/signature"
PREDICATE_ANNOTATION = "predicateType"
SIG_ARTIFACT_TYPE = "application/vnd.dev.cosign.artifact.sig.v1+json"
ATT_ARTIFACT_TYPE = DSSE_ENVELOPE
SIGNATURE_TYPE = "cosign container image signature"
_ZERO_TIME = "0001-01-01T00:00:00Z"


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def compact(document: Any) -> bytes:
    """Go's encoding/json: no spaces, keys in the order given (dicts built in the Go struct's field order)."""
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()


def tag_for(digest: str, suffix: str) -> str:
    """cosign's tag-based discovery: `sha256:<hex>` -> `sha256-<hex>.<suffix>` (no suffix: the referrers tag)."""
    name = digest.replace(":", "-")
    return f"{name}.{suffix}" if suffix else name


def simple_signing_payload(repository: str, digest: str) -> bytes:
    """sigstore's payload.Cosign{Image: repository@digest} as json.Marshal writes it (no optional claims)."""
    critical = {"identity": {"docker-reference": repository}, "image": {"docker-manifest-digest": digest}}
    return compact({"critical": {**critical, "type": SIGNATURE_TYPE}, "optional": None})


def config_blob(layer_digests: Sequence[str]) -> bytes:
    """go-containerregistry's ConfigFile of empty.Image after mutate.Append of these (uncompressed) layers."""
    return compact(
        {
            "architecture": "",
            "created": _ZERO_TIME,
            "history": [{"created": _ZERO_TIME} for _ in layer_digests],
            "os": "",
            "rootfs": {"type": "layers", "diff_ids": list(layer_digests)},
            "config": {},
        }
    )


@dataclass(frozen=True)
class Blob:
    data: bytes
    media_type: str
    annotations: Mapping[str, str] = field(default_factory=dict)

    @property
    def digest(self) -> str:
        return sha256(self.data)

    def descriptor(self) -> dict[str, Any]:
        described: dict[str, Any] = {"mediaType": self.media_type, "size": len(self.data), "digest": self.digest}
        if self.annotations:
            described["annotations"] = dict(self.annotations)
        return described


@dataclass(frozen=True)
class Subject:
    media_type: str
    digest: str
    size: int

    def descriptor(self) -> dict[str, Any]:
        return {"mediaType": self.media_type, "size": self.size, "digest": self.digest}


@dataclass(frozen=True)
class Artifact:
    """A manifest to push, with the blobs it names (config first)."""

    raw: bytes
    blobs: tuple[Blob, ...]
    artifact_type: str

    @property
    def digest(self) -> str:
        return sha256(self.raw)


def artifact_manifest(layers: Sequence[Blob], subject: Subject | None, artifact_type: str | None) -> Artifact:
    """cosign's manifest (schemaVersion, mediaType, config, layers), then OCI 1.1's `subject` and `artifactType`."""
    config = Blob(config_blob([layer.digest for layer in layers]), OCI_CONFIG)
    document: dict[str, Any] = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": config.descriptor(),
        "layers": [layer.descriptor() for layer in layers],
    }
    if subject is not None:
        document["subject"] = subject.descriptor()
    if artifact_type is not None:
        document["artifactType"] = artifact_type
    return Artifact(compact(document), (config, *layers), artifact_type or OCI_CONFIG)


def signature_layer(payload: bytes, signature_der: bytes) -> Blob:
    encoded = base64.b64encode(signature_der).decode()
    return Blob(payload, SIMPLE_SIGNING, {SIGNATURE_ANNOTATION: encoded})


def attestation_layer(envelope: bytes, predicate_type: str) -> Blob:
    return Blob(envelope, DSSE_ENVELOPE, {SIGNATURE_ANNOTATION: "", PREDICATE_ANNOTATION: predicate_type})


def referrers_index(existing: bytes | None, added: Sequence[Artifact]) -> bytes:
    """The OCI distribution spec's referrers tag schema: an image index at `sha256-<hex>` listing each referrer's
    descriptor with its artifactType; a new artifact replaces the entries of its artifactType."""
    entries: list[dict[str, Any]] = []
    if existing is not None:
        entries = list(json.loads(existing).get("manifests") or [])
    replaced = {artifact.artifact_type for artifact in added}
    entries = [entry for entry in entries if entry.get("artifactType") not in replaced]
    for artifact in added:
        entries.append(
            {"mediaType": OCI_MANIFEST, "digest": artifact.digest, "size": len(artifact.raw),
             "artifactType": artifact.artifact_type}
        )  # fmt: skip
    return compact({"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": entries})
