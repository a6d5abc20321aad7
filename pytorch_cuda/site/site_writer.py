"""`build_site`: the pages of a results store. A full build is staged and put whole in place of the folder an
earlier build wrote; an incremental build (the default where that folder holds its build's page digests) rewrites
only the pages whose inputs' digest changed and removes the pages that no longer exist (page_inputs)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pytorch_cuda.decay.windowed import SHOWN_RUNS
from pytorch_cuda.run_store import StoreError
from pytorch_cuda.run_store.backend import RunStore, StoreLocation, open_store
from pytorch_cuda.site.cells import Cell, RunView, build_cells, run_view
from pytorch_cuda.site.chart import Chart, history_chart
from pytorch_cuda.site.pages import Page, plan_pages

SITE_MARKER: Final = ".pytorch-cuda-site"
INPUTS: Final = ".site-inputs.json"  # each page's inputs' digest, as the build that wrote the folder saw them
INPUTS_KIND: Final = "pytorch-cuda-site-inputs"


@dataclass(frozen=True)
class Built:
    pages: tuple[str, ...]
    regressions: int  # confirmed, in each history's latest nightly run (what the home page and the issues report)
    written: int  # pages rendered and written by this build (all of them in a full build)
    removed: int  # pages of the earlier build that no longer exist (incremental)
    incremental: bool


def _checked(out: Path) -> None:
    """A folder that is neither absent, empty nor an earlier site is refused."""
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / SITE_MARKER).exists())):
        raise StoreError(
            f"--out {out} exists and is not a site this command built (no {SITE_MARKER}), so it is left alone",
            "pass a new or empty folder, or the folder of an earlier `build.py site`",
        )


def earlier_inputs(out: Path) -> dict[str, str] | None:
    """The page digests of the build that wrote ``out``, or None (no earlier site, or one cut short)."""
    path = out / INPUTS
    if not (out / SITE_MARKER).is_file() or not path.is_file():
        return None
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    pages = document.get("pages") if isinstance(document, dict) and document.get("kind") == INPUTS_KIND else None
    if not isinstance(pages, dict) or not all(isinstance(v, str) for v in pages.values()):
        return None
    return {str(k): v for k, v in pages.items()}


def _write(path: Path, text: str) -> None:
    """Write ``text`` at ``path`` whole: a temporary file beside it, renamed into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def _inputs_text(files: dict[str, Page]) -> str:
    pages = {path: page.inputs for path, page in sorted(files.items())}
    return json.dumps({"kind": INPUTS_KIND, "schema": 1, "pages": pages}, indent=0) + "\n"


def _full(out: Path, files: dict[str, Page]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".site-") as tmp:
        staged = Path(tmp) / "site"
        for relative, page in files.items():
            path = staged / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(page.render(), encoding="utf-8")
        (staged / SITE_MARKER).write_text("built by build.py site (docs/site.md)\n", encoding="utf-8")
        (staged / INPUTS).write_text(_inputs_text(files), encoding="utf-8")
        if out.exists():
            shutil.rmtree(out)
        shutil.move(str(staged), out)


def _incremental(out: Path, files: dict[str, Page], earlier: dict[str, str]) -> tuple[int, int]:
    """Rewrite the changed pages in place and remove the gone ones; the digests go first (a build cut short
    leaves none, so the next build is full) and come back last."""
    (out / INPUTS).unlink()
    written = 0
    for relative, page in sorted(files.items()):
        path = out / relative
        if earlier.get(relative) != page.inputs or not path.is_file():
            _write(path, page.render())
            written += 1
    gone = sorted(set(earlier) - set(files))
    for relative in gone:
        path = out / relative
        path.unlink(missing_ok=True)
        if path.parent != out and not any(path.parent.iterdir()):
            path.parent.rmdir()
    _write(out / INPUTS, _inputs_text(files))
    return written, len(gone)


class _Older:
    """Runs older than a cell's shown ones, read whole where their page is rendered: one by one just before the
    shown ones (a night's incremental build: the runs that left them), else the whole history once (a full build)."""

    NEAR: Final = 8

    def __init__(self, store: RunStore) -> None:
        self._store = store
        self._read: dict[str, dict[str, RunView]] = {}

    def __call__(self, cell: Cell, sha: str) -> RunView:
        read = self._read.setdefault(cell.history_key.text, {})
        if sha not in read:
            shas = [h.sha256 for h in cell.heads]
            near = len(shas) - shas.index(sha) <= len(cell.runs) + self.NEAR  # counted back from the latest
            found = self._store.run(sha) if near else None
            runs = [found] if found is not None else self._store.latest(cell.history_key.text, None)
            read.update({s.record.sha256: run_view(s) for s in runs if s.record.sha256 not in read})
        return read[sha]


def build_site(
    store: StoreLocation,
    out: Path,
    chart: Chart = history_chart,
    *,
    full: bool = False,
    shown: int = SHOWN_RUNS,
    judge: int | None = None,
) -> Built:
    """The site of ``store`` into ``out`` (``chart``: how a history chart is drawn; benchmarks/site_build.py);
    incremental where ``out`` holds an earlier build's digests, unless ``full``; ``shown``: the last runs of each
    history its pages show (cells.py); ``judge``: judge each history first and keep its window, as `results judge`
    does (the window's tail: WINDOW_RUNS), in the same read (`site --judge`)."""
    backend = open_store(store)
    if not backend.histories():
        raise StoreError(f"the store {store} holds no runs", "ingest results first: build.py results ingest ...")
    _checked(out)
    cells = build_cells(backend, shown, judge=judge)
    files = plan_pages(cells, sorted(a.sha256 for a in backend.accepted()), chart, _Older(backend))
    earlier = None if full else earlier_inputs(out)
    if earlier is None:
        _full(out, files)
        written, removed = len(files), 0
    else:
        written, removed = _incremental(out, files, earlier)
    regressions = sum(len(c.last_flags()) for c in cells)
    return Built(tuple(sorted(files)), regressions, written, removed, earlier is not None)
