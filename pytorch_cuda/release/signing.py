"""Sign a released digest in the formats the ecosystem reads, and bind its tags in the signed release index:

- `R:sha256-<hex>.sig`: cosign's simple-signing signature (`cosign verify --key keys/release.pub R:TAG`);
- `R:sha256-<hex>.att`: the CycloneDX SBOM and SLSA v1 provenance Statements as DSSE envelopes
  (`cosign verify-attestation --key ... --type slsaprovenance1|cyclonedx R:TAG`);
- `R:sha256-<hex>`: the OCI referrers tag schema's index listing both (`oras discover R:TAG` on a registry
  without the referrers API: GHCR, Distribution 2.8);
- `R:<index_tag>`: the TUF release index, each given tag bound to this digest (release_index.py), written by
  compare-and-swap (`write_signature_index`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from securesystemslib.signer import Signer

from pytorch_cuda.errors import EXIT_CHECKS_FAILED, UserError
from pytorch_cuda.oci.image_config import config_digest, image_config
from pytorch_cuda.oci.registry_client import RegistryAccessError, RegistryClient, open_image, reference
from pytorch_cuda.release import release_index
from pytorch_cuda.release.cosign_layout import (
    ATT_ARTIFACT_TYPE,
    OCI_INDEX,
    SIG_ARTIFACT_TYPE,
    Artifact,
    Subject,
    artifact_manifest,
    attestation_layer,
    compact,
    referrers_index,
    signature_layer,
    simple_signing_payload,
    tag_for,
)
from pytorch_cuda.release.envelopes import dsse_envelope, sign_raw
from pytorch_cuda.release.statements import (
    IN_TOTO_PAYLOAD,
    PROVENANCE_PREDICATE,
    SBOM_PREDICATE,
    BuildRun,
    provenance,
    statement,
)
from pytorch_cuda.release.trusted_root import TrustedRoot


@dataclass(frozen=True)
class Attached:
    kind: str  # sig, att, referrers, index
    ref: str
    digest: str


def _push(client: RegistryClient, repository: str, tag: str, artifact: Artifact, media_type: str) -> Attached:
    for blob in artifact.blobs:
        client.push_blob(reference(f"{repository}:{tag}"), blob.data)
    pushed = client.push_manifest(f"{repository}:{tag}", artifact.raw, media_type)
    if pushed and pushed != artifact.digest:
        raise RegistryAccessError(
            cause=f"the registry stored {repository}:{tag} as {pushed}, not {artifact.digest} (it rewrote the bytes)",
            fix="use a registry that stores manifests as pushed (OCI distribution spec)",
        )
    return Attached(tag.rpartition(".")[2] if "." in tag else "referrers", f"{repository}:{tag}", artifact.digest)


def image_labels(client: RegistryClient, raw: bytes, repository: str) -> dict[str, str]:
    """The image config's labels (none for an index: a multi-platform image has one config per platform)."""
    digest = config_digest(raw)
    if digest is None:
        return {}
    labels = (image_config(client, repository, digest).get("config") or {}).get("Labels") or {}
    return {str(key): str(value) for key, value in labels.items()}


