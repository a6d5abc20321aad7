"""The fleet's backend: one PostgreSQL database that every runner's ingest writes (``--store postgresql://...``;
psycopg 3, the optional ``postgres`` extra). The tables are sqlite_store.py's, the rows sql_rows.py's.

Writers race (the nightly, a bump's GPU runs, a release, on several machines): every write is one transaction,
and a run is inserted with ``INSERT ... ON CONFLICT (sha256) DO NOTHING``: the second writer of the same run waits
for the first one's transaction and then inserts nothing, so a run is stored exactly once and the other ingest
reports it as already stored. The tables are made under a transaction-scoped advisory lock, so two ingests that
start a new store at once make them once. Text columns sort as bytes (``COLLATE "C"``), as SQLite and Python do.
The password is never printed: a store is named by its user, host, port and database.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pytorch_cuda.run_store.accepted import Accepted
from pytorch_cuda.run_store.record import Record, StoreError
from pytorch_cuda.run_store.sql_rows import (
    ACCEPTED_COLUMNS,
    READ_COLUMNS,
    RUN_COLUMNS,
    SqlHistoryReads,
    judge_views_table,
    run_from_row,
    run_row,
    store_tables,
    view_row,
)
from pytorch_cuda.run_store.store import STORE_KIND, STORE_SCHEMA, Stored
from pytorch_cuda_contract.results_file import ConformanceResults

if TYPE_CHECKING:
    import psycopg

DSN_SCHEMES: Final = ("postgresql://", "postgres://")
SCHEMA_LOCK: Final = 5_505_505  # pg_advisory_xact_lock's key while the tables are made
TABLES: Final = store_tables('TEXT COLLATE "C"')


def is_dsn(location: object) -> bool:
    return isinstance(location, str) and location.startswith(DSN_SCHEMES)


def _connect(dsn: str) -> tuple[psycopg.Connection[tuple[Any, ...]], str]:
    """An autocommit connection and the store's name for people (no password)."""
    try:
        import psycopg
    except ImportError:
        raise StoreError(
            "--store names a PostgreSQL database, but psycopg (the optional `postgres` extra) is not installed",
            "install it: scripts/setup-python.sh postgres (or pip install 'pytorch-cuda[postgres]')",
        ) from None
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError as error:
        raise StoreError(
            f"--store is not a PostgreSQL connection URI ({error})",
            "pass postgresql://USER@HOST:PORT/DATABASE (the password in PGPASSWORD)",
        ) from None
    user, host, port, database = (parts.get(k, "") for k in ("user", "host", "port", "dbname"))
    name = f"postgresql://{user}@{host}:{port or 5432}/{database}"
    try:
        return psycopg.connect(dsn, autocommit=True, connect_timeout=30), name
    except psycopg.OperationalError as error:
        cause = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise StoreError(
            f"the results store {name} cannot be reached ({cause})",
            "check the server, the URI and the password (PGPASSWORD or ~/.pgpass)",
        ) from None


