"""The signed release index: a TUF repository (python-tuf's metadata API) whose targets map each release tag to
the digest it must serve and name the one repository they are valid for, with a version and an expiry on every
role. It lives in the release repository as one OCI artifact, `R:<index_tag>` (release-policy.yaml's `index_tag`),
one layer per metadata file. Its root is the one committed in the checkout (trusted_root.py), published beside it.

`sign --tag` binds tags: the release key signs targets and snapshot (versions bumped, expiries renewed), the
timestamp key the timestamp; `refresh-index` re-signs the timestamp alone, whatever roles its key holds, and only
an index the TUF client accepts (index_client.py: not expired, not below what this machine saw or the committed
floor): it never launders an old index into a fresh one. The index carries the root chain (N.root.json).
The timestamp lives TIMESTAMP_LIFETIME (two days, renewed daily by release.yml): an index replayed or frozen longer
than that fails `verify` on any machine, and a lower version than one seen before fails on a machine that saw it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from securesystemslib.signer import Signer
from tuf.api.metadata import Metadata, MetaFile, Root, Snapshot, TargetFile, Targets, Timestamp

from pytorch_cuda.errors import UserError
from pytorch_cuda.oci.registry_client import RegistryClient, reference
from pytorch_cuda.release.cosign_layout import Artifact, Blob, compact
from pytorch_cuda.release.index_client import REPOSITORY_FIELD, VerifiedIndex
from pytorch_cuda.release.trusted_root import TrustedRoot

METADATA_MEDIA_TYPE = "application/vnd.tuf.metadata.v1+json"
INDEX_ARTIFACT_TYPE = "application/vnd.dev.pytorch-cuda.release-index.v1+json"
EMPTY_CONFIG = Blob(b"{}", "application/vnd.oci.empty.v1+json")
TITLE = "org.opencontainers.image.title"
TIMESTAMP_LIFETIME = timedelta(days=2)
TARGETS_LIFETIME = timedelta(days=365)  # targets and snapshot: renewed by every release
MOST_INDEX_FILES = 64  # root chain, timestamp, snapshot, targets
INDEX_FILE_LIMIT = 4 << 20  # bytes per metadata file, checked as they arrive


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
    layers = document.get("layers") or []
    if len(layers) > MOST_INDEX_FILES:
        raise IndexSigningError(
            cause=f"the release index {repository}:{index_tag} lists {len(layers)} files, more than "
            f"{MOST_INDEX_FILES}: not an index this project writes",
            fix="restore the last good index (its digest is in the release workflow's summary)",
        )
    for layer in layers:
        title = str((layer.get("annotations") or {}).get(TITLE, ""))
        if title:
            files[title] = client.blob(reference(repository + ":x"), str(layer["digest"]), limit=INDEX_FILE_LIMIT)
    if Root.type + ".json" in files:
        version = Metadata[Root].from_bytes(files["root.json"]).signed.version
        files[f"{version}.root.json"] = files["root.json"]
    return Fetched(found.digest, files)


def _signed(signed: Root | Timestamp | Snapshot | Targets, signer: Signer) -> bytes:
    metadata: Metadata[Any] = Metadata(signed)
    metadata.sign(signer)
    return metadata.to_bytes()


ROLES = (Timestamp.type, Snapshot.type, Targets.type)


@dataclass(frozen=True)
class IndexSigners:
    """Who signs: `targets` (the release key: targets and snapshot; None for a refresh, which binds nothing) and
    `timestamp` (the timestamp key; the release key itself where the root gives it that role too)."""

    timestamp: Signer
    targets: Signer | None = None


def check_signers(
    root: Metadata[Root], signers: IndexSigners, binds: bool, root_name: str, timestamp_flag: str = "--timestamp-key"
) -> None:
    """Refused before anything is written when a key does not hold the role it is to sign."""
    wanted = []
    if binds:
        if signers.targets is None:
            raise IndexSigningError(cause="binding a tag needs the release (targets) key", fix="pass --key")
        wanted += [(signers.targets, Targets.type, "--key"), (signers.targets, Snapshot.type, "--key")]
    wanted.append((signers.timestamp, Timestamp.type, timestamp_flag))
    for signer, role, flag in wanted:
        keyid = signer.public_key.keyid
        if keyid not in root.signed.roles[role].keyids:
            raise IndexSigningError(
                cause=f"the key {keyid[:16]} ({flag}) is not a {role} key of {root_name} (root "
                f"v{root.signed.version}), so the release index is not signed by this key",
                fix=f"give {flag} the key the root names for the {role} role: the release key signs targets and "
                "snapshot, the timestamp key (`--timestamp-key`, keys/release-timestamp.pub) the timestamp "
                "(docs/release.md, 'Root of trust')",
            )


def newest_root(current: VerifiedIndex | None, root: TrustedRoot) -> Metadata[Root]:
    """The root the keys answer to: the checkout's, or a newer one the index's chain reached."""
    if current is not None and current.root.signed.version > root.version:
        return current.root
    return root.metadata


def updated(
    current: VerifiedIndex | None,
    root: TrustedRoot,
    signers: IndexSigners,
    bindings: Sequence[Binding],
    *,
    repository: str,
    now: datetime,
    lifetime: timedelta = TIMESTAMP_LIFETIME,
) -> dict[str, bytes]:
    """The next index, built on `current` (already verified by the TUF client: never an expired, older or
    foreign index): `bindings` added to the targets, targets and snapshot re-signed by the release key with their
    versions bumped (only when binding); the timestamp re-signed by the timestamp key, its version bumped, expiring
    `now + lifetime`. A refresh (no bindings) re-signs the timestamp alone: it never re-signs what a release bound."""
    trusted = newest_root(current, root)
    binds = bool(bindings) or current is None
    check_signers(trusted, signers, binds, root.path.name)
    files: dict[str, bytes] = dict(current.roots) if current is not None else {}
    files[f"{root.version}.root.json"] = root.raw
    newest = max(int(name.split(".")[0]) for name in files)
    files["root.json"] = files[f"{newest}.root.json"]
    if current is not None:
        targets, snapshot, timestamp = current.targets.signed, current.snapshot.signed, current.timestamp.signed
        files["targets.json"], files["snapshot.json"] = current.raw["targets.json"], current.raw["snapshot.json"]
    else:
        targets = Targets(unrecognized_fields={REPOSITORY_FIELD: repository})  # version 1 each
        snapshot, timestamp = Snapshot(), Timestamp()
    bump = 1 if current is not None else 0
    if binds:
        assert signers.targets is not None  # check_signers refused otherwise
        for binding in bindings:
            hexdigest = binding.digest.partition(":")[2]
            targets.targets[binding.tag] = TargetFile(binding.size, {"sha256": hexdigest}, binding.tag)
        targets.version, targets.expires = targets.version + bump, now + TARGETS_LIFETIME
        snapshot.meta["targets.json"] = MetaFile(targets.version)
        snapshot.version, snapshot.expires = snapshot.version + bump, now + TARGETS_LIFETIME
        files["targets.json"] = _signed(targets, signers.targets)
        files["snapshot.json"] = _signed(snapshot, signers.targets)
    timestamp.version, timestamp.expires = timestamp.version + bump, now + lifetime
    timestamp.snapshot_meta = MetaFile(snapshot.version)
    files["timestamp.json"] = _signed(timestamp, signers.timestamp)
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


def artifact_media_type() -> str:
    return "application/vnd.oci.image.manifest.v1+json"
