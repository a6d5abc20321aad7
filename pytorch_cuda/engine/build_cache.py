"""The engine's BuildKit cache records, and removing the ones that one build made.

--verify-reproducible builds each variant a second time with --no-cache: every step of that build makes a new
cache record beside the first build's, about 7.5 GB for a CUDA image, which would stay until someone prunes the
whole cache (and on a shared engine, nobody may). So the second build's records are removed right after it, by ID,
one at a time (the engine's prune takes one `id` filter per call), children before parents. A record counts as
the second build's only when it was not there before that build and it is one of the Dockerfile's RUN steps (its
command, as BuildKit describes it, is in the Dockerfile) or a file operation on one, or a "from local" record
that the build made for its FROM image (one per layer: while it is there, the image's layers stay in the layer
store after the image is gone, and a later build that makes equal layers leaves its own copy on the disk: Docker
20.10 keeps the second directory; seen when a child flavour's pair of --verify-reproducible-apart was built FROM
its parent's second image). Cache mounts (the download caches, shared by every build) and every other build's
RUN records stay.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import docker

# BuildKit 0.8's description of a RUN step's record: "mount / from exec /bin/bash -o pipefail -c <command>".
_EXEC = re.compile(r"^mount / from exec (?:/bin/(?:ba)?sh -o pipefail -c |/bin/sh -c )?(?P<command>.*)$", re.S)
CACHE_MOUNT = "exec.cachemount"
FROM_LOCAL = "from local"  # BuildKit 0.8's description of a record for a layer of a local FROM image


@dataclass(frozen=True)
class CacheRecord:
    id: str
    kind: str  # BuildKit's CacheType: regular, exec.cachemount, source.local, ...
    parent: str
    description: str
    in_use: bool
    size: int


@dataclass(frozen=True)
class Dropped:
    records: int
    bytes_reclaimed: int
    kept: tuple[str, ...] = ()  # IDs selected but still there (in use by a build that runs now)


def cache_records(client: docker.DockerClient) -> dict[str, CacheRecord]:
    """Every build cache record of the engine (`docker system df -v`), by ID."""
    found = client.df().get("BuildCache") or []
    return {
        str(r["ID"]): CacheRecord(
            str(r["ID"]),
            str(r.get("Type", "")),
            str(r.get("Parent") or ""),
            str(r.get("Description", "")),
            bool(r.get("InUse")),
            int(r.get("Size") or 0),
        )
        for r in found
    }


def _flat(text: str) -> str:
    return " ".join(text.split())


def records_of_build(before: frozenset[str], after: dict[str, CacheRecord], dockerfile_text: str) -> list[CacheRecord]:
    """The records that a build of this Dockerfile made: new since `before`, a RUN step of the Dockerfile, a file
    operation on one, or a record of its FROM image's layers; children first, so that each can be pruned in
    turn."""
    steps = _flat(dockerfile_text.replace("\\\n", " "))
    new = {key: record for key, record in after.items() if key not in before and record.kind != CACHE_MOUNT}
    chosen: dict[str, CacheRecord] = {}
    for key, record in new.items():
        match = _EXEC.match(record.description)
        if (match and _flat(match.group("command")) in steps) or record.description.strip() == FROM_LOCAL:
            chosen[key] = record
    grown = True
    while grown:  # file operations (COPY --from, the final stage's target) on a chosen record
        grown = False
        for key, record in new.items():
            if key not in chosen and record.parent in chosen and not _EXEC.match(record.description):
                chosen[key] = record
                grown = True

    def depth(record: CacheRecord) -> int:
        steps_up, parent = 0, record.parent
        while parent in chosen:
            steps_up, parent = steps_up + 1, chosen[parent].parent
        return steps_up

    return sorted(chosen.values(), key=depth, reverse=True)


def drop_records(client: docker.DockerClient, records: list[CacheRecord]) -> Dropped:
    """Prune each record by its ID (children first), again while a round removes some (a parent goes only after
    its last child); what is still there afterwards (in use, or the parent of a record that stays) is reported."""
    reclaimed, pending = 0, list(records)
    while pending:
        for record in pending:
            answer = client.api.prune_builds(filters={"id": [record.id]}, all=True)  # shared ones too
            reclaimed += int((answer or {}).get("SpaceReclaimed") or 0)
        left = cache_records(client)
        still = [record for record in pending if record.id in left]
        if len(still) == len(pending):
            break
        pending = still
    return Dropped(len(records) - len(pending), reclaimed, tuple(record.id for record in pending))


def drop_build_cache(client: docker.DockerClient, before: frozenset[str], dockerfile: Path) -> Dropped:
    """Remove the records that a build of `dockerfile` made since `before` was taken."""
    text = dockerfile.read_text(encoding="utf-8")
    return drop_records(client, records_of_build(before, cache_records(client), text))
