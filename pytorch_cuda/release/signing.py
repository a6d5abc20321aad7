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

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from securesystemslib.signer import Signer

from pytorch_cuda.errors import EXIT_CHECKS_FAILED, UserError
from pytorch_cuda.oci.image_config import config_digest, image_config
from pytorch_cuda.oci.registry_client import RegistryAccessError, RegistryClient, open_image, reference
from pytorch_cuda.release import index_journal, release_index
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
from pytorch_cuda.release.index_client import IndexFailureError, VerifiedIndex, cache_dir, verified_index
from pytorch_cuda.release.index_conflict import check_no_rival
from pytorch_cuda.release.statements import (
    IN_TOTO_PAYLOAD,
    PROVENANCE_PREDICATE,
    SBOM_PREDICATE,
    BuildRun,
    provenance,
    statement,
)
from pytorch_cuda.release.trusted_root import TrustedRoot, rotated_from


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
    timestamp: Signer | None = None,
) -> tuple[str, list[Attached]]:
    """Sign the digest `image_ref` names (or its tag resolves to now), attest it, bind `tags` to it."""
    if sbom.get("bomFormat") != "CycloneDX":
        raise RegistryAccessError(
            cause="the SBOM is not a CycloneDX document (no bomFormat: CycloneDX)",
            fix="give the build's SBOM, build-output/sbom-<variant>.cdx.json (or /etc/pytorch-cuda/sbom.cdx.json)",
        )
    client, image = open_image(image_ref)
    repository, digest = reference(image_ref).repository, image.digest
    signers = release_index.IndexSigners(timestamp or signer, signer)
    if tags:  # every key checked against the index's trusted root before anything is written
        _, current = current_index(client, repository, index, "sign")
        trusted = release_index.newest_root(current, index.root)
        release_index.check_signers(trusted, signers, True, index.root.path.name)
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
        attached.append(write_signature_index(client, repository, index, signers, bindings))
    return digest, attached


@dataclass(frozen=True)
class IndexPlan:
    """Where the index is, what it is rooted in, and how long the new timestamp lives."""

    tag: str
    root: TrustedRoot
    lifetime: timedelta = release_index.TIMESTAMP_LIFETIME


class IndexMovedError(UserError):
    """Other writers kept replacing the index for MOST_WRITE_TRIES rounds. Exit status 1: the other writers'
    bindings stand; run the step again."""

    exit_status = EXIT_CHECKS_FAILED


class IndexNotTrustedError(UserError):
    """The index in the registry fails the TUF client's checks (expired, older than seen or the committed floor,
    signed by other keys, another repository's): it is never extended or re-signed. Exit status 1."""

    exit_status = EXIT_CHECKS_FAILED


MOST_WRITE_TRIES = 5
SETTLE_SECONDS = 1.0  # read the index back after this long; a later PUT is found in the journal (index_journal.py)


def current_index(
    client: RegistryClient, repository: str, plan: IndexPlan, verb: str
) -> tuple[release_index.Fetched, VerifiedIndex | None]:
    """The index in the registry, through the TUF client (this machine's cache, the committed root and floor)."""
    read = release_index.fetch(client, repository, plan.tag)
    if read.digest is None:
        return read, None
    try:
        try:
            return read, verified_index(read.files, plan.root, repository, cache_dir(repository))
        except IndexFailureError as failure:
            ancestor = rotated_from(plan.root, read.files)
            if ancestor is None or failure.reason.field != "release-index signature":
                raise
            # a rotation this checkout commits and the index does not carry yet: read the index under the root
            # it was signed with, which signed this checkout's root (TUF's chain); the next write publishes ours
            return read, verified_index(read.files, ancestor, repository, cache_dir(repository), root_history=False)
    except IndexFailureError as failure:
        reason = failure.reason
        raise IndexNotTrustedError(
            cause=f"{verb} refused the release index {repository}:{plan.tag} ({read.digest}): {reason.field}: "
            f"expected {reason.expected}, found {reason.found}"
            + (f" ({reason.why})" if reason.why else "")
            + ". Re-signing it would make an old, expired or foreign index look fresh",
            fix=failure.fix
            or "restore the newest index the release workflow wrote (its digest is in the run's summary) with "
            "`skopeo copy`, then run again; find who wrote this one (docs/release.md, 'Rollback floor')",
        ) from failure


def _served(
    client: RegistryClient, repository: str, plan: IndexPlan, written: str, bindings: Sequence[release_index.Binding]
) -> tuple[dict[str, str], bool]:
    """What the served index binds now, and whether it is the one written or a later one keeping every binding."""
    read, index = current_index(client, repository, plan, "the read-back")
    bound = index.bound() if index is not None else {}
    return bound, read.digest == written or (bool(bindings) and all(bound.get(b.tag) == b.digest for b in bindings))