def sign_image(
    image_ref: str,
    signer: Signer,
    sbom: Mapping[str, Any],
    run: BuildRun,
    *,
    tags: Sequence[str],
    index: IndexPlan,
) -> tuple[str, list[Attached]]:
    """Sign the digest `image_ref` names (or its tag resolves to now), attest it, bind `tags` to it."""
    if sbom.get("bomFormat") != "CycloneDX":
        raise RegistryAccessError(
            cause="the SBOM is not a CycloneDX document (no bomFormat: CycloneDX)",
            fix="give the build's SBOM, build-output/sbom-<variant>.cdx.json (or /etc/pytorch-cuda/sbom.cdx.json)",
        )
    client, image = open_image(image_ref)
    repository, digest = reference(image_ref).repository, image.digest
    subject = Subject(image.media_type, digest, len(image.raw))
    payload = simple_signing_payload(repository, digest)
    signature = artifact_manifest([signature_layer(payload, sign_raw(signer, payload))], subject, SIG_ARTIFACT_TYPE)
    statements = [
        (SBOM_PREDICATE, statement(repository, digest, SBOM_PREDICATE, sbom)),
        (PROVENANCE_PREDICATE, statement(repository, digest, PROVENANCE_PREDICATE, provenance(run))),
    ]
    layers = [
        attestation_layer(dsse_envelope(signer, compact(document), IN_TOTO_PAYLOAD), predicate)
        for predicate, document in statements
    ]
    attestations = artifact_manifest(layers, subject, ATT_ARTIFACT_TYPE)
    attached = [
        _push(client, repository, tag_for(digest, "sig"), signature, signature_media_type()),
        _push(client, repository, tag_for(digest, "att"), attestations, signature_media_type()),
    ]
    existing = client.manifest(f"{repository}:{tag_for(digest, '')}")
    listing = referrers_index(existing.raw if existing else None, [signature, attestations])
    pushed = client.push_manifest(f"{repository}:{tag_for(digest, '')}", listing, OCI_INDEX)
    attached.append(Attached("referrers", f"{repository}:{tag_for(digest, '')}", pushed))
    if tags:
        bindings = [release_index.Binding(tag, digest, len(image.raw)) for tag in tags]
        attached.append(write_signature_index(client, repository, index, signer, bindings))
    return digest, attached


@dataclass(frozen=True)
class IndexPlan:
    """Where the index is, what it is rooted in, and how long the new timestamp lives."""

    tag: str
    root: TrustedRoot
    lifetime: timedelta = release_index.TIMESTAMP_LIFETIME


class IndexMovedError(UserError):
    """The index changed between this writer's read and its write. Exit status 1: nothing of ours was lost or
    half-written, the other writer's bindings stand; run the step again."""

    exit_status = EXIT_CHECKS_FAILED


def write_signature_index(
    client: RegistryClient, repository: str, plan: IndexPlan, signer: Signer, bindings: Sequence[release_index.Binding]
) -> Attached:
    """Read the index, extend it, and write it only if the registry still serves the one read (compare-and-swap:
    the registry API has no conditional PUT, so the compare is a re-read just before the write and a read-back
    after it; release.yml runs every index writer in one concurrency group, so the two never race there)."""
    ref = f"{repository}:{plan.tag}"
    read = release_index.fetch(client, repository, plan.tag)
    files = release_index.updated(
        read.files, plan.root, signer, bindings, repository=repository, now=datetime.now(UTC), lifetime=plan.lifetime
    )
    new = release_index.artifact(files)
    for blob in new.blobs:
        client.push_blob(reference(ref), blob.data)
    before = client.manifest(ref)
    if (before.digest if before else None) != read.digest:
        raise _moved(ref, read.digest, before.digest if before else None, "before this write")
    written = _push(client, repository, plan.tag, new, signature_media_type())
    after = client.manifest(ref)
    if after is None or after.digest != new.digest:
        raise _moved(ref, new.digest, after.digest if after else None, "right after this write (it was overwritten)")
    return Attached("index", written.ref, written.digest)


def _moved(ref: str, expected: str | None, found: str | None, when: str) -> IndexMovedError:
    return IndexMovedError(
        cause=f"the release index {ref} moved {when}: expected {expected or 'no index'}, found {found or 'none'}; "
        "writing on would drop the other writer's tag bindings",
        fix="run the step again: it re-reads the index and adds its tags to the one now there; if nobody else "
        "writes the index, find who does (docs/release.md, 'Index updates')",
    )


def refresh_index(repository: str, signer: Signer, plan: IndexPlan) -> Attached:
    """Re-sign the release index as it is (same bindings; the roles `signer` holds re-signed, versions bumped,
    expiries renewed): daily, by release.yml's refresh-index job with the timestamp key."""
    client = RegistryClient.for_ref(reference(f"{repository}:{plan.tag}"))
    if release_index.fetch(client, repository, plan.tag).digest is None:
        raise RegistryAccessError(
            cause=f"{repository}:{plan.tag} holds no release index to refresh",
            fix="sign a release first (`build.py release sign IMAGE@sha256:... --tag T`), which creates it",
        )
    return write_signature_index(client, repository, plan, signer, [])


def signature_media_type() -> str:
    return "application/vnd.oci.image.manifest.v1+json"
