"""Recovery of an expired release index (`build.py release recover-index`), under the split keys.

The daily refresh never re-signs an expired index: once the timestamp expired, nothing in the registry tells the
last index from an older one put back (a rollback during the outage). The rule: **an expired index is revived only
when its targets.json is, byte for byte, the one the committed floor names** (keys/release-index-floor.json: its
targets version and sha256, raised by `record-floor` and moved only by a reviewed commit), and only by the
**timestamp key**, which re-signs the timestamp alone (its version one above the expired one, the same snapshot).
So a recovery needs what a registry writer cannot reach (the reviewed floor in git) and the key the schedule
holds; the release key is not needed and binds nothing here. Before anything is written, the revived index passes
every check of the TUF client (signatures from the trusted root, versions not below what this machine saw, the
floor, the repository) in a scratch copy of this machine's cache; the write is read back and must hold."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from securesystemslib.signer import Signer
from tuf.api.metadata import Metadata, MetaFile, Timestamp

from pytorch_cuda.errors import EXIT_CHECKS_FAILED, UserError
from pytorch_cuda.oci.registry_client import RegistryAccessError, RegistryClient, reference
from pytorch_cuda.release import index_journal, release_index
from pytorch_cuda.release.failures import Reason
from pytorch_cuda.release.index_client import IndexFailureError, cache_dir, verified_index
from pytorch_cuda.release.index_floor import Floor, floor_path, load_floor
from pytorch_cuda.release.signing import SETTLE_SECONDS, IndexPlan, current_index, signature_media_type
from pytorch_cuda.release.trusted_root import TrustedRoot

NOT_THE_FLOOR = "an index the committed floor does not name: recovery revives only the reviewed floor's index"


class RecoveryRefusedError(UserError):
    """The expired index is not the one the committed floor names, or fails the TUF client's checks even with a
    fresh timestamp. Exit status 1: nothing was written."""

    exit_status = EXIT_CHECKS_FAILED


class IndexNotExpiredError(UserError):
    """The index is still fresh: the daily `refresh-index` renews it, recovery is not needed. Exit status 2."""


@dataclass(frozen=True)
class Recovered:
    ref: str
    digest: str
    targets_version: int
    timestamp_version: int
    expires: datetime


def _refused(reason: Reason, fix: str) -> RecoveryRefusedError:
    why = f" ({reason.why})" if reason.why else ""
    return RecoveryRefusedError(
        cause=f"recover-index refused the expired release index: {reason.field}: expected {reason.expected}, "
        f"found {reason.found}{why}; nothing was written",
        fix=fix,
    )


def _check_is_floor(files: dict[str, bytes], floor: Floor, where: Path) -> None:
    targets = Metadata.from_bytes(files["targets.json"]).signed
    found = hashlib.sha256(files["targets.json"]).hexdigest()
    if not floor.targets_sha256 or (targets.version, found) != (floor.targets_version, floor.targets_sha256):
        expected = f"a committed floor ({where.name} records none)"
        if floor.targets_sha256:
            expected = (f"the committed floor's targets (v{floor.targets_version}, sha256 "
                        f"{floor.targets_sha256[:16]}, {where.name})")  # fmt: skip
        raise _refused(
            Reason("release-index targets.json", expected, f"v{targets.version}, sha256 {found[:16]}", NOT_THE_FLOOR),
            "restore the index of the last release (its digest is in the release run's summary) with `skopeo copy` "
            "and run recover-index again; if that is what the registry serves, the floor lags behind it (never "
            "recorded after the last release) and no command recovers it (docs/release.md, 'Recovering an expired "
            "index')",
        )


def _fresh_timestamp(files: dict[str, bytes], signer: Signer, now: datetime, lifetime: timedelta) -> bytes:
    old = Metadata[Timestamp].from_bytes(files["timestamp.json"]).signed
    snapshot = Metadata.from_bytes(files["snapshot.json"]).signed
    renewed = Timestamp(version=old.version + 1, expires=now + lifetime, snapshot_meta=MetaFile(snapshot.version))
    metadata = Metadata(renewed)
    metadata.sign(signer)
    return metadata.to_bytes()


def _checked(files: dict[str, bytes], root: TrustedRoot, repository: str, cache: Path) -> None:
    """Every TUF check on the revived index, in a scratch copy of the cache (the cache itself is not touched)."""
    with tempfile.TemporaryDirectory(prefix="recover-index-") as scratch:
        copy = Path(scratch) / "cache"
        if cache.is_dir():
            shutil.copytree(cache, copy)
        try:
            verified_index(files, root, repository, copy)
        except IndexFailureError as failure:
            raise _refused(failure.reason, failure.fix or "restore the last release's index, then recover") from failure


def recover_index(repository: str, signer: Signer, plan: IndexPlan) -> Recovered:
    """Revive the expired index the registry serves, when it is the committed floor's, with a fresh timestamp."""
    ref = f"{repository}:{plan.tag}"
    client = RegistryClient.for_ref(reference(ref))
    read = release_index.fetch(client, repository, plan.tag)
    if read.digest is None:
        raise RegistryAccessError(
            cause=f"{ref} holds no release index to recover",
            fix="sign a release first (`build.py release sign ... --tag T`), which creates it",
        )
    try:
        current_index(client, repository, plan, "recover-index")
    except UserError as refused:
        if "timestamp.expires" not in refused.cause:
            raise
    else:
        raise IndexNotExpiredError(
            cause=f"the release index {ref} ({read.digest}) has not expired: nothing to recover",
            fix="let the daily refresh renew it (`build.py release refresh-index`); recover-index is for an index "
            "whose timestamp expired",
        )
    floor_file = floor_path(plan.root.path)
    _check_is_floor(read.files, load_floor(floor_file, repository), floor_file)
    release_index.check_signers(plan.root.metadata, release_index.IndexSigners(signer), False, plan.root.path.name,
                                "--key")  # fmt: skip
    now = datetime.now(UTC)
    files = {**read.files, "timestamp.json": _fresh_timestamp(read.files, signer, now, plan.lifetime)}
    _checked(files, plan.root, repository, cache_dir(repository))
    new = release_index.artifact(files)
    for blob in new.blobs:
        client.push_blob(reference(ref), blob.data)
    before = client.manifest(ref)
    if (before.digest if before else None) != read.digest:
        raise RecoveryRefusedError(
            cause=f"the release index {ref} moved while recover-index read it ({read.digest} -> "
            f"{before.digest if before else 'none'}); nothing was written",
            fix="find who writes the index (docs/release.md, 'Index updates'), then run recover-index again",
        )
    pushed = client.push_manifest(ref, new.raw, signature_media_type())
    # journalled like every index write: a late writer that overwrites it finds it there (index_journal.py)
    index_journal.record(client, repository, plan.tag, index_journal.timestamp_version(files), new)
    time.sleep(SETTLE_SECONDS)
    after = client.manifest(ref)
    if after is None or after.digest != new.digest:
        raise RecoveryRefusedError(
            cause=f"the recovered index {new.digest} was replaced by {after.digest if after else 'none'} right "
            "after it was written",
            fix="find who writes the index (docs/release.md, 'Index updates'), then run recover-index again",
        )
    verified_index(files, plan.root, repository, cache_dir(repository))  # this machine's floor: what it wrote
    renewed = Metadata[Timestamp].from_bytes(files["timestamp.json"]).signed
    targets_version = Metadata.from_bytes(files["targets.json"]).signed.version
    return Recovered(ref, pushed or new.digest, targets_version, renewed.version, renewed.expires)
