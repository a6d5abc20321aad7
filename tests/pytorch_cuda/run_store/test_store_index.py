"""The folder store's index.json, updated on each ingest from the index on disk plus the new runs (issue 54/55):
byte for byte what a full rebuild writes, after every ingest, a racing one's, an interrupted one's, or a removal."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytorch_cuda.run_store import ingest
from pytorch_cuda.run_store import store as store_module
from pytorch_cuda.run_store.accepted import Accepted
from pytorch_cuda.run_store.backend import open_store
from pytorch_cuda.run_store.store import write_index
from tests.support.racing_ingests import race
from tests.support.synthetic_history import night, wobble, write_nights

GEMM = "gemm.bf16.tflops"
RUNS = Path(__file__).resolve().parents[3] / "evidence/fault-coverage"


def _rebuilt(store: Path, tmp_path: Path) -> bytes:
    """What a full rebuild writes, in a copy of the store (the store's own index is left as the ingests wrote it)."""
    copy = tmp_path / "rebuilt"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(store, copy)
    return write_index(copy, full=True).read_bytes()


def _nights(tmp_path: Path) -> list[Path]:
    """Nights of two hosts out of order (an older night ingested after newer ones), bare runs, a failed one."""
    days = [5, 2, 9, 0, 7, 3, 8, 1, 6, 4]
    nights = [night(d, scale={GEMM: wobble(d)}, host="ab"[d % 2], variant="cu12" if d % 3 else None) for d in days]
    nights[4]["exit_status"] = 1
    nights[6]["started_at"] = nights[1]["started_at"]  # two runs that started together: ordered by sha256
    return write_nights(tmp_path / "incoming", nights)


def test_each_ingest_writes_the_index_a_full_rebuild_writes(tmp_path: Path) -> None:
    store = tmp_path / "store"
    paths = _nights(tmp_path)
    extra = [RUNS / "h200/runs/untouched.json", RUNS / "h100/runs/untouched.json", RUNS / "h200/runs/busy-gpu.json"]
    for n, path in enumerate(paths + extra):
        fault = "busy-gpu" if "busy" in path.name else None
        ingest([path], store, fault=fault, control="cold-start" if n == 3 else None)
        assert (store / "index.json").read_bytes() == _rebuilt(store, tmp_path), f"after ingest {n + 1}"
    assert len(open_store(store).runs()) == len(paths) + len(extra)
    through = open_store(store).runs()[-1].record.sha256
    open_store(store).add_accepted(Accepted("h200", GEMM, through, "a slower driver", "2026-12-01T00:00:00Z"))
    assert (store / "index.json").read_bytes() == _rebuilt(store, tmp_path)


def test_an_ingest_reads_only_the_runs_it_adds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "store"
    paths = _nights(tmp_path)
    ingest(paths[:-1], store)
    reads: list[Path] = []
    real = store_module._read_record

    def counted(path: Path) -> store_module.Stored:
        reads.append(path)
        return real(path)

    monkeypatch.setattr(store_module, "_read_record", counted)
    ingest(paths[-1:], store)
    assert reads == []  # the new run is indexed from what the ingest wrote; the stored runs are not read again
    assert (store / "index.json").read_bytes() == _rebuilt(store, tmp_path)


def test_an_interrupted_ingest_a_removed_run_and_a_bad_index_are_caught_up(tmp_path: Path) -> None:
    store = tmp_path / "store"
    paths = _nights(tmp_path)
    ingest(paths[:3], store)
    before = (store / "index.json").read_bytes()
    ingest(paths[3:5], store)
    (store / "index.json").write_bytes(before)  # an ingest that stored its runs and died before its index
    ingest(paths[5:6], store)
    assert (store / "index.json").read_bytes() == _rebuilt(store, tmp_path)
    next((store / "runs").glob("*/*.json")).unlink()  # a run removed by hand: the index is rebuilt
    ingest(paths[6:7], store)
    assert (store / "index.json").read_bytes() == _rebuilt(store, tmp_path)
    edited = json.loads((store / "index.json").read_text())
    edited["runs"][0]["started_at"] = 5  # by hand: a row this checkout cannot sort
    for bad in ("{not json", '{"kind": "other", "schema": 1, "runs": []}', "[]", '{"kind": 1}', json.dumps(edited)):
        (store / "index.json").write_text(bad)
        write_index(store)
        assert (store / "index.json").read_bytes() == _rebuilt(store, tmp_path), bad
    (store / "index.json").unlink()
    write_index(store)
    assert (store / "index.json").read_bytes() == _rebuilt(store, tmp_path)


def test_racing_ingests_leave_the_index_a_full_rebuild_writes(tmp_path: Path) -> None:
    paths = write_nights(tmp_path / "incoming", [night(d, scale={GEMM: wobble(d)}) for d in range(16)])
    for attempt in range(3):
        store = tmp_path / f"{attempt}" / "store"
        claimed, stored = race(store, paths)
        assert sorted(claimed) == sorted(stored)
        assert len(set(stored)) == 16
        assert (store / "index.json").read_bytes() == _rebuilt(store, tmp_path), f"attempt {attempt}"
