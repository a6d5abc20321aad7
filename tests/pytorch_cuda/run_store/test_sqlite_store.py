"""The embedded SQLite backend: the same runs as the folder of files, an export that is the archive byte for
byte, the same verdicts, and ingests that race without losing or duplicating a run."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from pytorch_cuda.cli.main import main
from pytorch_cuda.decay import judge_each, judge_store
from pytorch_cuda.decay.report import judged_document
from pytorch_cuda.run_store import StoreError, ingest, read_store
from pytorch_cuda.run_store.accepted import Accepted
from pytorch_cuda.run_store.backend import open_store
from pytorch_cuda.run_store.export import export_store
from tests.support.racing_ingests import race
from tests.support.synthetic_history import night, wobble, write_nights

GEMM = "gemm.bf16.tflops"


def _history(tmp_path: Path) -> list[Path]:
    """30 nights of two hosts: steady, a held 15% drop from night 20 (older than the noise window's end by the
    last night), and a fault run."""
    nights = [night(d, scale={GEMM: wobble(d) * (0.85 if d >= 20 else 1.0)}, host="ab"[d % 2]) for d in range(30)]
    return write_nights(tmp_path / "incoming", nights)


def _snapshot(store: Path) -> dict[str, bytes]:
    return {str(p.relative_to(store)): p.read_bytes() for p in sorted(store.rglob("*")) if p.is_file()}


def test_a_database_holds_the_same_runs_in_the_same_order_as_the_folder(tmp_path: Path) -> None:
    paths = _history(tmp_path)
    ingest(paths, tmp_path / "files")
    done = ingest(paths, tmp_path / "store.sqlite")
    assert len(done.stored) == 30
    folder, database = read_store(tmp_path / "files"), read_store(tmp_path / "store.sqlite")
    assert [s.record.document() for s in database] == [s.record.document() for s in folder]
    assert [s.purpose for s in database] == ["nightly"] * 30


def test_a_duplicate_is_refused_or_skipped_in_a_database(tmp_path: Path) -> None:
    paths = _history(tmp_path)[:3]
    store = tmp_path / "store.sqlite"
    ingest(paths[:2], store)
    with pytest.raises(StoreError, match=r"already stored as .*store\.sqlite: runs/image-sha256-"):
        ingest(paths[1:], store)
    assert len(read_store(store)) == 2  # the refused call stored none of its files
    done = ingest(paths, store, skip_duplicates=True)
    assert (len(done.stored), len(done.duplicates)) == (1, 2)


def test_export_writes_the_archive_byte_for_byte_and_rebuilds_a_store_that_judges_the_same(tmp_path: Path) -> None:
    paths = _history(tmp_path)
    files, database = tmp_path / "files", tmp_path / "store.sqlite"
    ingest(paths, files)
    (open_regression,) = [f for j in judge_store(read_store(files)) for f in j.latest_regressions() if f.metric == GEMM]
    accepted = Accepted(
        open_regression.run.key.text, GEMM, open_regression.run.record.sha256, "new level", "2027-01-01T00:00:00Z"
    )
    open_store(files).add_accepted(accepted)
    export_store(files, database)
    export_store(database, tmp_path / "archive")
    assert _snapshot(tmp_path / "archive") == _snapshot(files)
    verdicts = [judged_document(judge_each(open_store(store))) for store in (files, database, tmp_path / "archive")]
    assert verdicts[0] == verdicts[1] == verdicts[2]
    assert verdicts[1]["histories"][0]["accepted"] == [
        {"history": accepted.history, "metric": GEMM, "through": accepted.through, "reason": "new level",
         "accepted_at": "2027-01-01T00:00:00Z"}
    ]  # fmt: skip
    assert judged_document(judge_store(read_store(database), open_store(database).accepted())) == verdicts[1]


def test_export_and_judge_commands_on_a_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    database = tmp_path / "store.sqlite"
    assert main(["results", "ingest", *map(str, _history(tmp_path)), "--store", str(database)]) == 0
    assert main(["results", "judge", "--store", str(database), "--json"]) == 1  # the held drop is open
    capsys.readouterr()
    assert main(["results", "export", "--store", str(database), "--out", str(tmp_path / "archive"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"] == 30
    assert len(list((tmp_path / "archive/runs").glob("*/*.json"))) == 30


def test_a_database_that_is_not_a_store_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(StoreError, match="not a results store"):
        read_store(other)
    (tmp_path / "folder.sqlite").mkdir()
    with pytest.raises(StoreError, match="is a folder"):
        read_store(tmp_path / "folder.sqlite")
    with pytest.raises(StoreError, match="no such database"):
        read_store(tmp_path / "missing.sqlite")


@pytest.mark.parametrize("name", ["store", "store.sqlite"])
def test_ingests_started_together_lose_and_duplicate_nothing(tmp_path: Path, name: str) -> None:
    paths = write_nights(tmp_path / "incoming", [night(d, scale={GEMM: wobble(d)}) for d in range(24)])
    for attempt in range(5):
        claimed, stored = race(tmp_path / f"{attempt}" / name, paths)
        assert len(stored) == len(set(stored)) == 24  # nothing lost, nothing twice
        assert sorted(claimed) == sorted(stored)  # each run written by exactly one of the writers


def test_the_judge_reads_its_view_of_each_run_and_a_run_stored_without_one_whole(tmp_path: Path) -> None:
    """A history's reads (only the judge makes them) return each run's view: its tests' outcomes, not their
    details, never stored as the run; a store whose runs have no view (made by an earlier checkout) judges the
    same from the whole runs."""
    from pytorch_cuda.run_store.sql_rows import VIEW_MARK, run_row

    paths = _history(tmp_path)
    ingest(paths, tmp_path / "store.sqlite")
    store = open_store(tmp_path / "store.sqlite")
    (text,) = store.histories()
    read = store.history(text)
    whole = read_store(tmp_path / "store.sqlite")
    assert [r.record.sha256 for r in read] == [r.record.sha256 for r in whole]
    assert all(VIEW_MARK in r.record.results_document for r in read)
    assert [r.results.counts() for r in read] == [r.results.counts() for r in whole]
    assert [r.results.measurements for r in read] == [r.results.measurements for r in whole]
    with pytest.raises(ValueError, match="judge's view"):
        run_row(read[0].record, read[0].results)
    before = judged_document(judge_each(store))
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        db.execute("DELETE FROM judge_views WHERE rowid % 2 = 0")  # half the runs stored before views
    mixed = open_store(tmp_path / "store.sqlite")
    assert sum(VIEW_MARK in r.record.results_document for r in mixed.history(text)) == 15
    assert judged_document(judge_each(mixed)) == before == judged_document(judge_store(whole))
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        db.execute("DROP TABLE judge_views")  # a store made before views: it gains the table, its runs are read whole
    gained = open_store(tmp_path / "store.sqlite")
    assert not any(VIEW_MARK in r.record.results_document for r in gained.history(text))
    assert judged_document(judge_each(gained)) == before
