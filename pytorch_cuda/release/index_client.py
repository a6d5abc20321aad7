"""Read the signed release index as a TUF client (python-tuf's ngclient Updater), rooted in the root committed in
the checkout (never the registry's root.json), or in a newer root this machine verified before: every role signed
by the keys that root names; freeze protection (no expired role: the timestamp lives two days, so an old index
replayed on a machine that never saw a newer one fails too); rollback protection (no version lower than one this
machine has seen or written, kept in ~/.cache/pytorch-cuda/release-index/, nor lower than the floor committed
beside the root, index_floor.py); and the signed targets name this repository. Its answer: the digest each tag
must serve. `sign`, `refresh-index` and `promote` read the index through the same client before they extend it.

The machine's cache keeps every root it verified (root_history/N.root.json, TUF's layout), so a rotation it has
seen is never forgotten: an old checkout on that machine meets the newer root and refuses a revoked key.

The client works in a scratch folder seeded with the cache; the cache takes its result only after every check
passed, so an index refused here (another repository's, say) never poisons the machine's rollback state."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from tuf.api.exceptions import (
    BadVersionNumberError,
    DownloadHTTPError,
    ExpiredMetadataError,
    RepositoryError,
    UnsignedMetadataError,
)
from tuf.api.metadata import Metadata, Root, Snapshot, Targets, Timestamp
from tuf.ngclient import FetcherInterface, Updater

from pytorch_cuda.release.failures import Reason
from pytorch_cuda.release.index_floor import Floor, floor_path, load_floor
from pytorch_cuda.release.release_policy import LoadedPolicy
from pytorch_cuda.release.trusted_root import TrustedRoot

REPOSITORY_FIELD = "x-pytorch-cuda-repository"  # in targets.json's signed part: the one repository it binds
STATE = ("timestamp.json", "snapshot.json", "targets.json")  # what the cache keeps: the versions seen
ROOT_HISTORY = "root_history"  # every root this machine verified, N.root.json (python-tuf's layout)
_VERSIONED_ROOT = re.compile(r"[1-9][0-9]{0,8}\.root\.json")
ROOT_EXPIRED_FIX = (
    "this is not the image's fault: the index's root of trust expired, so no release can be verified. The "
    "maintainers sign the next root with the offline root key (`build.py release rotate-root`, docs/release.md "
    "'Root of trust') and commit it; then update this checkout (git pull) and verify again"
)


class RegistryFetcher(FetcherInterface):
    """Serves the metadata files of the index artifact (already fetched from the registry) by name."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self.files = dict(files)

    def _fetch(self, url: str) -> Iterator[bytes]:
        name = url.rsplit("/", 1)[-1]
        if name not in self.files:
            raise DownloadHTTPError(f"{name} is not in the release index", 404)
        yield self.files[name]


def cache_dir(repository: str) -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "pytorch-cuda" / "release-index" / urllib.parse.quote(repository, safe="")


class IndexFailureError(Exception):
    def __init__(self, reason: Reason, fix: str | None = None) -> None:
        super().__init__(reason.field)
        self.reason = reason
        self.fix = fix  # None: the image's fix (failures.FIX); else the cause lies elsewhere (the root)


@dataclass(frozen=True)
class VerifiedIndex:
    """The index after every check: its roles, and the root chain this machine trusts (N.root.json by name)."""

    root: Metadata[Root]
    roots: dict[str, bytes]
    timestamp: Metadata[Timestamp]
    snapshot: Metadata[Snapshot]
    targets: Metadata[Targets]
    raw: dict[str, bytes]  # timestamp.json, snapshot.json, targets.json as verified

    def bound(self) -> dict[str, str]:
        return {path: "sha256:" + str(i.hashes.get("sha256", "")) for path, i in self.targets.signed.targets.items()}


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _expired_failure(exc: ExpiredMetadataError, files: Mapping[str, bytes]) -> IndexFailureError:
    role = next((r for r in ("timestamp", "snapshot", "targets", "root") if r in str(exc)), "timestamp")
    if role == "root":
        return IndexFailureError(
            Reason("release-index root.expires", f"a date after now ({_now()})", "an expired root of trust",
                   "the root expired: nothing signed under it can be trusted, whatever the image"),
            ROOT_EXPIRED_FIX,
        )  # fmt: skip
    found = "an expired role"
    if f"{role}.json" in files:
        found = Metadata.from_bytes(files[f"{role}.json"]).signed.expires.strftime("%Y-%m-%dT%H:%M:%SZ")
    why = "the index was not re-signed in time: a frozen or replayed index"
    return IndexFailureError(Reason(f"release-index {role}.expires", f"a date after now ({_now()})", found, why))


def _seed(work: Path, cache: Path, root_history: bool) -> None:
    for name in STATE:
        if (cache / name).is_file():
            shutil.copyfile(cache / name, work / name)
    history = cache / ROOT_HISTORY
    if root_history and history.is_dir():
        (work / ROOT_HISTORY).mkdir()
        for path in history.iterdir():
            if _VERSIONED_ROOT.fullmatch(path.name) and path.is_file():
                shutil.copyfile(path, work / ROOT_HISTORY / path.name)


