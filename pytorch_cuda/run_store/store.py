"""The folder of run files (files.py is its backend): a stored run as read back, reading the folder, writing a
record atomically, and its generated index.json."""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Final

from pytorch_cuda.run_store.accepted import Accepted, accepted_path, read_accepted
from pytorch_cuda.run_store.record import RECORD_KIND, Record, RunSubject, StoreError, results_sha256
from pytorch_cuda.run_store.run_identity import (
    HistoryKey,
    RunIdentity,
    history_key,
    is_partial,
    purpose_of,
    run_identity,
)
from pytorch_cuda_contract.results_file import ConformanceResults, ResultsFileError, parse_document

STORE_KIND: Final = "pytorch-cuda-results-store"
STORE_SCHEMA: Final = 1
INDEX_KIND: Final = "pytorch-cuda-results-index"


@dataclass(frozen=True, eq=False)  # one object per stored file: hashed by identity (history caches its diffs)
class Stored:
    """A stored run as read back; what is derived from its results is computed once (the judge asks every night of
    every metric for the host it ran on)."""

    record: Record
    path: Path
    results: ConformanceResults

    @property
    def gpu(self) -> str:
        return self.results.gpus[0].name if self.results.gpus else "no GPU"

    @cached_property
    def key(self) -> HistoryKey:
        return history_key(self.results)

    @cached_property
    def identity(self) -> RunIdentity:
        return run_identity(self.results)

    @property
    def purpose(self) -> str:
        """nightly (judged, a baseline for later runs), or fault, control (judged, stored apart, never a baseline)."""
        return purpose_of(self.results, self.record.fault, self.record.control)

    @cached_property
    def partial(self) -> bool:
        """A failed check or a selection that left tests not run: judged on the numbers it has, and marked."""
        counts = self.results.counts()
        failed = counts.get("failed", 0) + counts.get("error", 0) > 0
        return failed or not self.results.complete or is_partial(self.results)


def _marker(store: Path) -> Path:
    return store / "STORE.json"


def _check_store(store: Path, *, create: bool) -> None:
    marker = _marker(store)
    if marker.is_file():
        try:
            doc = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise StoreError(f"{marker} cannot be read ({error})", "restore it from the results branch") from None
        if not isinstance(doc, dict) or doc.get("kind") != STORE_KIND or doc.get("schema") != STORE_SCHEMA:
            raise StoreError(
                f"{marker} does not mark a results store of schema {STORE_SCHEMA} (found {doc!r})",
                "pass the folder `build.py results ingest` created, or update this checkout",
            )
        return
    if store.is_dir() and any(not p.name.startswith((".tmp-", ".lock")) for p in store.iterdir()):
        raise StoreError(
            f"{store} is not empty and holds no STORE.json, so it is not a results store",
            "pass an empty or new folder to start a store, or the folder of an existing one",
        )
    if not create:
        raise StoreError(f"{store} is not a results store (no {marker.name})", "ingest a results file into it first")
    _write_atomically(marker, json.dumps({"kind": STORE_KIND, "schema": STORE_SCHEMA}) + "\n", replace=True)


