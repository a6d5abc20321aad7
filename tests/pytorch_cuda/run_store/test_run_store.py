"""The results store: content-addressed records, refusals with one paragraph, nothing stored lost."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from pytorch_cuda.cli.main import main
from pytorch_cuda.run_store import StoreError, canonical_bytes, ingest, read_store

ROOT = Path(__file__).resolve().parents[3]
RUNS = ROOT / "evidence/fault-coverage"
H200 = RUNS / "h200/runs/untouched.json"
H100 = RUNS / "h100/runs/untouched.json"
BUSY = RUNS / "h200/runs/busy-gpu.json"
DIGEST = "sha256:" + "ab" * 32


def _snapshot(store: Path) -> dict[str, bytes]:
    return {str(p.relative_to(store)): p.read_bytes() for p in sorted(store.rglob("*")) if p.is_file()}


def _variant(tmp_path: Path, name: str, **changes: Any) -> Path:
    document = json.loads(H200.read_text())
    document.update(changes)
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


def test_a_run_is_stored_once_under_the_sha256_of_its_canonical_json(tmp_path: Path) -> None:
    store = tmp_path / "store"
    done = ingest([H200, H100], store)
    assert [s.gpu for s in done.stored] == ["NVIDIA H200", "NVIDIA H100 80GB HBM3"]
    for stored, source in zip(done.stored, (H200, H100), strict=True):
        original = json.loads(source.read_text())
        assert stored.path.name == hashlib.sha256(canonical_bytes(original)).hexdigest() + ".json"
        assert stored.path.parent.name == "bare-torch-2.11.0_cu130-cuda-13.0"
        assert json.loads(stored.path.read_text())["results"] == original
    index = json.loads((store / "index.json").read_text())
    sources = sorted((json.loads(p.read_text()) for p in (H200, H100)), key=lambda d: d["started_at"])
    assert [row["gpu"] for row in index["runs"]] == [d["environment"]["gpus"][0]["name"] for d in sources]  # oldest
    assert [row["subject_kind"] for row in index["runs"]] == ["bare", "bare"]
    assert [row["complete"] for row in index["runs"]] == [d["exit_status"] == 0 for d in sources]


def test_a_failed_run_is_indexed_as_incomplete(tmp_path: Path) -> None:
    failed = _variant(tmp_path, "failed.json", exit_status=1)
    store = tmp_path / "store"
    ingest([failed], store)
    index = json.loads((store / "index.json").read_text())
    assert [row["complete"] for row in index["runs"]] == [False]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "is not valid JSON"),
        ('{"suite": "pytest-json-report", "schema": 2}', "is not a pytorch-cuda conformance results file"),
        ('{"suite": "pytorch-cuda-conformance", "schema": 1}', "older than this reader understands"),
        ('{"suite": "pytorch-cuda-conformance", "schema": 99}', "newer than this reader understands"),
    ],
)
def test_a_bad_file_is_refused_and_nothing_stored_is_lost(tmp_path: Path, content: str, expected: str) -> None:
    store = tmp_path / "store"
    ingest([H200], store)
    before = _snapshot(store)
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    with pytest.raises(StoreError) as error:
        ingest([H100, bad], store)  # the good file before it is not stored either
    assert expected in error.value.cause
    assert "nothing was stored" in error.value.cause
    assert error.value.exit_status == 2
    assert _snapshot(store) == before


def test_a_duplicate_is_refused_unless_skipped(tmp_path: Path) -> None:
    store = tmp_path / "store"
    ingest([H200], store)
    before = _snapshot(store)
    with pytest.raises(StoreError, match="is already stored as"):
        ingest([H200], store)
    with pytest.raises(StoreError, match="given twice"):
        ingest([H100, H100], store)
    assert _snapshot(store) == before
    done = ingest([H200, H100], store, skip_duplicates=True)
    assert len(done.duplicates) == 1
    assert [s.gpu for s in done.stored] == ["NVIDIA H100 80GB HBM3"]


def test_an_image_run_is_keyed_by_its_digest_and_refused_without_one(tmp_path: Path) -> None:
    store = tmp_path / "store"
    tagged = _variant(tmp_path, "tagged.json", image={"digest": DIGEST, "ref": "pytorch-cuda:v2.9", "revision": None})
    (stored,) = ingest([tagged], store).stored
    assert stored.path.parent.name == "image-sha256-" + "ab" * 32
    assert stored.record.subject.kind == "image"
    no_digest = _variant(tmp_path, "no-digest.json", image={"digest": None, "ref": "pytorch-cuda:v2.9"})
    with pytest.raises(StoreError, match="records no image digest"):
        ingest([no_digest], store)
    (bound,) = ingest([no_digest], store, image_digest="sha256:" + "cd" * 32).stored
    assert bound.record.subject.digest == "sha256:" + "cd" * 32


def test_a_record_changed_by_hand_and_a_foreign_folder_are_refused(tmp_path: Path) -> None:
    store = tmp_path / "store"
    (stored,) = ingest([H200], store).stored
    record = json.loads(stored.path.read_text())
    record["results"]["measurements"]["gemm.bf16.tflops"]["value"] = 9999.0
    stored.path.write_text(json.dumps(record))
    with pytest.raises(StoreError, match="it was changed"):
        read_store(store)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(StoreError, match=r"holds no STORE\.json"):
        ingest([H200], other)
    assert [p.name for p in other.iterdir()] == ["notes.txt"]


def test_the_cli_ingests_lists_and_refuses_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = str(tmp_path / "store")
    assert main(["results", "ingest", str(H200), "--store", store]) == 0
    assert "stored " in capsys.readouterr().out
    assert main(["results", "ingest", str(BUSY), "--store", store, "--fault", "busy-gpu", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["stored"][0]["gpu"] == "NVIDIA H200"
    assert main(["results", "list", "--store", store]) == 0
    listed = capsys.readouterr().out
    assert "complete" in listed
    assert "fault: busy-gpu" in listed
    assert main(["results", "ingest", str(H200), "--store", store]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "is already stored as" in err
    assert "Fix: leave it out" in err


def test_a_digest_that_contradicts_the_file_is_refused(tmp_path: Path) -> None:
    tagged = _variant(tmp_path, "tagged.json", image={"digest": DIGEST, "ref": "pytorch-cuda:v2.9", "revision": None})
    with pytest.raises(StoreError, match="not the sha256:cdcd"):
        ingest([tagged], tmp_path / "store", image_digest="sha256:" + "cd" * 32)
    assert not (tmp_path / "store").exists()


def test_a_stored_run_is_never_overwritten_and_no_temporary_file_is_left(tmp_path: Path) -> None:
    from pytorch_cuda.run_store.store import _write_atomically

    target = tmp_path / "runs" / "x.json"
    _write_atomically(target, "first", replace=False)
    with pytest.raises(FileExistsError):
        _write_atomically(target, "second", replace=False)
    assert target.read_text() == "first"
    assert [p.name for p in target.parent.iterdir()] == ["x.json"]
    assert target.stat().st_mode & 0o777 == 0o644


def test_a_store_of_another_schema_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "store"
    ingest([H200], store)
    (store / "STORE.json").write_text('{"kind": "pytorch-cuda-results-store", "schema": 99}')
    with pytest.raises(StoreError, match="does not mark a results store of schema 1"):
        ingest([H100], store)


def test_a_carried_stack_run_is_its_own_subject_and_history(tmp_path: Path) -> None:
    """The image's stack on a bare host: stored without an image digest, keyed by its lock, judged apart from the
    image's own runs and from the host's torch."""
    from pytorch_cuda.run_store.run_identity import history_key
    from pytorch_cuda_contract.results_file import load_results

    marker = {
        "kind": "carried", "variant": "cu128-runtime", "lock": "shipped_stack/locks/cu128-runtime.py312.lock",
        "lock_sha256": "cd" * 32, "root": "/var/tmp/s", "prefix": "/var/tmp/s/venv", "python": "3.12",
        "image_python": "3.13", "image_venv": "/opt/pytorch", "packages": {"torch": "2.9.1"},
    }  # fmt: skip
    manifest = json.loads((ROOT / "images/cu128-runtime/manifest.json").read_text())
    document = json.loads(H100.read_text())
    document["stack"] = marker
    document["manifest"] = {**document["manifest"], "content": manifest}
    document["environment"] = {**document["environment"], "torch": "2.9.1+cu128", "cuda": "12.8"}
    path = tmp_path / "carried.json"
    path.write_text(json.dumps(document))
    done = ingest([path], tmp_path / "store")
    (stored,) = done.stored
    assert stored.path.parent.name == "carried-cu128_runtime-" + "cd" * 8
    key = history_key(load_results(path))
    assert key.variant == "cu128-runtime stack carried to a bare host, torch 2.9.1+cu128"


def test_an_ingest_joins_a_folder_a_racing_ingest_is_starting(tmp_path: Path) -> None:
    """The folder backend's race (issue 55, about 1 racing test in 4): another ingest has made the folder and is
    writing STORE.json (its temporary file is there, the marker not yet); this ingest neither refuses the folder
    as 'not a results store' nor as foreign, and the store it joins holds its run."""
    store = tmp_path / "store"
    store.mkdir()
    (store / ".tmp-k2x9q1").write_text("")  # the racing ingest's STORE.json, before its rename
    (done,) = ingest([H200], store).stored
    assert [s.record.sha256 for s in read_store(store)] == [done.record.sha256]
