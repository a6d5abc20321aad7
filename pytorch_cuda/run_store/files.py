"""The folder backend: one immutable JSON file per run (store.py), the store the project started with and the
archive every other backend exports to (export.py)."""

from __future__ import annotations

import fcntl
import json
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Final

from pytorch_cuda.run_store.accepted import Accepted, read_accepted
from pytorch_cuda.run_store.backend import RunHead, RunOrder
from pytorch_cuda.run_store.record import Record, StoreError
from pytorch_cuda.run_store.run_identity import history_key
from pytorch_cuda.run_store.store import (
    Stored,
    _check_store,
    _marker,
    _read_record,
    _write_atomically,
    read_store,
    write_accepted,
    write_index,
)
from pytorch_cuda_contract.results_file import ConformanceResults

JUDGE_WINDOWS: Final = "judge-windows.json"


class FileStore:
    """A folder: STORE.json, runs/<subject>/<sha256>.json, accepted/<sha256>.json, index.json."""

    def __init__(self, location: Path, *, create: bool = False) -> None:
        if location.exists() and not location.is_dir():
            raise StoreError(
                f"--store {location} is a file, not a folder, and not a SQLite database",
                "pass a folder (a new one starts a store), or a path ending in .sqlite for the embedded database",
            )
        self._location = location
        self._runs: list[Stored] | None = None
        # A folder a racing ingest is starting has no STORE.json yet (it is written first): an ingest leaves the
        # checks to write(), which starts the store or joins the one just started, and refuses a foreign folder.
        if not create or _marker(location).is_file():
            _check_store(location, create=False)

    @property
    def location(self) -> Path:
        return self._location

    def known(self, shas: Collection[str]) -> dict[str, str]:
        if not _marker(self._location).exists():
            return {}
        found = {}
        for sha in shas:
            for path in (self._location / "runs").glob(f"*/{sha}.json"):
                found[sha] = str(path)
        return found

    def write(self, pending: Sequence[tuple[Record, ConformanceResults]]) -> tuple[list[Stored], list[str]]:
        _check_store(self._location, create=True)
        written, duplicates = [], []
        for record, _ in pending:
            target = self._location / "runs" / record.subject.key / f"{record.sha256}.json"
            text = json.dumps(record.document(), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
            try:
                _write_atomically(target, text, replace=False)
            except FileExistsError:
                duplicates.append(record.sha256)  # stored by a concurrent ingest since we looked: the same bytes
                continue
            except OSError as error:
                raise StoreError(f"cannot write {target} ({error.strerror})", "pass a writable --store") from None
            written.append(_read_record(target))
        write_index(self._location, written)
        self._runs = None
        return written, duplicates

    def runs(self) -> list[Stored]:
        if self._runs is None:  # read once per open store: judge asks for every history in turn
            self._runs = read_store(self._location)
        return self._runs

    def histories(self) -> list[str]:
        return sorted({history_key(s.results).text for s in self.runs()})

    def history(self, text: str) -> list[Stored]:
        return [s for s in self.runs() if history_key(s.results).text == text]

    def history_since(self, text: str, since: RunOrder) -> list[Stored]:
        return [s for s in self.history(text) if (s.results.started_at or "", s.record.sha256) >= since]

    def heads(self, text: str) -> list[RunHead]:
        return [RunHead(s.record.sha256, s.results.started_at or "", s.purpose) for s in self.history(text)]

    def run(self, sha: str) -> Stored | None:
        return next((s for s in self.runs() if s.record.sha256 == sha), None)

    def latest(self, text: str, count: int | None) -> list[Stored]:
        runs = self.history(text)
        return runs if count is None else runs[max(0, len(runs) - count) :]

    def count_through(self, text: str, through: RunOrder) -> int:
        return sum(1 for s in self.history(text) if (s.results.started_at or "", s.record.sha256) <= through)

    def judge_window(self, text: str) -> str | None:
        path = self._location / JUDGE_WINDOWS
        windows = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        found = windows.get(text) if isinstance(windows, dict) else None
        return str(found) if found is not None else None

    def keep_judge_window(self, text: str, document: str) -> None:
        """judge-windows.json beside index.json (derived, like it), rewritten under the store's lock."""
        path = self._location / JUDGE_WINDOWS
        try:
            with (self._location / ".lock").open("a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                windows = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
                windows[text] = document
                _write_atomically(path, json.dumps(windows, indent=1, sort_keys=True) + "\n", replace=True)
        except OSError:
            return  # a read-only folder: derived data, not kept

    def accepted(self) -> list[Accepted]:
        return read_accepted(self._location)

    def add_accepted(self, accepted: Accepted) -> None:
        write_accepted(self._location, accepted)
