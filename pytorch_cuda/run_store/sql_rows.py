"""A stored run as one row of a database (the SQLite and PostgreSQL backends share it): the columns, the row a
record is written as, and the Stored it is read back as (its sha256 checked against its results).

Beside each row, the judge's view of the run (``judge_views``, derived, never exported): its results with each
test's outcome only, the tests' own metrics, messages and notes left out (about half the bytes, a sixth of the
parse), which is all the judge reads of a run (decay/: the watched measurements, the outcomes' counts, the
environment). A history's reads (SqlHistoryReads), which only the judge makes, return it where it is kept; a run
stored by a checkout before it is read whole.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

from pytorch_cuda.run_store.backend import RunHead, RunOrder
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
VIEW_MARK: Final = "judge_view"  # a key only a judge's view has: such a document is never stored as a run's results


def judge_views_table(key: str) -> str:
    """The judge's view of each run (judge_view), keyed as ``runs`` is; a store made before it gains it."""
    return f"CREATE TABLE IF NOT EXISTS judge_views (sha256 {key} PRIMARY KEY, view TEXT NOT NULL)"


def judge_view(results_document: Mapping[str, Any]) -> str:
    """A run's results as the judge reads them: each test's outcome only (canonical JSON, marked VIEW_MARK)."""
    tests = results_document.get("tests")
    outcomes = {nodeid: ({"outcome": entry.get("outcome")} if isinstance(entry, Mapping) else entry)
                for nodeid, entry in (tests.items() if isinstance(tests, Mapping) else ())}  # fmt: skip
    view = {**results_document, "tests": outcomes if isinstance(tests, Mapping) else tests, VIEW_MARK: True}
    return canonical_bytes(view).decode("utf-8")


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
        judge_views_table(key),
    )


def run_row(record: Record, results: ConformanceResults) -> tuple[str | None, ...]:
    """The row of RUN_COLUMNS a run is stored as: its results in their canonical bytes, the columns queried on."""
    if VIEW_MARK in record.results_document:
        raise ValueError(f"run {record.sha256} was read as the judge's view, not whole: it is never stored")
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


def view_row(record: Record) -> tuple[str, str]:
    """The judge_views row of a run being stored."""
    return (record.sha256, judge_view(record.results_document))


def run_from_view(row: tuple[Any, ...], where: str) -> Stored:
    """A row of READ_COLUMNS whose results are the judge's view (judge_view): derived from the checked row when it
    was stored, read as it is (its Record is marked, so it is never stored as the run)."""
    sha, subject_text, fault, control, source_name, view_text = row
    s = json.loads(subject_text)
    path = export_path(where, str(s["key"]), sha)
    document = json.loads(view_text)
    subject = RunSubject(str(s["kind"]), str(s["key"]), str(s["label"]), s["digest"], s["torch"], s["cuda"])
    results = parse_document(document, source=str(path))
    return Stored(Record(sha, subject, fault, source_name, document, control), path, results)


class SqlHistoryReads:
    """A history's reads, the same SQL on both databases but for the driver's placeholder (``MARK``: ``?`` for
    sqlite3, ``%s`` for psycopg); the store class gives ``_db`` (its connection), ``_views`` (whether it has the
    judge_views table) and ``_stored`` (a row read back). Only the judge reads histories: a run comes back as the
    judge's view where one is kept (judge_view), else whole."""

    MARK: ClassVar[str]
    _db: Any
    _views: bool

    def _stored(self, row: tuple[Any, ...]) -> Stored:
        raise NotImplementedError

    @property
    def _where(self) -> str:
        raise NotImplementedError

    def histories(self) -> list[str]:
        return [row[0] for row in self._db.execute("SELECT DISTINCT history FROM runs ORDER BY history")]

    def _history_rows(self, condition: str, parameters: tuple[str, ...]) -> list[Stored]:
        if not self._views:
            query = f"SELECT {READ_COLUMNS} FROM runs WHERE {condition} ORDER BY started_at, sha256"
            return [self._stored(row) for row in self._db.execute(query, parameters)]
        columns = "r.sha256, r.subject, r.fault, r.control, r.source_name, v.view, CASE WHEN v.view IS NULL THEN " \
            "r.results END"  # fmt: skip
        query = (
            f"SELECT {columns} FROM runs r LEFT JOIN judge_views v ON v.sha256 = r.sha256 WHERE {condition} "
            "ORDER BY r.started_at, r.sha256"
        )
        found = []
        for *row, view, results in self._db.execute(query, parameters):
            whole = view is None
            found.append(self._stored((*row, results)) if whole else run_from_view((*row, view), self._where))
        return found

    def history(self, text: str) -> list[Stored]:
        return self._history_rows(f"r.history = {self.MARK}" if self._views else f"history = {self.MARK}", (text,))

    def history_since(self, text: str, since: RunOrder) -> list[Stored]:
        mark, prefix = self.MARK, "r." if self._views else ""
        condition = f"{prefix}history = {mark} AND ({prefix}started_at, {prefix}sha256) >= ({mark}, {mark})"
        return self._history_rows(condition, (text, *since))

    def heads(self, text: str) -> list[RunHead]:
        query = f"SELECT sha256, started_at, purpose FROM runs WHERE history = {self.MARK} ORDER BY started_at, sha256"
        return [RunHead(str(sha), str(at), str(purpose)) for sha, at, purpose in self._db.execute(query, (text,))]

    def run(self, sha: str) -> Stored | None:
        row = self._db.execute(f"SELECT {READ_COLUMNS} FROM runs WHERE sha256 = {self.MARK}", (sha,)).fetchone()
        return None if row is None else self._stored(row)

    def latest(self, text: str, count: int | None) -> list[Stored]:
        """Whole runs (not the judge's views): the newest first through the index, returned oldest first."""
        limit = "" if count is None else f" LIMIT {int(count)}"
        query = (
            f"SELECT {READ_COLUMNS} FROM runs WHERE history = {self.MARK} ORDER BY started_at DESC, sha256 DESC{limit}"
        )
        return [self._stored(row) for row in self._db.execute(query, (text,))][::-1]

    def count_through(self, text: str, through: RunOrder) -> int:
        mark = self.MARK
        query = f"SELECT count(*) FROM runs WHERE history = {mark} AND (started_at, sha256) <= ({mark}, {mark})"
        row = self._db.execute(query, (text, *through)).fetchone()
        return int(row[0]) if row else 0
