"""A stored run as one row of a database (the SQLite and PostgreSQL backends share it): the columns, the row a
record is written as, and the Stored it is read back as (its sha256 checked against its results)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, ClassVar, Final

from pytorch_cuda.run_store.backend import RunOrder
from pytorch_cuda.run_store.record import Record, RunSubject, StoreError, canonical_bytes
from pytorch_cuda.run_store.run_identity import history_key
from pytorch_cuda.run_store.store import Stored
from pytorch_cuda_contract.results_file import ConformanceResults, ResultsFileError, parse_document

RUN_COLUMNS: Final = (
    "sha256",
    "subject_key",
    "subject",
    "history",
    "started_at",
    "purpose",
    "fault",
    "control",
    "source_name",
    "results",
)
READ_COLUMNS: Final = "sha256, subject, fault, control, source_name, results"  # what run_from_row reads
ACCEPTED_COLUMNS: Final = ("sha256", "history", "metric", "through", "reason", "accepted_at")
# derived (decay/windowed.py): where the judge may start reading each history; a store made before it gains it
JUDGE_WINDOWS: Final = "CREATE TABLE IF NOT EXISTS judge_windows (history TEXT PRIMARY KEY, document TEXT NOT NULL)"


def store_tables(key: str) -> tuple[str, ...]:
    """The store's tables and indexes; ``key`` is the type of the columns runs are keyed and ordered by (``TEXT``, or
    ``TEXT COLLATE "C"`` on PostgreSQL, whose default collation would order them by locale, not by byte)."""
    return (
        "CREATE TABLE IF NOT EXISTS store (kind TEXT NOT NULL, schema INTEGER NOT NULL)",
        f"""CREATE TABLE IF NOT EXISTS runs (
        sha256 {key} PRIMARY KEY,
        subject_key {key} NOT NULL,
        subject TEXT NOT NULL,
        history {key} NOT NULL,
        started_at {key} NOT NULL,
        purpose TEXT NOT NULL,
        fault TEXT,
        control TEXT,
        source_name TEXT NOT NULL,
        results TEXT NOT NULL
    )""",
        "CREATE INDEX IF NOT EXISTS runs_by_history ON runs (history, started_at, sha256)",
        "CREATE INDEX IF NOT EXISTS runs_by_time ON runs (started_at, sha256)",
        f"""CREATE TABLE IF NOT EXISTS accepted (
        sha256 {key} PRIMARY KEY,
        history {key} NOT NULL,
        metric TEXT NOT NULL,
        through TEXT NOT NULL,
        reason TEXT NOT NULL,
        accepted_at {key} NOT NULL
    )""",
        "CREATE INDEX IF NOT EXISTS accepted_by_history ON accepted (history, metric)",
        JUDGE_WINDOWS,
    )


def run_row(record: Record, results: ConformanceResults) -> tuple[str | None, ...]:
    """The row of RUN_COLUMNS a run is stored as: its results in their canonical bytes, the columns queried on."""
    return (
        record.sha256,
        record.subject.key,
        json.dumps(record.document()["subject"], sort_keys=True),
        history_key(results).text,
        results.started_at or "",
        "fault" if record.fault else ("control" if record.control else "nightly"),
        record.fault,
        record.control,
        record.source_name,
        canonical_bytes(record.results_document).decode("utf-8"),
    )


def export_path(where: str, subject_key: str, sha: str) -> Path:
    """Where a run's file is in an export (`results export`), for people: the database, then that path."""
    return Path(f"{where}:runs") / subject_key / f"{sha}.json"


def run_from_row(row: tuple[Any, ...], where: str, fix: str) -> Stored:
    """A row of READ_COLUMNS read back; a row whose results no longer hash to its sha256 is refused (``fix``)."""
    sha, subject_text, fault, control, source_name, results_text = row
    s = json.loads(subject_text)
    path = export_path(where, str(s["key"]), sha)
    try:
        document = json.loads(results_text)
        results = parse_document(document, source=str(path))
    except (ValueError, ResultsFileError) as error:
        raise StoreError(f"stored run {path} cannot be read ({error})", fix) from None
    # the column holds the canonical bytes (run_row): hashing them is the check, without serialising them again
    if hashlib.sha256(results_text.encode("utf-8")).hexdigest() != sha:
        raise StoreError(f"stored run {path} holds results whose sha256 is not its name: it was changed", fix)
    subject = RunSubject(str(s["kind"]), str(s["key"]), str(s["label"]), s["digest"], s["torch"], s["cuda"])
    return Stored(Record(sha, subject, fault, source_name, document, control), path, results)


class SqlHistoryReads:
    """A history's reads, the same SQL on both databases but for the driver's placeholder (``MARK``: ``?`` for
    sqlite3, ``%s`` for psycopg); the store class gives ``_db`` (its connection) and ``_stored`` (a row read back)."""

    MARK: ClassVar[str]
    _db: Any

    def _stored(self, row: tuple[Any, ...]) -> Stored:
        raise NotImplementedError

    def histories(self) -> list[str]:
        return [row[0] for row in self._db.execute("SELECT DISTINCT history FROM runs ORDER BY history")]

    def history(self, text: str) -> list[Stored]:
        query = f"SELECT {READ_COLUMNS} FROM runs WHERE history = {self.MARK} ORDER BY started_at, sha256"
        return [self._stored(row) for row in self._db.execute(query, (text,))]

    def history_since(self, text: str, since: RunOrder) -> list[Stored]:
        mark = self.MARK
        query = (
            f"SELECT {READ_COLUMNS} FROM runs WHERE history = {mark} AND (started_at, sha256) >= ({mark}, {mark}) "
            "ORDER BY started_at, sha256"
        )
        return [self._stored(row) for row in self._db.execute(query, (text, *since))]

    def count_through(self, text: str, through: RunOrder) -> int:
        mark = self.MARK
        query = f"SELECT count(*) FROM runs WHERE history = {mark} AND (started_at, sha256) <= ({mark}, {mark})"
        row = self._db.execute(query, (text, *through)).fetchone()
        return int(row[0]) if row else 0
