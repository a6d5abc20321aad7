"""The scale benchmark's synthetic fleet (benchmarks/synthetic_fleet.py): the rows it stores in bulk are the rows
`results ingest` stores for the same runs, on SQLite and as run files, and its table (no timing asserts)."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

from benchmarks.store_scale import table
from benchmarks.synthetic_fleet import Fleet, bulk_store
from pytorch_cuda.run_store import ingest, read_store
from pytorch_cuda.run_store.backend import open_store
from pytorch_cuda.run_store.store import index_document


def _runs(store: Path) -> list[tuple[str, str, str | None, str]]:
    return [(s.record.sha256, json.dumps(s.record.document(), sort_keys=True), s.results.started_at, s.key.text)
            for s in read_store(store)]  # fmt: skip


def test_bulk_rows_are_the_rows_an_ingest_stores(tmp_path: Path) -> None:
    fleet = Fleet(2, 2)
    files = fleet.write_files(tmp_path / "files", range(3))
    for name in ("ingested.sqlite", "ingested"):
        ingest(files, tmp_path / name)
    bulk_store(fleet, tmp_path / "bulk.sqlite", range(3), every=5)
    bulk_store(fleet, tmp_path / "bulk", range(3), every=5)
    ingested = _runs(tmp_path / "ingested.sqlite")
    assert len(ingested) == 12
    assert len({key for *_, key in ingested}) == 4  # 2 GPU models x 2 variants, one history each
    assert _runs(tmp_path / "bulk.sqlite") == ingested
    assert _runs(tmp_path / "bulk") == _runs(tmp_path / "ingested") == ingested
    for name in ("bulk", "ingested"):  # the folder's files are the ones an ingest writes, byte for byte
        (tmp_path / name / "index.json").unlink()
    assert sorted(p.read_bytes() for p in (tmp_path / "bulk").rglob("*.json")) == sorted(
        p.read_bytes() for p in (tmp_path / "ingested").rglob("*.json")
    )
    documents = [index_document(open_store(tmp_path / n).runs()) for n in ("bulk.sqlite", "ingested.sqlite")]
    assert documents[0] == documents[1]
    views = [_views(tmp_path / n) for n in ("bulk.sqlite", "ingested.sqlite")]
    assert len(views[0]) == 12
    assert views[0] == views[1]


def _views(database: Path) -> list[tuple[str, str]]:
    with closing(sqlite3.connect(database)) as db:
        return list(db.execute("SELECT sha256, view FROM judge_views ORDER BY sha256"))


def test_the_table_shows_a_stopped_command_and_sums_the_night() -> None:
    results = {
        "sqlite": {"1000": {"stored": 960, "ingest_s": 2.0, "judge_s": 3.0, "site_s": 5.0, "ingest_cpu_s": 1.0,
                            "judge_cpu_s": 1.5, "site_cpu_s": 2.5, "site_incremental_s": 4.0,
                            "site_incremental_cpu_s": 2.0}},
        "files": {"1000": {"stored": 960, "ingest_s": 2.0, "judge_s": -900.0, "site_s": 5.0},
                  "44000": {"stored": 43920, "ingest_s": 2.0, "judge_s": 3.0}},
    }  # fmt: skip
    lines = table(results, 120).splitlines()
    assert (
        lines[2] == "| 960 | sqlite | 2.0 s (CPU 1.0 s) | 3.0 s (CPU 1.5 s) | 5.0 s (CPU 2.5 s) | 4.0 s (CPU 2.0 s) "
        "| 9.0 s (CPU 4.5 s) |"
    )  # the night: ingest, judge and the incremental site
    assert lines[3] == "| 960 | files | 2.0 s | > 900 s | 5.0 s | not run | > 907 s |"
    assert lines[4] == "| 43,920 | files | 2.0 s | 3.0 s | not run | not run | not run |"


def test_a_night_on_a_built_store_is_the_night_an_ingest_gives(tmp_path: Path) -> None:
    from benchmarks.store_night import ROOT, night

    fleet, store = Fleet(2, 2), tmp_path / "store.sqlite"
    bulk_store(fleet, store, range(5), every=10)
    files = fleet.write_files(tmp_path / "night", range(5, 6))
    steps = ["previous", "ingest", "judge", "site", "full"]
    numbers = night(str(store), files, tmp_path / "site", ROOT, steps)
    assert list(numbers) == steps
    assert len(open_store(store).runs()) == 24
    site = {p.relative_to(tmp_path / "site") for p in (tmp_path / "site").rglob("*") if p.is_file()}
    assert site == {p.relative_to(tmp_path / "site-full") for p in (tmp_path / "site-full").rglob("*") if p.is_file()}
    assert len([p for p in site if p.parts[0] == "run"]) == 24
