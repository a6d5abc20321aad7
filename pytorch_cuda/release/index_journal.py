"""The journal of index writes: a late writer finds what it overwrote.

The registry API has no conditional PUT, so a writer that stalls between its last check and its PUT (outside
release.yml's concurrency group, or paused: a slow runner, a GC pause, a stopped process) can replace an index that
another writer wrote and read back meanwhile; that writer has exited 0, and the late one reads back its own index and
exits 0 too: a binding is lost. So every write also tags its manifest `<index_tag>.ts<timestamp version, 10
digits>.<12 hex of its digest>` (`journal_tag`): a tag of its own, which no other write ever overwrites. After its
read-back a writer lists the journal from its own timestamp version up (the tags sort by version) and reads each
other entry through the TUF client (the committed root and floor, a scratch cache): an index written at that version
or later whose bindings the served index lacks was overwritten (`overwritten`). signing.write_signature_index then
writes again with those bindings (sign) or from that index (refresh-index, which holds no targets key), so both
writers' bindings end in the served index, or the step fails loudly.

A binding counts as lost only where the served index still binds that tag as the writer's first read did: a tag
that another release moved since stays moved (index_conflict.py's rule). An entry that does not verify, or whose
content is not the version its tag names (an old index copied under a new name), is not a write and is ignored.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tuf.api.metadata import Metadata, Timestamp

from pytorch_cuda.errors import EXIT_CHECKS_FAILED, UserError
from pytorch_cuda.oci.registry_client import RegistryClient
from pytorch_cuda.release.cosign_layout import Artifact
from pytorch_cuda.release.index_client import IndexFailureError, VerifiedIndex, verified_index
from pytorch_cuda.release.release_index import Binding, artifact_media_type, fetch
from pytorch_cuda.release.trusted_root import TrustedRoot

JOURNAL_MARK = ".ts"  # <index_tag>.ts0000000042.0123456789ab
VERSION_DIGITS = 10
MOST_JOURNAL_ENTRIES = 16  # other writes at or after this one's version, read after a write
MOST_JOURNAL_PAGES = 20  # tag list pages read to find them


class JournalFloodedError(UserError):
    """More index writes at or after this one's version than MOST_JOURNAL_ENTRIES: a flood, not a race. Exit 1."""

    exit_status = EXIT_CHECKS_FAILED


@dataclass(frozen=True)
class Overwritten:
    """An index another writer wrote (its journal tag) whose bindings the served index lost."""

    tag: str
    index: VerifiedIndex
    bindings: tuple[Binding, ...]


def timestamp_version(files: Mapping[str, bytes]) -> int:
    return Metadata[Timestamp].from_bytes(files["timestamp.json"]).signed.version


def journal_tag(index_tag: str, version: int, digest: str) -> str:
    return f"{index_tag}{JOURNAL_MARK}{version:0{VERSION_DIGITS}d}.{digest.partition(':')[2][:12]}"


def record(client: RegistryClient, repository: str, index_tag: str, version: int, written: Artifact) -> str:
    """Tag the index just written (its blobs are in the registry) under its journal tag; the tag."""
    tag = journal_tag(index_tag, version, written.digest)
    client.push_manifest(f"{repository}:{tag}", written.raw, artifact_media_type())
    return tag


def _entries(client: RegistryClient, repository: str, index_tag: str, version: int) -> list[str]:
    """The journal tags of version `version` and later, in the registry's (lexical) tag order."""
    prefix = f"{index_tag}{JOURNAL_MARK}"
    last, found = f"{prefix}{version:0{VERSION_DIGITS}d}", []
    for _ in range(MOST_JOURNAL_PAGES):
        page = client.tags_page(repository, last)
        found += [tag for tag in page if tag.startswith(prefix) and tag > last]
        if not page or page[-1] <= last or page[-1][: len(prefix)] > prefix:
            break  # the end, a registry that ignores `last`, or past the journal
        last = page[-1]
    return found


def _verified(client: RegistryClient, repository: str, tag: str, root: TrustedRoot) -> VerifiedIndex | None:
    """The journal entry through the TUF client with an empty cache (a fresh machine: the committed root and
    floor, no expired role, this repository); None when it does not verify or is not the version its tag names."""
    files = fetch(client, repository, tag).files
    with tempfile.TemporaryDirectory(prefix="release-index-journal-") as cache:
        try:
            index = verified_index(files, root, repository, Path(cache), root_history=False)
        except IndexFailureError:
            return None
    named = tag.rpartition(JOURNAL_MARK)[2].partition(".")[0]
    return index if f"{index.timestamp.signed.version:0{VERSION_DIGITS}d}" == named else None


def overwritten(
    client: RegistryClient,
    repository: str,
    *,
    index_tag: str,
    root: TrustedRoot,
    version: int,
    own: str,
    base: Mapping[str, str],
    served: Mapping[str, str],
) -> list[Overwritten]:
    """The other writes of version `version` and later whose bindings `served` lacks: each binding that entry made
    (differs from `base`, this writer's first read) on a tag the served index still binds as `base` did."""
    others = [tag for tag in _entries(client, repository, index_tag, version) if tag != own]
    if len(others) > MOST_JOURNAL_ENTRIES:
        raise JournalFloodedError(
            cause=f"{len(others)} writes of the release index {repository}:{index_tag} at or after version "
            f"{version} are journalled ({others[0]} ...), more than the {MOST_JOURNAL_ENTRIES} read back: this "
            "step cannot tell which bindings were overwritten",
            fix="find who writes the index this often (docs/release.md, 'Index updates'), then run the step again",
        )
    lost = []
    for tag in others:
        index = _verified(client, repository, tag, root)
        if index is None:
            continue
        bound = index.bound()
        gone = tuple(
            Binding(path, bound[path], target.length)
            for path, target in sorted(index.targets.signed.targets.items())
            if bound[path] != base.get(path) and served.get(path) == base.get(path)
        )
        if gone:
            lost.append(Overwritten(tag, index, gone))
    return lost
