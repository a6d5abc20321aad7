"""One interface over every results store (the store's backends: a folder of run files, files.py; an embedded
SQLite database, sqlite_store.py; a PostgreSQL database shared by a fleet, postgres_store.py), and how a ``--store``
location picks one.

A ``postgresql://`` (or ``postgres://``) URI is PostgreSQL; a location that ends in ``.sqlite`` (or ``.sqlite3``,
``.db``), or names a file that is a SQLite database, is the embedded database; anything else is a folder of run
files (STORE.json). The run files stay the archive: every
backend holds the same records, byte for byte, and ``results export`` writes any store back out as run files
(or into another backend: a store is rebuilt from its export).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

from pytorch_cuda.run_store.accepted import Accepted
from pytorch_cuda.run_store.record import Record
from pytorch_cuda.run_store.store import Stored
from pytorch_cuda_contract.results_file import ConformanceResults

RunOrder = tuple[str, str]  # a run's place in its history: (started_at, sha256)
DATABASE_SUFFIXES: Final = (".sqlite", ".sqlite3", ".db")
SQLITE_HEADER: Final = b"SQLite format 3\x00"


@dataclass(frozen=True)
class RunHead:
    """A stored run's place and purpose, read from the indexed columns alone (no results)."""

    sha256: str
    started_at: str
    purpose: str  # nightly | fault | control


class RunStore(Protocol):
    """A results store: immutable runs named by their sha256, and the accepted regressions."""

    @property
    def location(self) -> Path | str: ...

    def known(self, shas: Collection[str]) -> dict[str, str]:
        """Which of ``shas`` are stored already: sha256 -> where (for a refusal's paragraph)."""
        ...

    def write(self, pending: Sequence[tuple[Record, ConformanceResults]]) -> tuple[list[Stored], list[str]]:
        """Store each record once: (written, the sha256 of those a concurrent writer stored first)."""
        ...

    def runs(self) -> list[Stored]:
        """Every stored run, oldest first (by the time the run started, then by sha256)."""
        ...

    def histories(self) -> list[str]:
        """The text of every history key (run_identity.HistoryKey.text) with a stored run, sorted."""
        ...

    def history(self, text: str) -> list[Stored]:
        """The runs of one history, oldest first."""
        ...

    def history_since(self, text: str, since: RunOrder) -> list[Stored]:
        """The runs of one history from ``since`` on (by start time, then sha256), oldest first: an indexed read."""
        ...

    def heads(self, text: str) -> list[RunHead]:
        """Every run of one history, oldest first, as its sha256, start time and purpose: no results are read."""
        ...

    def run(self, sha: str) -> Stored | None:
        """One stored run, read whole, by its sha256 (a primary-key lookup), or None."""
        ...

    def latest(self, text: str, count: int | None) -> list[Stored]:
        """The last ``count`` runs of one history (None: all of them), oldest first, read whole."""
        ...

    def count_through(self, text: str, through: RunOrder) -> int:
        """How many runs of one history sort at or before ``through``: an indexed count."""
        ...

    def judge_window(self, text: str) -> str | None:
        """The judge's window of one history (decay/windowed.py, a JSON document), if one was kept."""
        ...

    def keep_judge_window(self, text: str, document: str) -> None:
        """Keep (or replace) the judge's window of one history: derived data, never exported; a store this
        process cannot write (a read-only copy or role) keeps none, and the next judge reads the whole history."""
        ...

    def accepted(self) -> list[Accepted]:
        """Every accepted regression, oldest first."""
        ...

    def add_accepted(self, accepted: Accepted) -> None: ...


StoreLocation = Path | str  # a folder or a SQLite file, or a PostgreSQL URI


def store_location(text: str) -> StoreLocation:
    """What ``--store TEXT`` names: a PostgreSQL URI as given (a Path would fold its ``//``), else a path."""
    from pytorch_cuda.run_store.postgres_store import is_dsn

    return text if is_dsn(text) else Path(text)


def is_database(location: StoreLocation) -> bool:
    """A database (SQLite or PostgreSQL), not a folder of run files: copied by export, not by copying files."""
    if isinstance(location, str):
        return True
    if location.suffix in DATABASE_SUFFIXES:
        return True
    if not location.is_file():
        return False
    with location.open("rb") as handle:
        return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER


def open_store(location: StoreLocation, *, create: bool = False) -> RunStore:
    """The store at ``location`` (``create``: start one there when none is)."""
    if isinstance(location, str):
        from pytorch_cuda.run_store.postgres_store import PostgresStore

        return PostgresStore(location, create=create)
    if is_database(location):
        from pytorch_cuda.run_store.sqlite_store import SqliteStore

        return SqliteStore(location, create=create)
    from pytorch_cuda.run_store.files import FileStore

    return FileStore(location, create=create)
