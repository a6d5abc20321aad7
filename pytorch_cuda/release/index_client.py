"""Read the signed release index as a TUF client (python-tuf's ngclient Updater): rollback protection (no
version lower than one this machine has seen, kept in ~/.cache/pytorch-cuda/release-index/), freeze protection
(no expired role), and the root's keys must be the policy's. Its answer: the digest a tag must serve."""

from __future__ import annotations

import os
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
from pytorch_cuda.release.release_policy import LoadedPolicy


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
    outside = sorted(set(root.signed.keys) - set(policy.keyids))
    if outside:
        raise IndexFailureError(
            Reason(
                "release-index root.keys",
                f"only the policy's keys ({', '.join(k[:16] for k in policy.keyids)})",
                f"key {outside[0][:16]}",
                f"the index trusts a key that {policy.path.name} does not name",
            )
        )
    try:
        root.verify_delegate(Root.type, root)
    except UnsignedMetadataError as exc:
        raise IndexFailureError(
            Reason("release-index root signature", "a signature by a policy key", str(exc))
        ) from exc


def trusted_targets(files: Mapping[str, bytes], policy: LoadedPolicy) -> tuple[int, dict[str, str]]:
    """The version of the verified targets and each tag's digest (sha256:HEX), after TUF's checks."""
    if "root.json" not in files:
        raise IndexFailureError(
            Reason(f"release-index ({policy.policy.repository}:{policy.policy.index_tag})", "a signed index",
                   "none in the registry", "the release was never indexed, or the index was deleted")
        )  # fmt: skip
    directory = cache_dir(policy.policy.repository)
    directory.mkdir(parents=True, exist_ok=True)
    bootstrap: bytes | None = None
    if not (directory / "root.json").exists():
        bootstrap = files["root.json"]
        _check_root_keys(Metadata[Root].from_bytes(bootstrap), policy)
    try:
        updater = Updater(str(directory), "oci://release-index/", fetcher=RegistryFetcher(files), bootstrap=bootstrap)
        updater.refresh()
        _check_root_keys(Metadata[Root].from_bytes((directory / "root.json").read_bytes()), policy)
        targets = Metadata[Targets].from_bytes((directory / "targets.json").read_bytes()).signed
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
        raise IndexFailureError(Reason("release-index signature", "a signature by a policy key", str(exc))) from exc
    except (RepositoryError, DownloadHTTPError, ValueError) as exc:
        raise IndexFailureError(
            Reason("release-index", "a valid TUF repository", f"{type(exc).__name__}: {exc}")
        ) from exc
    bound = {path: "sha256:" + str(info.hashes.get("sha256", "")) for path, info in targets.targets.items()}
    return targets.version, bound
