"""The PostgreSQL backend against a real server (Debian's postgresql, a throwaway cluster per session:
tests/support/postgres_server.py): the same runs as the folder of files, the archive byte for byte through it, the
same verdicts, ingests that race without losing or duplicating a run, and refusals in one paragraph."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytorch_cuda.cli.main import main
from pytorch_cuda.decay import judge_each
from pytorch_cuda.decay.report import judged_document
from pytorch_cuda.run_store import StoreError, ingest, read_store
from pytorch_cuda.run_store.accepted import Accepted
from pytorch_cuda.run_store.backend import open_store, store_location
from pytorch_cuda.run_store.export import export_store
from tests.support.long_histories import (
    batches_of,
    full_read,
    long_nights,
    site_files,
    site_judge_matches_judge_then_site,
    store_and_judge,
    verdicts,
)
from tests.support.postgres_server import PostgresServer
from tests.support.racing_ingests import race
from tests.support.synthetic_history import night, wobble, write_nights

pytestmark = pytest.mark.integration
GEMM = "gemm.bf16.tflops"


@pytest.fixture
def database(postgres: PostgresServer) -> str:
    return postgres.new_database()


def _history(tmp_path: Path) -> list[Path]:
    """30 nights of two hosts: steady, then a held 15% drop from night 20."""
    nights = [night(d, scale={GEMM: wobble(d) * (0.85 if d >= 20 else 1.0)}, host="ab"[d % 2]) for d in range(30)]
    return write_nights(tmp_path / "incoming", nights)


def test_a_uri_is_kept_whole_and_picks_postgresql() -> None:
    assert store_location("postgresql://u@127.0.0.1:5432/db") == "postgresql://u@127.0.0.1:5432/db"
    assert store_location("store.sqlite") == Path("store.sqlite")


def test_postgresql_holds_the_same_runs_in_the_same_order_and_refuses_duplicates(tmp_path: Path, database: str) -> None:
    paths = _history(tmp_path)
    ingest(paths, tmp_path / "files")
    done = ingest(paths[:20], database)
    assert len(done.stored) == 20
    with pytest.raises(
        StoreError, match=r"already stored as postgresql://pytorch_cuda@127\.0\.0\.1:\d+/store_\w+: runs/"
    ):
        ingest(paths[19:], database)
    assert len(read_store(database)) == 20  # the refused call stored none of its files
    assert len(ingest(paths, database, skip_duplicates=True).stored) == 10
    folder = read_store(tmp_path / "files")
    assert [s.record.document() for s in read_store(database)] == [s.record.document() for s in folder]


def test_export_through_postgresql_is_the_archive_byte_for_byte_and_judges_the_same(
    tmp_path: Path, database: str
) -> None:
    paths = _history(tmp_path)
    files = tmp_path / "files"
    ingest(paths, files)
    (opened,) = [f for j in judge_each(open_store(files)) for f in j.latest_regressions() if f.metric == GEMM]
    accepted = Accepted(opened.run.key.text, GEMM, opened.run.record.sha256, "new level", "2027-01-01T00:00:00Z")
    open_store(files).add_accepted(accepted)
    export_store(files, database)
    export_store(database, tmp_path / "archive")
    assert site_files(tmp_path / "archive") == site_files(files)
    verdicts = [judged_document(judge_each(open_store(store))) for store in (files, database)]
    assert verdicts[0] == verdicts[1]
    assert verdicts[1]["histories"][0]["accepted"][0]["reason"] == "new level"


def test_the_commands_on_postgresql(tmp_path: Path, database: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["results", "ingest", *map(str, _history(tmp_path)), "--store", database]) == 0
    assert main(["results", "judge", "--store", database, "--json"]) == 1  # the held drop is open
    capsys.readouterr()
    assert main(["results", "export", "--store", database, "--out", str(tmp_path / "archive"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"] == 30


def test_ingests_started_together_lose_and_duplicate_nothing(tmp_path: Path, postgres: PostgresServer) -> None:
    paths = write_nights(tmp_path / "incoming", [night(d, scale={GEMM: wobble(d)}) for d in range(24)])
    for _ in range(5):
        claimed, stored = race(postgres.new_database(), paths)  # a new database: the racers also make the tables
        assert len(stored) == len(set(stored)) == 24  # nothing lost, nothing twice
        assert sorted(claimed) == sorted(stored)  # each run written by exactly one of the writers


def test_a_database_that_is_not_a_store_and_a_server_that_is_down_are_refused(
    postgres: PostgresServer, database: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import psycopg

    with pytest.raises(StoreError, match="is not a results store"):
        read_store(database)  # empty: reading does not start a store
    with psycopg.connect(database, autocommit=True) as db:
        db.execute("CREATE TABLE mine (x integer)")
    with pytest.raises(StoreError, match="but not a results store"):
        open_store(database, create=True)
    down = f"postgresql://someone:secret-word@127.0.0.1:{postgres.port + 1 if postgres.port < 65535 else 1}/db"
    assert main(["results", "judge", "--store", down]) == 2
    err = capsys.readouterr().err
    assert "cannot be reached" in err
    assert "PGPASSWORD" in err
    assert "secret-word" not in err  # the password is never printed


def test_the_window_judges_as_the_full_read_and_as_sqlite(tmp_path: Path, database: str) -> None:
    """Histories longer than the judge's window, one with a regression open since long before it
    (tests/support/long_histories.py): PostgreSQL's windows judge as its full read, and as SQLite's."""
    batches = batches_of(long_nights(tmp_path / "nights"))
    on_postgres = store_and_judge(database, batches)
    on_sqlite = store_and_judge(tmp_path / "store.sqlite", batches)
    assert verdicts([w.judged for w in on_postgres[-1]]) == verdicts(full_read(database))
    assert [w.read_from is None for w in on_postgres[-1]] == [True, False]  # the open drop: the whole history
    assert [[judged_document([w.judged for w in b]) for b in on_postgres]] == [
        [judged_document([w.judged for w in b]) for b in on_sqlite]
    ]


def test_site_judge_on_postgresql_is_judge_then_site_on_sqlite(tmp_path: Path, database: str) -> None:
    """`site --judge` on PostgreSQL, night by night, writes the pages and keeps the windows that `results judge`
    then `site` do on SQLite; its incremental site is its full build."""
    site_judge_matches_judge_then_site(database, tmp_path / "store.sqlite", tmp_path)
    on_postgres = open_store(database)
    windows = [on_postgres.judge_window(t) for t in on_postgres.histories()]
    assert sum(w is not None for w in windows) == 1  # the steady history's window moved; the open drop is read whole