def _write_atomically(path: Path, text: str, *, replace: bool) -> None:
    """Write a temporary file beside ``path``, fsync it, then link it into place (``replace``: rename over)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o644)  # mkstemp's 0600 would hide the store from the web server and other readers
        if replace:
            os.replace(temporary, path)
        else:
            os.link(temporary, path)  # FileExistsError: never overwrite a stored run
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def _read_record(path: Path) -> Stored:
    fix = "restore the file from the results branch's history (git log -- PATH), or remove it and ingest it again"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise StoreError(f"stored run {path} cannot be read ({error})", fix) from None
    if not isinstance(doc, dict) or doc.get("kind") != RECORD_KIND or not isinstance(doc.get("results"), dict):
        raise StoreError(f"{path} is not a stored run (no kind {RECORD_KIND!r} with results)", fix)
    sha = results_sha256(doc["results"])
    if path.stem != sha:
        raise StoreError(f"{path} holds results whose sha256 is {sha}, not its name: it was changed", fix)
    try:
        results = parse_document(doc["results"], source=str(path))
    except ResultsFileError as error:
        raise StoreError(f"stored run {path}: {error.cause}", fix) from None
    raw = doc.get("subject")
    s: dict[str, Any] = raw if isinstance(raw, dict) else {}
    if path.parent.name != s.get("key"):
        raise StoreError(f"{path} names subject {s.get('key')!r}, not its folder {path.parent.name!r}", fix)
    subject = RunSubject(
        str(s.get("kind")), str(s.get("key")), str(s.get("label")), s.get("digest"), s.get("torch"), s.get("cuda")
    )
    control = doc.get("control")
    record = Record(
        sha,
        subject,
        doc.get("fault"),
        str(doc.get("source_name") or ""),
        doc["results"],
        str(control) if control else None,
    )
    return Stored(record, path, results)


def read_store(store: Path) -> list[Stored]:
    """Every stored run, oldest first (by the time the run started, then by name)."""
    _check_store(store, create=False)
    runs = [_read_record(path) for path in sorted((store / "runs").glob("*/*.json"))]
    return sorted(runs, key=lambda s: (s.results.started_at or "", s.record.sha256))


def _row(s: Stored) -> dict[str, Any]:
    r, gpu = s.results, (s.results.gpus[0] if s.results.gpus else None)
    return {
        "sha256": s.record.sha256,
        "path": f"runs/{s.record.subject.key}/{s.record.sha256}.json",
        "subject": s.record.subject.key,
        "subject_kind": s.record.subject.kind,
        "label": s.record.subject.label,
        "gpu": gpu.name if gpu else None,
        "compute_capability": gpu.compute_capability if gpu else None,
        "started_at": r.started_at,
        "exit_status": r.exit_status,
        "complete": r.complete,
        "counts": r.counts(),
        "fault": s.record.fault,
        "control": s.record.control,
        "purpose": s.purpose,
        "partial": s.partial,
        "history": s.key.text,
        "source_name": s.record.source_name,
    }


def _document(rows: list[dict[str, Any]], accepted: Sequence[Accepted]) -> dict[str, Any]:
    return {
        "kind": INDEX_KIND,
        "schema": STORE_SCHEMA,
        "generated_from": "runs/ and accepted/ (never edit by hand)",
        "runs": rows,
        "accepted": [{"sha256": a.sha256, **a.document()} for a in accepted],
    }


def index_document(runs: Sequence[Stored], accepted: Sequence[Accepted] = ()) -> dict[str, Any]:
    return _document([_row(s) for s in runs], accepted)


def _sound(row: object) -> bool:
    """A row this checkout can sort and place (one edited by hand, or by an older writer, makes a rebuild)."""
    if not isinstance(row, dict) or not all(isinstance(row.get(k), str) for k in ("sha256", "subject", "path")):
        return False
    placed = row["path"] == f"runs/{row['subject']}/{row['sha256']}.json"
    return placed and isinstance(row.get("started_at"), str | None)


def _updated_rows(store: Path, fresh: Sequence[Stored]) -> list[dict[str, Any]] | None:
    """The index on disk plus a row for each stored run it lacks (``fresh``, the runs just written, or read alone:
    a racing or an interrupted ingest's), in read_store's order; None where the index cannot be built on (none,
    unreadable, foreign, or naming a run no longer stored): then it is rebuilt in full."""
    try:
        doc = json.loads((store / "index.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or (doc.get("kind"), doc.get("schema")) != (INDEX_KIND, STORE_SCHEMA):
        return None
    listed = doc.get("runs")
    if not isinstance(listed, list) or not all(_sound(row) for row in listed):
        return None
    rows = {str(row.get("path")): row for row in listed}
    on_disk = {f"runs/{p.parent.name}/{p.name}" for p in (store / "runs").glob("*/*.json")}
    if len(rows) != len(listed) or rows.keys() - on_disk:
        return None
    given = {f"runs/{s.record.subject.key}/{s.record.sha256}.json": s for s in fresh}
    for path in on_disk - rows.keys():
        rows[path] = _row(given.get(path) or _read_record(store / path))
    return sorted(rows.values(), key=lambda row: (row["started_at"] or "", row["sha256"], row["subject"]))


def write_index(store: Path, fresh: Sequence[Stored] = (), *, full: bool = False) -> Path:
    """Update index.json under the store's lock (a concurrent ingest's older view never replaces a newer): the index
    on disk plus the runs it lacks, byte for byte what a rebuild writes; ``full`` (or no usable index) rebuilds it
    from every stored run."""
    path = store / "index.json"
    with (store / ".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        rows = None if full else _updated_rows(store, fresh)
        if rows is None:
            rows = [_row(s) for s in read_store(store)]
        document = _document(rows, read_accepted(store))
        _write_atomically(path, json.dumps(document, indent=1) + "\n", replace=True)
    return path


def write_accepted(store: Path, accepted: Accepted) -> Path:
    """Store an accepted regression (immutable, named by its sha256) and regenerate the index."""
    _check_store(store, create=False)
    path = accepted_path(store, accepted)
    _write_atomically(path, json.dumps(accepted.document(), indent=1, sort_keys=True) + "\n", replace=True)
    write_index(store)
    return path
