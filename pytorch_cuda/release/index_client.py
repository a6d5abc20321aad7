"""Read the signed release index as a TUF client (python-tuf's ngclient Updater), rooted in the root committed in
the checkout (never the registry's root.json): every role signed by the keys that root names; freeze protection
(no expired role: the timestamp lives two days, so an old index replayed on a machine that never saw a newer one
fails too); rollback protection (no version lower than one this machine has seen, kept in
~/.cache/pytorch-cuda/release-index/); and the signed targets name this repository. Its answer: the digest each
tag must serve.

The client works in a scratch folder seeded with the cache; the cache takes its result only after every check
passed, so an index refused here (another repository's, say) never poisons the machine's rollback state."""

from __future__ import annotations

import os
import shutil
import tempfile
import urllib.parse
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path

from tuf.api.exceptions import (
    BadVersionNumberError,
    DownloadHTTPError,
    ExpiredMetadataError,
    RepositoryError,
    UnsignedMetadataError,
)
from tuf.api.metadata import Metadata, Root, Targets
from tuf.ngclient import FetcherInterface, Updater

from pytorch_cuda.release.failures import Reason
from pytorch_cuda.release.release_index import REPOSITORY_FIELD
from pytorch_cuda.release.release_policy import LoadedPolicy
from pytorch_cuda.release.trusted_root import TrustedRoot

STATE = ("timestamp.json", "snapshot.json", "targets.json")  # what the cache keeps: the versions seen


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
    def __init__(self, reason: Reason) -> None:
        super().__init__(reason.field)
        self.reason = reason


def _expired_reason(exc: ExpiredMetadataError, files: Mapping[str, bytes]) -> Reason:
    role = next((r for r in ("timestamp", "snapshot", "targets", "root") if r in str(exc)), "timestamp")
    found = "an expired role"
    if f"{role}.json" in files:
        found = Metadata.from_bytes(files[f"{role}.json"]).signed.expires.strftime("%Y-%m-%dT%H:%M:%SZ")
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return Reason(
        f"release-index {role}.expires",
        f"a date after now ({now})",
        found,
        "the index was not re-signed in time: a frozen or replayed index",
    )


def _check_root_keys(root: Metadata[Root], policy: LoadedPolicy) -> None:
    outside = sorted(set(root.signed.roles[Targets.type].keyids) - set(policy.keyids))
    if outside:
        raise IndexFailureError(
            Reason(
                "release-index root.roles.targets.keyids",
                f"only the policy's keys ({', '.join(k[:16] for k in policy.keyids)})",
                f"key {outside[0][:16]}",
                f"the root trusts a targets key that {policy.path.name} does not name",
            )
        )


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


def _refresh(work: Path, files: Mapping[str, bytes], root: TrustedRoot) -> tuple[Metadata[Root], Targets]:
    try:
        updater = Updater(str(work), "oci://release-index/", fetcher=RegistryFetcher(files), bootstrap=root.raw)
        updater.refresh()
        trusted = Metadata[Root].from_bytes((work / "root.json").read_bytes())
        return trusted, Metadata[Targets].from_bytes((work / "targets.json").read_bytes()).signed
    except ExpiredMetadataError as exc:
        raise IndexFailureError(_expired_reason(exc, files)) from exc
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
            Reason("release-index signature", f"a signature by a key {root.path.name} names", str(exc))
        ) from exc
    except (RepositoryError, DownloadHTTPError, ValueError) as exc:
        raise IndexFailureError(
            Reason("release-index", "a valid TUF repository", f"{type(exc).__name__}: {exc}")
        ) from exc


def trusted_targets(files: Mapping[str, bytes], policy: LoadedPolicy) -> tuple[int, dict[str, str]]:
    """The version of the verified targets and each tag's digest (sha256:HEX), after TUF's checks."""
    repository = policy.policy.repository
    if "timestamp.json" not in files:
        raise IndexFailureError(
            Reason(f"release-index ({repository}:{policy.policy.index_tag})", "a signed index",
                   "none in the registry", "the release was never indexed, or the index was deleted")
        )  # fmt: skip
    root = policy.trusted_root()
    cache = cache_dir(repository)
    with tempfile.TemporaryDirectory(prefix="release-index-") as scratch:
        work = Path(scratch)
        for name in STATE:
            if (cache / name).is_file():
                shutil.copyfile(cache / name, work / name)
        trusted, targets = _refresh(work, files, root)
        _check_root_keys(trusted, policy)
        _check_repository(targets, repository)
        cache.mkdir(parents=True, exist_ok=True)
        for name in STATE:
            if (work / name).is_file():
                shutil.copyfile(work / name, cache / f".{name}.new")
                os.replace(cache / f".{name}.new", cache / name)
    bound = {path: "sha256:" + str(info.hashes.get("sha256", "")) for path, info in targets.targets.items()}
    return targets.version, bound
