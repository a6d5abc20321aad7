"""An incremental site, built night by night, is byte for byte the full build of the same store."""

from __future__ import annotations

from pathlib import Path

from pytorch_cuda.cli.main import main
from pytorch_cuda.decay.accepting import accept_open
from pytorch_cuda.run_store import ingest
from pytorch_cuda.site.site_writer import INPUTS, build_site
from tests.support.synthetic_history import night, store_nights, wobble, write_nights


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _same_as_full(store: Path, site: Path, tmp_path: Path, name: str) -> None:
    full = tmp_path / f"full-{name}"
    assert not build_site(store, full, full=True).incremental
    assert _files(site) == _files(full)
    assert not [d for d in site.rglob("*") if d.is_dir() and not any(d.iterdir())]


def _nights(day: int) -> list[dict[str, object]]:
    drop = {"gemm.bf16.tflops": 0.7} if day >= 6 else {"gemm.bf16.tflops": wobble(day)}
    return [night(day, scale=drop, host=("a", "b")[day % 2]), night(day, variant="cu13", host="c")]


def test_a_site_built_night_by_night_is_the_full_build_byte_for_byte(tmp_path: Path) -> None:
    store, site = tmp_path / "store", tmp_path / "site"
    written = []
    for day in range(9):
        store_nights(store, _nights(day))
        if day == 4:  # a fault run: judged, listed apart
            store_nights(store, [night(day, scale={"gemm.fp32.tflops": 0.4}, host="d")], fault="busy-gpu")
        if day == 7:  # the drop is confirmed on day 7: accepted, which changes the judgement of later nights
            assert accept_open(store, "gemm.bf16.tflops", "new clocks", None)
        built = build_site(store, site)
        assert built.incremental == (day > 0)
        written.append((built.written, len(built.pages)))
        _same_as_full(store, site, tmp_path, str(day))
    assert all(w < n for w, n in written[1:])  # the unchanged pages were not rewritten
    assert written[2] == (2 + 1 + 2 + 2 + 4, written[2][1])  # 2 new runs, the GPU page, 2 image pages and cells, home


def test_a_page_that_no_longer_exists_is_removed_and_a_cut_short_build_is_rebuilt_whole(tmp_path: Path) -> None:
    bigger, smaller, site = tmp_path / "bigger", tmp_path / "smaller", tmp_path / "site"
    nights = [n for day in range(5) for n in _nights(day)]
    ingest(write_nights(tmp_path / "in", nights), bigger)
    ingest(write_nights(tmp_path / "in-small", nights[:6]), smaller)
    build_site(bigger, site)
    built = build_site(smaller, site)
    assert (built.incremental, built.removed) == (True, 4)  # four run pages
    _same_as_full(smaller, site, tmp_path, "smaller")
    (site / INPUTS).unlink()  # what a build cut short leaves
    (site / "index.html").write_text("half written")
    assert main(["site", "--store", str(smaller), "--out", str(site)]) == 0
    _same_as_full(smaller, site, tmp_path, "again")
    (site / "index.html").write_text("edited by hand")
    assert main(["site", "--store", str(smaller), "--out", str(site), "--full"]) == 0  # --full: every page
    _same_as_full(smaller, site, tmp_path, "forced")
