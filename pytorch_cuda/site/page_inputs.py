"""What each page of the site is built from, as a digest: two builds that give a page the same digest write the
same bytes, so an incremental build (site_writer) rewrites only the pages whose digest changed.

A history's pages (its GPU and image pages and cell JSON) depend on its runs and the accepted regressions: the
judgement is a function of those. A run's page depends on the run, its history's name and what the history finds
in it. Every digest includes the code that renders and judges (this package's sources, the judge's, the report's
and the store's, and the chart function), so a new version of the code rebuilds every page.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from pytorch_cuda.site.cells import Cell
    from pytorch_cuda.site.chart import Chart

_PACKAGE: Final = Path(__file__).resolve().parents[1]
_CODE: Final = ("site", "decay", "precision_report", "run_store")  # what a page's bytes are computed by
_CONTRACT: Final = _PACKAGE.parent / "pytorch_cuda_contract"


def digest(*parts: Any) -> str:
    """The sha256 of the parts' canonical JSON."""
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@cache
def _sources() -> str:
    h = hashlib.sha256()
    folders = [_PACKAGE / name for name in _CODE] + [_CONTRACT]
    for path in sorted(p for folder in folders for p in folder.rglob("*") if p.suffix in (".py", ".j2", ".json")):
        h.update(path.relative_to(_PACKAGE.parent).as_posix().encode("utf-8") + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def code_digest(chart: Chart) -> str:
    """The code every page is rendered by: the sources, and how the charts are drawn."""
    return digest(_sources(), f"{chart.__module__}.{chart.__qualname__}")


def cell_inputs(cell: Cell) -> list[Any]:
    """A history's inputs: its name and its runs (by sha256, oldest first; which are shown follows from them)."""
    return [cell.history_key.text, cell.key, [h.sha256 for h in cell.heads]]


def run_inputs(code: str, cell: Cell, sha: str) -> str:
    """A run page's digest: the run, its history's name and subject, and the findings on it where it is shown
    (an older run's page says it is older, and lists none: its digest is known without reading it)."""
    found: list[str] | str = [f.describe() for f in cell.found(cell.shown[sha])] if sha in cell.shown else "older"
    subject = [cell.subject.key, cell.subject.label]
    return digest(code, sha, cell.gpu, cell.key, cell.history_key.text, subject, found)
