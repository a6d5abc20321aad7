"""`build_site`: the pages of a results store, staged and put whole in place of the folder an earlier build wrote."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pytorch_cuda.run_store import StoreError
from pytorch_cuda.run_store.backend import StoreLocation, open_store
from pytorch_cuda.site.cells import build_cells
from pytorch_cuda.site.chart import Chart, history_chart
from pytorch_cuda.site.pages import render_pages

SITE_MARKER: Final = ".pytorch-cuda-site"


@dataclass(frozen=True)
class Built:
    pages: tuple[str, ...]
    regressions: int  # confirmed, in each history's latest nightly run (what the home page and the issues report)


def _replace(out: Path, staged: Path) -> None:
    """Put the staged site at ``out``: a folder that is neither empty nor an earlier site is refused."""
    if out.exists():
        if not out.is_dir() or (any(out.iterdir()) and not (out / SITE_MARKER).exists()):
            raise StoreError(
                f"--out {out} exists and is not a site this command built (no {SITE_MARKER}), so it is left alone",
                "pass a new or empty folder, or the folder of an earlier `build.py site`",
            )
        shutil.rmtree(out)
    shutil.move(str(staged), out)


def build_site(store: StoreLocation, out: Path, chart: Chart = history_chart) -> Built:
    """The site of ``store`` into ``out`` (``chart``: how a history chart is drawn; benchmarks/site_build.py)."""
    backend = open_store(store)
    runs = backend.runs()
    if not runs:
        raise StoreError(f"the store {store} holds no runs", "ingest results first: build.py results ingest ...")
    cells = build_cells(runs, backend.accepted())
    files = render_pages(cells, len(runs), chart)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".site-") as tmp:
        staged = Path(tmp) / "site"
        for relative, text in files.items():
            path = staged / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        (staged / SITE_MARKER).write_text("built by build.py site; replaced whole on every build\n", encoding="utf-8")
        _replace(out, staged)
    return Built(tuple(sorted(files)), sum(len(c.last_flags()) for c in cells))