def _keep(work: Path, cache: Path) -> None:
    (cache / ROOT_HISTORY).mkdir(parents=True, exist_ok=True)
    names = [*STATE, *(f"{ROOT_HISTORY}/{p.name}" for p in (work / ROOT_HISTORY).glob("*.root.json"))]
    for name in names:
        if (work / name).is_file():
            shutil.copyfile(work / name, cache / f"{name}.new")
            os.replace(cache / f"{name}.new", cache / name)


def _refresh(work: Path, files: Mapping[str, bytes], root: TrustedRoot) -> None:
    try:
        Updater(str(work), "oci://release-index/", fetcher=RegistryFetcher(files), bootstrap=root.raw).refresh()
    except ExpiredMetadataError as exc:
        raise _expired_failure(exc, files) from exc
    except BadVersionNumberError as exc:
        raise IndexFailureError(
            Reason(
                "release-index version",
                "no role older than this machine verified before",
                str(exc),
                "an older index was put back: a rollback",
            )
        ) from exc
    except UnsignedMetadataError as exc:
        raise IndexFailureError(
            Reason("release-index signature", "a signature by a key the trusted root names", str(exc),
                   "signed by a key the root does not name (or no longer names: a revoked key)")
        ) from exc  # fmt: skip
    except (RepositoryError, DownloadHTTPError, ValueError) as exc:
        raise IndexFailureError(
            Reason("release-index", "a valid TUF repository", f"{type(exc).__name__}: {exc}")
        ) from exc


def _check_floor(snapshot: Snapshot, targets: Targets, raw_targets: bytes, floor: Floor, where: Path) -> None:
    why = "an older index was put back: a rollback below the committed floor"
    for role, version, lowest in (("targets", targets.version, floor.targets_version),
                                  ("snapshot", snapshot.version, floor.snapshot_version)):  # fmt: skip
        if version < lowest:
            raise IndexFailureError(Reason(f"release-index {role}.version", f"at least {lowest} ({where.name}, "
                                           "committed)", str(version), why))  # fmt: skip
    found = hashlib.sha256(raw_targets).hexdigest()
    if targets.version == floor.targets_version and floor.targets_sha256 and found != floor.targets_sha256:
        raise IndexFailureError(
            Reason("release-index targets.json", f"sha256 {floor.targets_sha256[:16]} at v{floor.targets_version} "
                   f"({where.name})", f"sha256 {found[:16]}", "two different targets signed with one version")
        )  # fmt: skip


def _check_repository(targets: Targets, repository: str) -> None:
    named = targets.unrecognized_fields.get(REPOSITORY_FIELD)
    if named != repository:
        raise IndexFailureError(
            Reason(
                f"release-index targets.{REPOSITORY_FIELD}",
                repository,
                str(named),
                "an index signed for another repository, copied here",
            )
        )


def verified_index(
    files: Mapping[str, bytes], root: TrustedRoot, repository: str, cache: Path, *, root_history: bool = True
) -> VerifiedIndex:
    """The index `files` after TUF's checks from `root` (or a newer root the cache verified), the committed floor
    beside `root` and this repository's name; the cache keeps the result only when every check passed."""
    floor_file = floor_path(root.path)
    floor = load_floor(floor_file, repository)
    with tempfile.TemporaryDirectory(prefix="release-index-") as scratch:
        work = Path(scratch)
        _seed(work, cache, root_history)
        _refresh(work, files, root)
        read = {name: (work / name).read_bytes() for name in STATE}
        trusted = Metadata[Root].from_bytes((work / "root.json").read_bytes())
        targets = Metadata[Targets].from_bytes(read["targets.json"])
        snapshot = Metadata[Snapshot].from_bytes(read["snapshot.json"])
        timestamp = Metadata[Timestamp].from_bytes(read["timestamp.json"])
        _check_floor(snapshot.signed, targets.signed, read["targets.json"], floor, floor_file)
        _check_repository(targets.signed, repository)
        roots = {p.name: p.read_bytes() for p in (work / ROOT_HISTORY).glob("*.root.json")}
        _keep(work, cache)
    return VerifiedIndex(trusted, roots, timestamp, snapshot, targets, read)


def check_root_keys(root: Metadata[Root], policy_keyids: Sequence[str], policy_name: str) -> None:
    outside = sorted(set(root.signed.roles[Targets.type].keyids) - set(policy_keyids))
    if outside:
        raise IndexFailureError(
            Reason(
                "release-index root.roles.targets.keyids",
                f"only the policy's keys ({', '.join(k[:16] for k in policy_keyids)})",
                f"key {outside[0][:16]}",
                f"the root trusts a targets key that {policy_name} does not name",
            )
        )


def trusted_targets(files: Mapping[str, bytes], policy: LoadedPolicy) -> tuple[int, dict[str, str]]:
    """The version of the verified targets and each tag's digest (sha256:HEX), after TUF's checks."""
    repository = policy.policy.repository
    if "timestamp.json" not in files:
        raise IndexFailureError(
            Reason(f"release-index ({repository}:{policy.policy.index_tag})", "a signed index",
                   "none in the registry", "the release was never indexed, or the index was deleted")
        )  # fmt: skip
    index = verified_index(files, policy.trusted_root(), repository, cache_dir(repository))
    check_root_keys(index.root, policy.keyids, policy.path.name)
    return index.targets.signed.version, index.bound()
