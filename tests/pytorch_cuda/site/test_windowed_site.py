"""A history longer than the site shows: its pages show the last runs, judged as a full read judges them, read
from the window the judge kept; built night by night, the incremental site is the full build byte for byte."""

from __future__ import annotations

from pathlib import Path

from pytorch_cuda.decay.windowed import SHOWN_RUNS, judge_windowed, read_window
from pytorch_cuda.run_store import ingest
from pytorch_cuda.run_store.backend import open_store
from pytorch_cuda.site.cells import build_cells
from pytorch_cuda.site.site_writer import build_site
from tests.support.long_histories import GEMM, NIGHTS, WINDOW, batches_of, full_read, long_nights


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_long_history_shows_its_last_runs_judged_as_the_full_read(tmp_path: Path) -> None:
    store, site = tmp_path / "store.sqlite", tmp_path / "site"
    for n, batch in enumerate(batches_of(long_nights(tmp_path / "nights"))):
        ingest(batch, store)
        judge_windowed(open_store(store), WINDOW)  # the nightly's judge: it keeps each history's window
        assert build_site(store, site).incremental == (n > 0)
        build_site(store, tmp_path / f"full-{n}", full=True)
        assert _files(site) == _files(tmp_path / f"full-{n}")
    backend = open_store(store)
    windowed = [t for t in backend.histories() if read_window(backend, t, []).read_from is not None]
    assert len(windowed) == 1  # the steady history is read from its window; the dropping one in full (still open)
    assert "steady" in windowed[0]
    full = {j.key: j for j in full_read(store)}
    for cell in build_cells(backend):
        judged = full[cell.history_key]
        shown = {r.sha for r in cell.runs}
        assert [r.sha for r in cell.runs] == [r.record.sha256 for r in judged.runs[-SHOWN_RUNS:]]
        assert (len(cell.heads), cell.windowed) == (NIGHTS, True)
        on_shown = [f for f in judged.findings if f.run.record.sha256 in shown]
        found = [(f.run.record.sha256, f.what, f.status) for f in cell.flags]
        assert found == [(f.run.record.sha256, f.metric, f.status) for f in on_shown]
        points = [
            (p.run.record.sha256, s.metric, p.noise) for _, series in cell.history for s in series for p in s.points
        ]
        assert points
        by_sha = {r.record.sha256: r for r in judged.runs}
        assert all(judged.baseline(by_sha[sha], metric) == noise for sha, metric, noise in points)
        if "dropping" in cell.key:  # open since night 9, long before the shown runs: still reported
            assert [f.what for f in cell.last_flags()] == [GEMM]
        page = (site / "gpu/nvidia-h100-80gb-hbm3.html").read_text()
        assert f"This history shows its last {SHOWN_RUNS} of {NIGHTS} runs" in page
        older = (site / f"run/{judged.runs[0].record.sha256}.html").read_text()
        assert f"Older than the last {SHOWN_RUNS} runs of its history" in older
