"""`build.py results export`: a store's runs and accepted regressions copied into another store, most often a
folder of run files (the archive, byte for byte what `results ingest` into a folder writes); copied back, the
archive rebuilds a database that judges the same."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pytorch_cuda.run_store.backend import StoreLocation, open_store
from pytorch_cuda.run_store.record import StoreError


def _same(source: StoreLocation, target: StoreLocation) -> bool:
    if isinstance(source, Path) and isinstance(target, Path):
        return source.resolve() == target.resolve()
    return source == target


@dataclass(frozen=True)
class Exported:
    runs: int  # written into the target by this call
    already: int  # in the target already (the same sha256)
    accepted: int


def export_store(source: StoreLocation, target: StoreLocation) -> Exported:
    """Copy every run and accepted regression of ``source`` into ``target`` (a new or existing store)."""
    if _same(source, target):
        raise StoreError(
            f"results export was asked to copy {source} into itself",
            "pass a new folder (run files), a new PATH.sqlite or another database as --out",
        )
    reading = open_store(source)
    writing = open_store(target, create=True)
    runs = reading.runs()
    known = writing.known([s.record.sha256 for s in runs])
    pending = [(s.record, s.results) for s in runs if s.record.sha256 not in known]
    written, raced = writing.write(pending)
    have = {a.sha256 for a in writing.accepted()}
    accepted = [a for a in reading.accepted() if a.sha256 not in have]
    for a in accepted:
        writing.add_accepted(a)
    return Exported(len(written), len(known) + len(raced), len(accepted))
