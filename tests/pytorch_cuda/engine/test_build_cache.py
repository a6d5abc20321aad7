"""Which build cache records a build made (--verify-reproducible removes its second build's): only new ones, only
this Dockerfile's RUN steps and file operations on them, children first; never a cache mount or another build's."""

from __future__ import annotations

from pytorch_cuda.engine.build_cache import CACHE_MOUNT, CacheRecord, drop_records, records_of_build

DOCKERFILE = """FROM base AS system
RUN --mount=type=cache,id=apt,target=/var/cache/apt \\
    apt-get update \\
 && apt-get install -y gcc
RUN python3 -m venv /opt/pytorch && bash /tmp/clamp-mtimes
"""
APT = "mount / from exec /bin/bash -o pipefail -c apt-get update  && apt-get install -y gcc"
VENV = "mount / from exec /bin/bash -o pipefail -c python3 -m venv /opt/pytorch && bash /tmp/clamp-mtimes"


def _record(key: str, description: str, parent: str = "", kind: str = "regular") -> CacheRecord:
    return CacheRecord(key, kind, parent, description, in_use=False, size=1)


def test_the_new_records_of_this_dockerfile_are_chosen_children_first() -> None:
    after = {
        r.id: r
        for r in (
            _record("old-apt", APT),  # the first build's: there before
            _record("new-apt", APT),
            _record("new-venv", VENV, parent="new-apt"),
            _record("new-target", "fileop target", parent="new-venv"),
            _record(
                "new-mount", "cached mount /var/cache/apt from exec " + APT.partition(" exec ")[2], kind=CACHE_MOUNT
            ),
            _record("others", "mount / from exec /bin/sh -c make all"),  # another build, same time
            _record("others-target", "fileop target", parent="others"),
            _record("context", "local source for context", kind="source.local"),
        )
    }
    chosen = records_of_build(frozenset({"old-apt"}), after, DOCKERFILE)
    assert [r.id for r in chosen] == ["new-target", "new-venv", "new-apt"]


def test_the_records_of_a_from_image_made_by_the_build_go_with_it() -> None:
    """A child flavour built FROM its parent's second image (--verify-reproducible-apart) holds that image's layers
    through one "from local" record per layer; left there, they keep the layers after the image is gone, and the
    next pair's equal layers leave their directories on the disk (Docker 20.10)."""
    after = {
        r.id: r
        for r in (
            _record("old-from", "from local "),  # the parent's, from the tier's own build: there before
            _record("from-1", "from local "),
            _record("from-2", "from local ", parent="from-1"),
            _record("new-venv", VENV, parent="from-2"),
        )
    }
    chosen = records_of_build(frozenset({"old-from"}), after, DOCKERFILE)
    assert [r.id for r in chosen] == ["new-venv", "from-2", "from-1"]


def test_a_record_of_a_command_not_in_the_dockerfile_stays() -> None:
    edited = DOCKERFILE.replace("gcc", "g++")
    after = {"new-apt": _record("new-apt", APT)}
    assert records_of_build(frozenset(), after, edited) == []


class _Engine:
    """The engine's two calls that drop_records makes: `df` and a prune by one ID, which (as BuildKit's) removes
    a record only once no other record names it as its parent, and never one in use."""

    def __init__(self, records: list[CacheRecord]) -> None:
        self.records = {r.id: r for r in records}
        self.api = self

    def df(self) -> dict[str, object]:
        return {
            "BuildCache": [
                {
                    "ID": r.id,
                    "Type": r.kind,
                    "Parent": r.parent,
                    "Description": r.description,
                    "InUse": r.in_use,
                    "Size": r.size,
                }
                for r in self.records.values()
            ]
        }

    def prune_builds(self, filters: dict[str, list[str]], all: bool) -> dict[str, int]:
        [key] = filters["id"]
        record = self.records.get(key)
        if record is None or record.in_use or any(r.parent == key for r in self.records.values()):
            return {"SpaceReclaimed": 0}
        del self.records[key]
        return {"SpaceReclaimed": record.size}


def test_parents_go_after_their_children_and_a_record_in_use_stays() -> None:
    chain = [_record("a", APT), _record("b", VENV, parent="a"), _record("c", "fileop target", parent="b")]
    busy = CacheRecord("busy", "regular", "", VENV, in_use=True, size=1)
    engine = _Engine([*chain, busy])
    dropped = drop_records(engine, [*chain, busy])  # parents first: three rounds
    assert (dropped.records, dropped.bytes_reclaimed, dropped.kept) == (3, 3, ("busy",))
    assert list(engine.records) == ["busy"]
