"""The signed release index: a TUF repository (python-tuf's metadata API) whose targets map each release tag to
the digest it must serve and name the one repository they are valid for, with a version and an expiry on every
role. It lives in the release repository as one OCI artifact, `R:<index_tag>` (release-policy.yaml's `index_tag`),
one layer per metadata file. Its root is the one committed in the checkout (trusted_root.py), published beside it.

`sign --tag` (the targets key) binds tags, bumps every version, renews every expiry; `refresh-index` re-signs
the roles its key holds (the timestamp key: the timestamp only). The timestamp lives TIMESTAMP_LIFETIME (two days,
renewed daily by release.yml): an index replayed or frozen longer than that fails `verify` on any machine, and a
lower version than one seen before fails on a machine that saw it (index_client.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from securesystemslib.signer import Signer
from tuf.api.exceptions import UnsignedMetadataError
from tuf.api.metadata import Metadata, MetaFile, Root, Snapshot, TargetFile, Targets, Timestamp

from pytorch_cuda.errors import UserError
from pytorch_cuda.oci.registry_client import RegistryClient, reference
from pytorch_cuda.release.cosign_layout import Artifact, Blob, compact
from pytorch_cuda.release.trusted_root import TrustedRoot

METADATA_MEDIA_TYPE = "application/vnd.tuf.metadata.v1+json"
INDEX_ARTIFACT_TYPE = "application/vnd.dev.pytorch-cuda.release-index.v1+json"
EMPTY_CONFIG = Blob(b"{}", "application/vnd.oci.empty.v1+json")
TITLE = "org.opencontainers.image.title"
REPOSITORY_FIELD = "x-pytorch-cuda-repository"  # in targets.json's signed part: the one repository it binds
TIMESTAMP_LIFETIME = timedelta(days=2)
TARGETS_LIFETIME = timedelta(days=365)  # targets and snapshot: renewed by every release


class IndexSigningError(UserError):
    """The index in the registry cannot be extended by this key."""


@dataclass(frozen=True)
class Binding:
    """One release tag bound to the manifest it must serve."""

    tag: str
    digest: str  # sha256:<hex>
    size: int  # the manifest's length in bytes


@dataclass(frozen=True)
class Fetched:
    """The index as read: its manifest's digest (None when there is none) and its metadata files by name."""

    digest: str | None
    files: dict[str, bytes] = field(default_factory=dict)


def fetch(client: RegistryClient, repository: str, index_tag: str) -> Fetched:
    """The index's metadata files by name (root.json, N.root.json, timestamp.json, ...); empty when none."""
    found = client.manifest(f"{repository}:{index_tag}")
    if found is None:
        return Fetched(None)
    document: dict[str, Any] = json.loads(found.raw)
    files: dict[str, bytes] = {}
    for layer in document.get("layers") or []:
        title = str((layer.get("annotations") or {}).get(TITLE, ""))
        if title:
            files[title] = client.blob(reference(repository + ":x"), str(layer["digest"]), limit=16 << 20)
    if Root.type + ".json" in files:
        version = Metadata[Root].from_bytes(files["root.json"]).signed.version
        files[f"{version}.root.json"] = files["root.json"]
    return Fetched(found.digest, files)


def _signed(signed: Root | Timestamp | Snapshot | Targets, signer: Signer) -> bytes:
    metadata: Metadata[Any] = Metadata(signed)
    metadata.sign(signer)
    return metadata.to_bytes()