class PostgresStore(SqlHistoryReads):
    """A results store in one PostgreSQL database."""

    MARK = "%s"

    def __init__(self, dsn: str, *, create: bool = False) -> None:
        self._db, self._name = _connect(dsn)
        self._prepare(create)

    @property
    def location(self) -> str:
        return self._name

    @property
    def _where(self) -> str:
        return self._name

    @contextmanager
    def _writing(self) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
        with self._db.transaction():
            yield self._db

    def _has_store(self) -> bool:
        # a query of the catalog, not to_regclass: that reads a cache, stale after waiting on the advisory lock
        query = "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'store'"
        row = self._db.execute(query).fetchone()
        return bool(row and row[0])

    def _prepare(self, create: bool) -> None:
        if not self._has_store():
            with self._writing() as db:  # a racing ingest may be making the tables: wait for it, then look again
                db.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
                if not self._has_store():
                    self._make_tables(create)
        self._views = self._has_views()
        found = [tuple(row) for row in self._db.execute("SELECT kind, schema FROM store")]
        if found != [(STORE_KIND, STORE_SCHEMA)]:
            raise StoreError(
                f"{self._name} does not hold a results store of schema {STORE_SCHEMA} (found {found!r})",
                "pass the database `build.py results ingest` created, or update this checkout",
            )

    def _has_views(self) -> bool:
        """Whether the judge_views table is there; a store made before it gains it where this role may."""
        import psycopg

        query = "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'judge_views'"
        row = self._db.execute(query).fetchone()
        if row and row[0]:
            return True
        try:
            self._db.execute(judge_views_table('TEXT COLLATE "C"'))
        except (psycopg.errors.InsufficientPrivilege, psycopg.errors.ReadOnlySqlTransaction):
            return False  # read whole, as before
        return True

    def _make_tables(self, create: bool) -> None:
        tables = self._db.execute("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()").fetchone()
        if tables and tables[0]:
            raise StoreError(
                f"{self._name} is a PostgreSQL database, but not a results store (no store table)",
                "pass the database of an existing store, or an empty one to start a store",
            )
        if not create:
            raise StoreError(
                f"{self._name} is not a results store (no store table)",
                "ingest a results file into it first (`build.py results ingest FILE --store URI`)",
            )
        for statement in TABLES:
            self._db.execute(statement)
        self._db.execute("INSERT INTO store VALUES (%s, %s)", (STORE_KIND, STORE_SCHEMA))

    def known(self, shas: Collection[str]) -> dict[str, str]:
        rows = self._db.execute("SELECT sha256, subject_key FROM runs WHERE sha256 = ANY(%s)", (sorted(set(shas)),))
        return {sha: f"{self._name}: runs/{key}/{sha}.json" for sha, key in rows}

    def write(self, pending: Sequence[tuple[Record, ConformanceResults]]) -> tuple[list[Stored], list[str]]:
        written, duplicates = [], []
        marks = ",".join(["%s"] * len(RUN_COLUMNS))
        insert = f"INSERT INTO runs ({','.join(RUN_COLUMNS)}) VALUES ({marks}) ON CONFLICT (sha256) DO NOTHING"
        with self._writing() as db:
            for record, results in pending:
                if db.execute(insert, run_row(record, results)).rowcount == 1:
                    if self._views:
                        db.execute("INSERT INTO judge_views VALUES (%s, %s) ON CONFLICT DO NOTHING", view_row(record))
                    written.append(Stored(record, Path(f"{self._name}:runs") / record.subject.key /
                                          f"{record.sha256}.json", results))  # fmt: skip
                else:
                    duplicates.append(record.sha256)  # stored by a concurrent ingest since we looked
        return written, duplicates

    def _stored(self, row: tuple[Any, ...]) -> Stored:
        fix = "rebuild the database from its run files: `build.py results export --store FOLDER --out URI`"
        return run_from_row(row, self._name, fix)

    def runs(self) -> list[Stored]:
        query = f"SELECT {READ_COLUMNS} FROM runs ORDER BY started_at, sha256"
        return [self._stored(row) for row in self._db.execute(query)]

    def judge_window(self, text: str) -> str | None:
        row = self._db.execute("SELECT document FROM judge_windows WHERE history = %s", (text,)).fetchone()
        return str(row[0]) if row else None

    def keep_judge_window(self, text: str, document: str) -> None:
        import psycopg

        try:
            with self._writing() as db:
                db.execute(
                    "INSERT INTO judge_windows VALUES (%s, %s) ON CONFLICT (history) DO UPDATE SET document = %s",
                    (text, document, document),
                )
        except (psycopg.errors.InsufficientPrivilege, psycopg.errors.ReadOnlySqlTransaction):
            return  # a role that may only read: derived data, not kept

    def accepted(self) -> list[Accepted]:
        query = "SELECT history, metric, through, reason, accepted_at FROM accepted"
        found = [Accepted(*row) for row in self._db.execute(query)]
        return sorted(found, key=lambda a: (a.accepted_at, a.sha256))

    def add_accepted(self, accepted: Accepted) -> None:
        marks = ",".join(["%s"] * len(ACCEPTED_COLUMNS))
        with self._writing() as db:
            db.execute(
                f"INSERT INTO accepted ({','.join(ACCEPTED_COLUMNS)}) VALUES ({marks}) ON CONFLICT DO NOTHING",
                (accepted.sha256, accepted.history, accepted.metric, accepted.through, accepted.reason,
                 accepted.accepted_at),
            )  # fmt: skip