def write_signature_index(
    client: RegistryClient,
    repository: str,
    plan: IndexPlan,
    signers: release_index.IndexSigners,
    bindings: Sequence[release_index.Binding],
    *,
    verb: str = "sign",
) -> Attached:
    """Read the index through the TUF client, extend it, write it (and its journal tag), and read it back after
    SETTLE_SECONDS; if another writer replaced it (the registry API has no conditional PUT), start again from the
    newer index; if this write replaced one another writer had written and read back (the journal says so), write
    again with its bindings; up to MOST_WRITE_TRIES times: every writer ends with its bindings, or fails loudly.
    A newer index that binds one of this step's tags to another digest (another release of that tag meanwhile)
    refuses this step (IndexConflictError): the other release stands whole, this one binds nothing."""
    ref = f"{repository}:{plan.tag}"
    seen: list[str] = []
    base: dict[str, str] | None = None  # the bindings when this step first read the index
    carried: list[release_index.Binding] = []  # other writers' bindings this step overwrote (index_journal.py)
    rebuild: VerifiedIndex | None = None  # refresh-index: the overwritten index to re-sign instead
    for _ in range(MOST_WRITE_TRIES):
        read, current = current_index(client, repository, plan, verb)
        current, rebuild = (rebuild, None) if rebuild is not None else (current, None)
        bound = current.bound() if current is not None else {}
        base = bound if base is None else base
        check_no_rival(ref, bindings, base, bound)
        restored = [b for b in carried if bound.get(b.tag) == base.get(b.tag) != b.digest]
        files = release_index.updated(current, plan.root, signers, [*bindings, *restored], repository=repository,
                                      now=datetime.now(UTC), lifetime=plan.lifetime)  # fmt: skip
        new = release_index.artifact(files)
        for blob in new.blobs:
            client.push_blob(reference(ref), blob.data)
        before = client.manifest(ref)
        if (before.digest if before else None) != read.digest:
            seen.append(before.digest if before else "none")
            continue  # moved since our read: extend the newer one
        written = _push(client, repository, plan.tag, new, signature_media_type())
        version = index_journal.timestamp_version(files)
        own = index_journal.record(client, repository, plan.tag, version, new)
        time.sleep(SETTLE_SECONDS)
        served, holds = _served(client, repository, plan, new.digest, bindings)
        if not holds:
            seen.append("an index without this write's bindings")
            continue
        lost = index_journal.overwritten(client, repository, index_tag=plan.tag, root=plan.root, version=version,
                                         own=own, base=base, served=served)  # fmt: skip
        if not lost:
            verified_index(files, plan.root, repository, cache_dir(repository))  # this machine's floor: what it wrote
            return Attached("index", written.ref, written.digest)
        seen.append(f"{lost[0].tag}, which this write overwrote")
        if signers.targets is not None:  # write again, with the overwritten bindings
            carried += [binding for entry in lost for binding in entry.bindings]
        elif len(lost) == 1 and not bindings:  # a refresh: re-sign the overwritten index instead of ours
            rebuild = lost[0].index
        else:
            raise IndexMovedError(
                cause=f"this {verb} overwrote the release index {ref} that other writers had written "
                f"({', '.join(entry.tag for entry in lost)}), and its key cannot sign their bindings back",
                fix=f"copy the newest of them back (`skopeo copy docker://{repository}:{lost[-1].tag} "
                f"docker://{ref}`), then run the step again (docs/release.md, 'Index updates')",
            )
    raise IndexMovedError(
        cause=f"the release index {ref} was replaced by other writers {MOST_WRITE_TRIES} times while this step "
        f"wrote it ({', '.join(seen)}); this step's bindings are not in it",
        fix="run the step again once the other writer is done; if nobody else should write the index, find who "
        "does (docs/release.md, 'Index updates')",
    )


def refresh_index(repository: str, signers: release_index.IndexSigners, plan: IndexPlan) -> Attached:
    """Re-sign the release index's timestamp (same targets and snapshot, bytes unchanged): daily, by release.yml's
    refresh-index job with the timestamp key; only an index the TUF client accepts."""
    client = RegistryClient.for_ref(reference(f"{repository}:{plan.tag}"))
    if release_index.fetch(client, repository, plan.tag).digest is None:
        raise RegistryAccessError(
            cause=f"{repository}:{plan.tag} holds no release index to refresh",
            fix="sign a release first (`build.py release sign IMAGE@sha256:... --tag T`), which creates it",
        )
    return write_signature_index(client, repository, plan, signers, [], verb="refresh-index")


def signature_media_type() -> str:
    return "application/vnd.oci.image.manifest.v1+json"
