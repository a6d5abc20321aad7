"""The embedded backend: one SQLite database file (the standard library's sqlite3), the default for a store that
outgrows a folder of files.

Each run is one row, keyed by its sha256, with the columns the nightly's queries need indexed: its history (the
judge reads one history at a time), when it started (oldest first), its purpose. Writers may race (the nightly,
a bump's GPU run and a release ingest at once): every write is one ``BEGIN IMMEDIATE`` transaction and a run is
inserted with ``INSERT OR IGNORE`` on its primary key, so a run is stored exactly once, by whichever ingest came
first, and the other one reports it as already stored. WAL mode lets readers run beside a writer.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Final

from pytorch_cuda.run_store.accepted import ACCEPTED_KIND, Accepted
from pytorch_cuda.run_store.record import Record, StoreError
from pytorch_cuda.run_store.sql_rows import (
    JUDGE_WINDOWS,
    READ_COLUMNS,
    RUN_COLUMNS,
    SqlHistoryReads,
    export_path,
    judge_views_table,
    run_from_row,
    run_row,
    store_tables,
    view_row,
)
from pytorch_cuda.run_store.store import STORE_KIND, STORE_SCHEMA, Stored
from pytorch_cuda_contract.results_file import ConformanceResults

BUSY_TIMEOUT_S: Final = 120.0  # how long a writer waits for another writer's transaction
TABLES: Final = store_tables("TEXT")


def _write_ahead_log(db: sqlite3.Connection) -> None:
    """WAL mode, waiting for the other writers as a write does: a database that several ingests create at once may
    answer the switch with "database is locked" at once, without its busy timeout (SQLite's way out of a lock
    upgrade two connections would otherwise wait on forever); 1 open in 1,200 did, in 200 races of 6 openers."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


class SqliteStore(SqlHistoryReads):
    """A results store in one SQLite file."""

    MARK = "?"

    def __init__(self, location: Path, *, create: bool = False) -> None:
        self._location = location
        if not location.exists() and not create:
            raise StoreError(
                f"{location} is not a results store (no such database)",
                "ingest a results file into it first (`build.py results ingest FILE --store PATH.sqlite`)",
            )
        if location.exists() and not location.is_file():
            raise StoreError(
                f"--store {location} names a SQLite database (by its suffix) but is a folder",
                "pass the database file, or a folder without a .sqlite/.sqlite3/.db suffix for run files",
            )
        location.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(location, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            _write_ahead_log(self._db)
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._prepare(create)
        except sqlite3.DatabaseError as error:
            raise StoreError(
                f"{location} cannot be opened as a results database ({error})",
                "pass the database `build.py results ingest` created, or rebuild it from its run files with "
                "`build.py results export --store FOLDER --out PATH.sqlite`",
            ) from None

    @property
    def location(self) -> Path:
        return self._location

    @property
    def _where(self) -> str:
        return str(self._location)

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")  # one writer at a time; the others wait up to BUSY_TIMEOUT_S
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _prepare(self, create: bool) -> None:
        tables = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "store" not in tables:
            if tables:
                raise StoreError(
                    f"{self._location} is a SQLite database, but not a results store (it has no store table)",
                    "pass a new path (a new database starts a store), or the database of an existing store",
                )
            with self._writing() as db:
                for statement in TABLES:
                    db.execute(statement)
                if db.execute("SELECT COUNT(*) FROM store").fetchone()[0] == 0:
                    db.execute("INSERT INTO store VALUES (?, ?)", (STORE_KIND, STORE_SCHEMA))
        for name, statement in (("judge_windows", JUDGE_WINDOWS), ("judge_views", judge_views_table("TEXT"))):
            if not self._db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchall():
                with suppress(sqlite3.OperationalError):  # a read-only database: no window or view is kept or read
                    self._db.execute(statement)
        self._views = bool(self._db.execute("SELECT 1 FROM sqlite_master WHERE name = 'judge_views'").fetchall())
        found = self._db.execute("SELECT kind, schema FROM store").fetchall()
        if found != [(STORE_KIND, STORE_SCHEMA)]:
            raise StoreError(
                f"{self._location} does not hold a results store of schema {STORE_SCHEMA} (found {found!r})",
                "pass the database `build.py results ingest` created, or update this checkout",
            )

    def known(self, shas: Collection[str]) -> dict[str, str]:
        wanted = sorted(set(shas))
        found: dict[str, str] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(f"SELECT sha256, subject_key FROM runs WHERE sha256 IN ({marks})", chunk)
            found.update({sha: f"{self._location}: runs/{key}/{sha}.json" for sha, key in rows})
        return found

    def write(self, pending: Sequence[tuple[Record, ConformanceResults]]) -> tuple[list[Stored], list[str]]:
        written, duplicates = [], []
        marks = ",".join("?" * len(RUN_COLUMNS))
        with self._writing() as db:
            for record, results in pending:
                inserted = db.execute(f"INSERT OR IGNORE INTO runs VALUES ({marks})", run_row(record, results))
                if inserted.rowcount == 1 and self._views:
                    db.execute("INSERT OR IGNORE INTO judge_views VALUES (?, ?)", view_row(record))
                if inserted.rowcount == 1:
                    written.append(Stored(record, export_path(str(self._location), record.subject.key,
                                                              record.sha256), results))  # fmt: skip
                else:
                    duplicates.append(record.sha256)  # stored by a concurrent ingest since we looked
        return written, duplicates

    def _stored(self, row: tuple[Any, ...]) -> Stored:
        fix = "rebuild the database from its run files: `build.py results export --store FOLDER --out PATH.sqlite`"
        return run_from_row(row, str(self._location), fix)

    def runs(self) -> list[Stored]:
        query = f"SELECT {READ_COLUMNS} FROM runs ORDER BY started_at, sha256"
        return [self._stored(row) for row in self._db.execute(query)]

    def judge_window(self, text: str) -> str | None:
        try:
            row = self._db.execute("SELECT document FROM judge_windows WHERE history = ?", (text,)).fetchone()
        except sqlite3.OperationalError:
            return None  # a read-only store made before the table: no window
        return str(row[0]) if row else None

    def keep_judge_window(self, text: str, document: str) -> None:
        try:
            with self._writing() as db:
                db.execute("INSERT OR REPLACE INTO judge_windows VALUES (?, ?)", (text, document))
        except sqlite3.OperationalError:
            return  # a read-only database: derived data, not kept

    def accepted(self) -> list[Accepted]:
        query = "SELECT history, metric, through, reason, accepted_at FROM accepted"
        found = [Accepted(*row) for row in self._db.execute(query)]
        return sorted(found, key=lambda a: (a.accepted_at, a.sha256))

    def add_accepted(self, accepted: Accepted) -> None:
        document = accepted.document()
        assert document["kind"] == ACCEPTED_KIND
        with self._writing() as db:
            db.execute(
                "INSERT OR IGNORE INTO accepted VALUES (?, ?, ?, ?, ?, ?)",
                (accepted.sha256, accepted.history, accepted.metric, accepted.through, accepted.reason,
                 accepted.accepted_at),
            )  # fmt: skip
