"""A history longer than the site shows: its pages show the last runs, judged as a full read judges them, read
from the window the judge kept; built night by night, the incremental site is the full build byte for byte."""

from __future__ import annotations

from pathlib import Path

from pytorch_cuda.cli.main import main
from pytorch_cuda.decay.judge import order
from pytorch_cuda.decay.windowed import SHOWN_RUNS, WINDOW_RUNS, judge_window_of, judge_windowed, read_window
from pytorch_cuda.run_store import ingest
from pytorch_cuda.run_store.backend import open_store
from pytorch_cuda.site.cells import build_cells
from pytorch_cuda.site.site_writer import build_site
from tests.support.long_histories import (
    GEMM,
    NIGHTS,
    WINDOW,
    batches_of,
    full_read,
    long_nights,
    site_files,
    site_judge_matches_judge_then_site,
)


def test_a_long_history_shows_its_last_runs_judged_as_the_full_read(tmp_path: Path) -> None:
    store, site = tmp_path / "store.sqlite", tmp_path / "site"
    for n, batch in enumerate(batches_of(long_nights(tmp_path / "nights"))):
        ingest(batch, store)
        judge_windowed(open_store(store), WINDOW)  # the nightly's judge: it keeps each history's window
        assert build_site(store, site).incremental == (n > 0)
        build_site(store, tmp_path / f"full-{n}", full=True)
        assert site_files(site) == site_files(tmp_path / f"full-{n}")
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


def test_the_site_that_judges_is_the_judge_then_the_site(tmp_path: Path) -> None:
    """`site --judge` (one read: judge, keep the window, build) writes the pages and keeps the windows that
    `results judge` then `site` do, night by night, and its incremental site is the full build byte for byte."""
    together = tmp_path / "together.sqlite"
    site_judge_matches_judge_then_site(together, tmp_path / "apart.sqlite", tmp_path)
    backend = open_store(together)
    windowed = [t for t in backend.histories() if read_window(backend, t, []).read_from is not None]
    assert len(windowed) == 1
    assert "steady" in windowed[0]


def test_the_judgement_next_read_is_the_read_of_the_window_kept(tmp_path: Path) -> None:
    """What the judge hands the site (WindowedJudged.next_read) is what reading the window it kept gives: the same
    runs, and the same findings, noise and baselines where that read is exact."""
    store = tmp_path / "store.sqlite"
    moved = 0
    for batch in batches_of(long_nights(tmp_path / "nights")):
        ingest(batch, store)
        backend = open_store(store)
        for text in backend.histories():
            judged = judge_window_of(backend, text, [], WINDOW)
            moved += judged.moved is not None
            handed, read = judged.next_read(), read_window(backend, text, [])
            assert [r.record.sha256 for r in handed.runs] == [r.record.sha256 for r in read.judged.runs]
            found = [(f.run.record.sha256, f.metric, f.kind, f.status, f.noise) for f in handed.findings]
            assert found == [(f.run.record.sha256, f.metric, f.kind, f.status, f.noise) for f in read.judged.findings]
            assert handed.noise == read.judged.noise
            exact = [r for r in read.judged.runs if read.exact_after is None or order(r) > read.exact_after]
            assert exact
            assert all(handed.baseline(r, GEMM) == read.judged.baseline(r, GEMM) for r in exact)
    assert moved == 2  # the steady history's window, after the first batch and after the third


def test_site_judge_keeps_the_windows_that_results_judge_keeps(tmp_path: Path) -> None:
    """`build.py site --judge` judges with the judge's own window (WINDOW_RUNS), as `results judge` does."""
    nights = [p for n in long_nights(tmp_path / "nights", nights=2 * WINDOW_RUNS + 2) for p in n]
    together, apart = tmp_path / "together.sqlite", tmp_path / "apart.sqlite"
    ingest(nights, together)
    ingest(nights, apart)
    assert main(["results", "judge", "--store", str(apart), "--json"]) == 1  # the dropping history's regression
    assert main(["site", "--judge", "--store", str(together), "--out", str(tmp_path / "site")]) == 0
    a, b = open_store(apart), open_store(together)
    kept = [b.judge_window(t) for t in b.histories()]
    assert kept == [a.judge_window(t) for t in a.histories()]
    assert sum(k is not None for k in kept) == 1  # the steady history's; the dropping one is open since night 9
