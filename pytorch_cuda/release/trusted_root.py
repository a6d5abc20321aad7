"""The root of trust of the release index, committed in the checkout (release-policy.yaml's `root`, by default
keys/release-root.json): a TUF root (python-tuf's metadata API), signed by the offline root key, naming the online
keys of the targets, snapshot and timestamp roles. `verify` bootstraps its TUF client from this file and never from
the root.json the registry serves; a rotation is a newer root signed by this one's root keys (TUF's chain),
published beside the index as N.root.json, then committed here.

`release init-root` writes it, where the root key is kept (offline: it signs nothing else).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from securesystemslib.signer import Key, Signer
from tuf.api.exceptions import UnsignedMetadataError
from tuf.api.metadata import Metadata, Root, Snapshot, Targets, Timestamp
from tuf.api.serialization import DeserializationError
from tuf.api.serialization.json import JSONSerializer

from pytorch_cuda.errors import EXIT_CHECKS_FAILED, UserError

ROOT_LIFETIME = timedelta(days=365)


class TrustedRootError(UserError):
    """The committed root is missing, malformed or not signed by its own root keys. Exit status 2."""


@dataclass(frozen=True)
class TrustedRoot:
    path: Path
    raw: bytes
    metadata: Metadata[Root]

    @property
    def version(self) -> int:
        return self.metadata.signed.version

    def keyids(self, role: str) -> list[str]:
        return list(self.metadata.signed.roles[role].keyids)


def make_root(root_signer: Signer, online: Key, timestamp: Key, now: datetime, version: int = 1) -> bytes:
    """Root metadata v`version`: the root key for the root role, `online` for targets and snapshot, `timestamp` for
    the timestamp role (the key the daily refresh holds; it can renew the index, never bind a tag)."""
    root = Root(version=version, expires=now + ROOT_LIFETIME, consistent_snapshot=False)
    root.add_key(root_signer.public_key, Root.type)
    for role in (Targets.type, Snapshot.type):
        root.add_key(online, role)
    root.add_key(timestamp, Timestamp.type)
    metadata = Metadata(root)
    metadata.sign(root_signer)
    return metadata.to_bytes(JSONSerializer(compact=False)) + b"\n"


def write_root(path: Path, data: bytes) -> None:
    if path.exists():
        raise TrustedRootError(
            cause=f"{path} exists already: the committed root of trust is replaced only by a rotation",
            fix="to rotate, sign the next version with the current root key (docs/release.md, 'Root of trust')",
        )
    path.write_bytes(data)


def load_root(path: Path) -> TrustedRoot:
    """The committed root, checked against its own root keys (a root is self-signed in TUF)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise TrustedRootError(
            cause=f"the release index's root of trust {path} is not in this checkout, so no index can be trusted",
            fix="the maintainers write it once with the offline root key (`build.py release init-root`) and commit "
            "it; docs/release.md, 'Root of trust'",
        ) from None
    except OSError as exc:
        raise TrustedRootError(cause=f"cannot read {path} ({exc})", fix="restore it from git") from exc
    try:
        metadata = Metadata[Root].from_bytes(raw)
        metadata.verify_delegate(Root.type, metadata)
    except (DeserializationError, UnsignedMetadataError, ValueError, TypeError) as exc:
        raise TrustedRootError(
            cause=f"{path} is not a TUF root signed by its own root keys ({type(exc).__name__}: {exc})",
            fix="restore it from git; a new root is made with `build.py release init-root`",
        ) from exc
    return TrustedRoot(path, raw, metadata)


class RootExpiringError(UserError):
    """The committed root expires within the warning window (`release root-status`). Exit status 1."""

    exit_status = EXIT_CHECKS_FAILED


class RotationError(UserError):
    """The next root cannot be signed: the key is not the current root's root key. Exit status 2."""


def next_root(
    current: TrustedRoot,
    root_signers: list[Signer],
    now: datetime,
    *,
    new_root_key: Key | None = None,
    online: Key | None = None,
    timestamp: Key | None = None,
) -> bytes:
    """Root v(N+1): the roles given new keys (the others keep theirs; no key given: a renewal), expiring
    `now + ROOT_LIFETIME`, signed by the current root's root key and, where it changes, the new one (TUF's chain:
    a client on v N accepts v N+1 only when both thresholds sign it)."""
    signed = Root.from_dict(current.metadata.signed.to_dict())
    signed.version, signed.expires = signed.version + 1, now + ROOT_LIFETIME
    for role, key in ((Root.type, new_root_key), (Targets.type, online), (Snapshot.type, online),
                      (Timestamp.type, timestamp)):  # fmt: skip
        if key is None:
            continue
        for keyid in list(signed.roles[role].keyids):
            signed.revoke_key(keyid, role)
        signed.add_key(key, role)
    metadata = Metadata(signed)
    for signer in root_signers:
        metadata.sign(signer, append=True)
    try:
        current.metadata.verify_delegate(Root.type, metadata)  # the old root's threshold
        metadata.verify_delegate(Root.type, metadata)  # the new root's own threshold
    except UnsignedMetadataError as exc:
        raise RotationError(
            cause=f"root v{signed.version} is not signed by the root keys of {current.path.name} v{current.version} "
            f"and of itself ({exc})",
            fix="give --root-key the current root's offline key, and --new-root-key the new one when the root key "
            "changes (docs/release.md, 'Root of trust')",
        ) from exc
    return metadata.to_bytes(JSONSerializer(compact=False)) + b"\n"


def replace_root(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.new")
    temporary.write_bytes(data)
    temporary.replace(path)


def rotated_from(committed: TrustedRoot, files: Mapping[str, bytes]) -> TrustedRoot | None:
    """The index's own root, when it is older than `committed` and signed `committed` (checked through the
    chain the index carries: v k signs v k+1, up to committed's version); else None."""
    try:
        older = Metadata[Root].from_bytes(files["root.json"])
        chain = [older]
        for version in range(older.signed.version + 1, committed.version):
            chain.append(Metadata[Root].from_bytes(files[f"{version}.root.json"]))
        chain.append(committed.metadata)
        for parent, child in itertools.pairwise(chain):
            if child.signed.version != parent.signed.version + 1:
                return None
            parent.verify_delegate(Root.type, child)
    except (KeyError, ValueError, UnsignedMetadataError, DeserializationError):
        return None
    if older.signed.version >= committed.version:
        return None
    return TrustedRoot(committed.path, files["root.json"], older)


def days_left(root: TrustedRoot, now: datetime) -> float:
    return (root.metadata.signed.expires - now).total_seconds() / 86400
