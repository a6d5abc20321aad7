"""`build.py results ingest` into any backend: validate every file first, then store each run once.

A bad file, or a duplicate (unless skipped), stores none. The duplicate check asks the store only about the runs
being ingested (an indexed lookup in a database), never reads the whole store; a run a concurrent ingest stored
after that check is reported as already stored, never written twice.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytorch_cuda.run_store.backend import RunStore, StoreLocation, open_store
from pytorch_cuda.run_store.record import Record, StoreError, results_sha256, subject_of
from pytorch_cuda.run_store.store import Stored
from pytorch_cuda_contract.results_file import ConformanceResults, ResultsFileError, parse_results


@dataclass(frozen=True)
class Ingested:
    stored: tuple[Stored, ...]  # written by this call
    duplicates: tuple[str, ...]  # sha256 of files already stored (only with skip_duplicates, or a racing ingest)


def _load(path: Path) -> tuple[dict[str, Any], ConformanceResults]:
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise StoreError(f"{path} cannot be read ({error.strerror})", "check the path and its permissions") from None
    try:
        results = parse_results(raw, source=str(path))
    except ResultsFileError as error:
        raise StoreError(f"{error.source}: {error.cause}; nothing was stored", error.fix) from None
    if not results.gpus:
        raise StoreError(
            f"{path} records no GPU (the run saw none), so it belongs to no image x GPU cell; nothing was stored",
            "ingest the results of a run on a GPU host (conformance --require-gpu)",
        )
    document = json.loads(raw)
    return document, results


def ingest(
    paths: Sequence[Path],
    store: StoreLocation,
    *,
    fault: str | None = None,
    image_digest: str | None = None,
    skip_duplicates: bool = False,
    control: str | None = None,
) -> Ingested:
    """Validate every file, then store each in ``store`` (a folder or a database: backend.open_store)."""
    if fault and control:
        raise StoreError(
            f"--fault {fault} and --control {control} were both given: a run is either under a fault or a control",
            "ingest fault runs with --fault and legitimate setups with --control, in two calls",
        )
    backend: RunStore = open_store(store, create=True)
    pending: dict[str, tuple[Record, ConformanceResults]] = {}
    duplicates: list[str] = []
    for path in paths:
        document, results = _load(path)
        sha = results_sha256(document)
        known = backend.known([sha])
        if sha in known or sha in pending:
            where = known[sha] if sha in known else f"{pending[sha][0].source_name}, given twice"
            if skip_duplicates and sha in known:
                duplicates.append(sha)
                continue
            raise StoreError(
                f"{path} is already stored as {where} (same results, sha256 {sha[:12]}); nothing was stored",
                "leave it out (a run is stored once), or pass --skip-duplicates to store only the new files",
            )
        record = Record(sha, subject_of(results, image_digest), fault, path.name, document, control)
        pending[sha] = (record, results)
    written, raced = backend.write(list(pending.values()))
    return Ingested(tuple(written), tuple(duplicates + raced))


def read_store(store: StoreLocation) -> list[Stored]:
    """Every stored run of ``store`` (a folder or a database), oldest first."""
    return open_store(store).runs()
