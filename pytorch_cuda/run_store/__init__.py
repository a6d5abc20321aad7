"""The results store: every conformance run kept as data, bound to what it tested.

A directory (the nightly keeps it on the ``results`` branch, so git history is its durability):

    STORE.json                      {"kind": "pytorch-cuda-results-store", "schema": 1}: marks the folder
    runs/<subject>/<sha256>.json    one immutable record per run, named by the sha256 of its results' canonical JSON
    index.json                      generated from the records (each ingest adds its runs); never edited by hand

A subject is what a run tested: an image by its digest (``image-sha256-<hex>``), or a bare host by its torch and
CUDA versions (``bare-torch-<v>-cuda-<v>``, labelled bare). ``build.py results ingest`` validates every file
before it writes any, refuses malformed, foreign-schema and duplicate results with one paragraph (exit 2), and
writes each record atomically (temporary file, fsync, link into place), so nothing already stored is lost.

The same store may be one SQLite database instead of a folder (``--store results.sqlite``: backend.py picks the
backend by the location, sqlite_store.py is the database); `build.py results export` writes any store back out as
run files, and a store is rebuilt from them the same way.
"""

from pytorch_cuda.run_store.ingesting import Ingested, ingest, read_store
from pytorch_cuda.run_store.record import Record, RunSubject, StoreError, canonical_bytes, results_sha256, subject_of
from pytorch_cuda.run_store.store import Stored

__all__ = [
    "Ingested",
    "Record",
    "RunSubject",
    "StoreError",
    "Stored",
    "canonical_bytes",
    "ingest",
    "read_store",
    "results_sha256",
    "subject_of",
]
