"""The root of trust of the release index, committed in the checkout (release-policy.yaml's `root`, by default
keys/release-root.json): a TUF root (python-tuf's metadata API), signed by the offline root key, naming the online
keys of the targets, snapshot and timestamp roles. `verify` bootstraps its TUF client from this file and never from
the root.json the registry serves; a rotation is a newer root signed by this one's root keys (TUF's chain),
published beside the index as N.root.json, then committed here.

`release init-root` writes it, where the root key is kept (offline: it signs nothing else).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from securesystemslib.signer import Key, Signer
from tuf.api.exceptions import UnsignedMetadataError
from tuf.api.metadata import Metadata, Root, Snapshot, Targets, Timestamp
from tuf.api.serialization import DeserializationError
from tuf.api.serialization.json import JSONSerializer

from pytorch_cuda.errors import UserError

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
