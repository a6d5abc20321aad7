"""The signed release index: a TUF repository (python-tuf's metadata API) whose targets map each release tag to
the digest it must serve, with a version and an expiry on every role. It lives in the release repository as one
OCI artifact, `R:<index_tag>` (release-policy.yaml's `index_tag`), one layer per metadata file.

`sign` reads the current index (it must be signed by the same key), binds the given tags to the signed digest,
bumps every version and sets new expiries: a tag moved by anyone else, an index replayed from before (lower
versions) or one left unsigned past its expiry fails `verify` (index_client.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from securesystemslib.signer import Signer
from tuf.api.exceptions import UnsignedMetadataError
from tuf.api.metadata import (
    Metadata,
    MetaFile,
    Root,
    Snapshot,
    TargetFile,
    Targets,
    Timestamp,
)

from pytorch_cuda.errors import UserError
from pytorch_cuda.release.cosign_layout import Artifact, Blob, compact
from pytorch_cuda.release.oras_client import RegistryClient, reference

METADATA_MEDIA_TYPE = "application/vnd.tuf.metadata.v1+json"
INDEX_ARTIFACT_TYPE = "application/vnd.dev.pytorch-cuda.release-index.v1+json"
EMPTY_CONFIG = Blob(b"{}", "application/vnd.oci.empty.v1+json")
TITLE = "org.opencontainers.image.title"
ROLES = (Root.type, Timestamp.type, Snapshot.type, Targets.type)
ROOT_LIFETIME = timedelta(days=365)


class IndexSigningError(UserError):
    """The index in the registry cannot be extended by this key."""


@dataclass(frozen=True)
class Binding:
    """One release tag bound to the manifest it must serve."""

    tag: str
    digest: str  # sha256:<hex>
    size: int  # the manifest's length in bytes


def fetch(client: RegistryClient, repository: str, index_tag: str) -> dict[str, bytes]:
    """The index's metadata files by name (root.json, N.root.json, timestamp.json, ...); empty when none."""
    found = client.manifest(f"{repository}:{index_tag}")
    if found is None:
        return {}
    document: dict[str, Any] = json.loads(found.raw)
    files: dict[str, bytes] = {}
    for layer in document.get("layers") or []:
        title = str((layer.get("annotations") or {}).get(TITLE, ""))
        if title:
            files[title] = client.blob(reference(repository + ":x"), str(layer["digest"]), limit=16 << 20)
    if Root.type + ".json" in files:
        version = Metadata[Root].from_bytes(files["root.json"]).signed.version
        files[f"{version}.root.json"] = files["root.json"]
    return files


def _signed(signed: Root | Timestamp | Snapshot | Targets, signer: Signer) -> bytes:
    metadata: Metadata[Any] = Metadata(signed)
    metadata.sign(signer)
    return metadata.to_bytes()


def updated(
    current: Mapping[str, bytes], signer: Signer, bindings: Sequence[Binding], now: datetime, lifetime: timedelta
) -> dict[str, bytes]:
    """The next index: `bindings` added to the current targets, every version bumped, expiries `now + lifetime`."""
    keyid = signer.public_key.keyid
    if current:
        root = Metadata[Root].from_bytes(current["root.json"])
        try:
            root.verify_delegate(Root.type, root)
            if keyid not in root.signed.roles[Targets.type].keyids:
                raise UnsignedMetadataError(f"the key {keyid[:16]} is not a targets key of the index's root")
        except UnsignedMetadataError as exc:
            raise IndexSigningError(
                cause=f"the release index in the registry is not signed by this key ({exc})",
                fix="sign with the key release-policy.yaml names; a new key needs a new root (docs/release.md)",
            ) from exc
        targets = Metadata[Targets].from_bytes(current["targets.json"]).signed
        snapshot = Metadata[Snapshot].from_bytes(current["snapshot.json"]).signed
        timestamp = Metadata[Timestamp].from_bytes(current["timestamp.json"]).signed
        root_signed = root.signed
    else:
        root_signed = Root(expires=now + ROOT_LIFETIME, consistent_snapshot=False)
        for role in ROLES:
            root_signed.add_key(signer.public_key, role)
        targets, snapshot, timestamp = Targets(), Snapshot(), Timestamp()
    if current and root_signed.expires < now + lifetime:
        root_signed.expires = now + ROOT_LIFETIME
        root_signed.version += 1
    for binding in bindings:
        hexdigest = binding.digest.partition(":")[2]
        targets.targets[binding.tag] = TargetFile(binding.size, {"sha256": hexdigest}, binding.tag)
    expires, bump = now + lifetime, 1 if current else 0
    targets.version, targets.expires = targets.version + bump, expires
    snapshot.version, snapshot.expires = snapshot.version + bump, expires
    snapshot.meta["targets.json"] = MetaFile(targets.version)
    timestamp.version, timestamp.expires = timestamp.version + bump, expires
    timestamp.snapshot_meta = MetaFile(snapshot.version)
    return {
        "root.json": _signed(root_signed, signer),
        "targets.json": _signed(targets, signer),
        "snapshot.json": _signed(snapshot, signer),
        "timestamp.json": _signed(timestamp, signer),
    }


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