def _current(current: Mapping[str, bytes], root: TrustedRoot, repository: str) -> tuple[Targets, Snapshot, Timestamp]:
    """The index in the registry, each role checked against the committed root before it is extended: an index
    put there by anyone else, or made for another repository, is never re-signed."""
    try:
        targets = Metadata[Targets].from_bytes(current["targets.json"])
        snapshot = Metadata[Snapshot].from_bytes(current["snapshot.json"])
        timestamp = Metadata[Timestamp].from_bytes(current["timestamp.json"])
        for role, metadata in ((Targets.type, targets), (Snapshot.type, snapshot), (Timestamp.type, timestamp)):
            root.metadata.verify_delegate(role, metadata)
    except (KeyError, ValueError, UnsignedMetadataError) as exc:
        raise IndexSigningError(
            cause=f"the release index in the registry is not signed by the keys of {root.path.name} "
            f"({type(exc).__name__}: {exc})",
            fix="find who wrote it; sign with the keys the committed root names (docs/release.md, 'Root of trust')",
        ) from exc
    named = targets.signed.unrecognized_fields.get(REPOSITORY_FIELD)
    if named != repository:
        raise IndexSigningError(
            cause=f"the release index in {repository} binds tags of {named!r}: it was copied from another repository",
            fix="restore this repository's own index (its last good digest is in the release workflow's summary)",
        )
    return targets.signed, snapshot.signed, timestamp.signed


ROLES = (Timestamp.type, Snapshot.type, Targets.type)


def updated(
    current: Mapping[str, bytes],
    root: TrustedRoot,
    signer: Signer,
    bindings: Sequence[Binding],
    *,
    repository: str,
    now: datetime,
    lifetime: timedelta = TIMESTAMP_LIFETIME,
) -> dict[str, bytes]:
    """The next index: `bindings` added to the current targets; every role `signer` holds re-signed with its
    version bumped; the timestamp expires `now + lifetime`, targets and snapshot `now + TARGETS_LIFETIME`."""
    keyid = signer.public_key.keyid
    holds = {role for role in ROLES if keyid in root.keyids(role)}
    needed = {Timestamp.type} | ({Targets.type, Snapshot.type} if bindings or not current else set())
    if not needed <= holds:
        raise IndexSigningError(
            cause=f"the key {keyid[:16]} is not a {'/'.join(sorted(needed - holds))} key of {root.path.name}, "
            "so the release index is not signed by this key",
            fix="sign with the key the committed root names for that role (docs/release.md, 'Root of trust')",
        )
    if current:
        targets, snapshot, timestamp = _current(current, root, repository)
    else:
        targets = Targets(unrecognized_fields={REPOSITORY_FIELD: repository})
        snapshot, timestamp = Snapshot(), Timestamp()
    for binding in bindings:
        hexdigest = binding.digest.partition(":")[2]
        targets.targets[binding.tag] = TargetFile(binding.size, {"sha256": hexdigest}, binding.tag)
    bump = 1 if current else 0
    files = {"root.json": root.raw}
    if Targets.type in holds:
        targets.version, targets.expires = targets.version + bump, now + TARGETS_LIFETIME
        snapshot.meta["targets.json"] = MetaFile(targets.version)
        files["targets.json"] = _signed(targets, signer)
    else:
        files["targets.json"] = current["targets.json"]
    if Snapshot.type in holds:
        snapshot.version, snapshot.expires = snapshot.version + bump, now + TARGETS_LIFETIME
        files["snapshot.json"] = _signed(snapshot, signer)
    else:
        files["snapshot.json"] = current["snapshot.json"]
    timestamp.version, timestamp.expires = timestamp.version + bump, now + lifetime
    timestamp.snapshot_meta = MetaFile(snapshot.version)
    files["timestamp.json"] = _signed(timestamp, signer)
    return files


def artifact(files: Mapping[str, bytes]) -> Artifact:
    layers = [Blob(files[name], METADATA_MEDIA_TYPE, {TITLE: name}) for name in sorted(files)]
    document = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "artifactType": INDEX_ARTIFACT_TYPE,
        "config": EMPTY_CONFIG.descriptor(),
        "layers": [layer.descriptor() for layer in layers],
    }
    return Artifact(compact(document), (EMPTY_CONFIG, *layers), INDEX_ARTIFACT_TYPE)
