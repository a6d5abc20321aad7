"""`write_report`: report.{html,md,json} and the precision-check pages from result files; `load_pair` reads the two
files of `report --diff`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pytorch_cuda.errors import UserError
from pytorch_cuda.precision_report.check_page import (
    CheckPageError,
    is_check_report,
    read_check_report,
    render_check_page,
)
from pytorch_cuda.precision_report.markdown import render_markdown
from pytorch_cuda.precision_report.report_model import build_document
from pytorch_cuda.precision_report.view import render_html
from pytorch_cuda_contract.precision_check_file import CheckFile
from pytorch_cuda_contract.results_file import ConformanceResults, ResultsFileError, load_results

SCHEMA_FILE = Path(__file__).with_name("report.schema.json")


class ReportInputError(UserError):
    """A results file given to `report` cannot be read."""


def _check_report(path: Path) -> CheckFile | None:
    """The precision-check report in ``path``, or None when it is not one (a results file, or unreadable)."""
    try:
        text = path.read_text(encoding="utf-8")
        doc = json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError):
        return None  # load_results says what is wrong with it
    if not is_check_report(doc):
        return None
    try:
        return read_check_report(path, text)
    except CheckPageError as error:
        raise ReportInputError(error.cause, error.fix) from None


def _page_names(paths: Sequence[Path]) -> list[str]:
    """precision-check-<stem>.html, numbered where two inputs share a stem."""
    names: list[str] = []
    for path in paths:
        name, n = f"precision-check-{path.stem}.html", 2
        while name in names:
            name, n = f"precision-check-{path.stem}-{n}.html", n + 1
        names.append(name)
    return names


def load_pair(old: Path, new: Path) -> tuple[ConformanceResults, ConformanceResults]:
    """The two results files of `report --diff`, through the suite's one reader; bad input is exit 2."""
    try:
        return load_results(old), load_results(new)
    except ResultsFileError as error:
        raise ReportInputError(f"{error.source}: {error.cause}", error.fix) from None


def write_report(paths: Sequence[Path], out_dir: Path) -> list[Path]:
    """Write report.{html,md,json} (conformance results) and a page per precision-check report into out_dir;
    bad input raises ReportInputError (exit 2) before anything is written."""
    loaded, checks = [], []
    for path in paths:
        check = _check_report(path)
        if check is not None:
            checks.append((path, check))
            continue
        try:
            loaded.append(load_results(path))
        except ResultsFileError as error:
            raise ReportInputError(f"{error.source}: {error.cause}", error.fix) from None
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        written: list[Path] = []
        if loaded:
            document = build_document(loaded)
            written += [out_dir / "report.json", out_dir / "report.md", out_dir / "report.html"]
            written[0].write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
            written[1].write_text(render_markdown(document), encoding="utf-8")
            written[2].write_text(render_html(document), encoding="utf-8")
        for (path, check), name in zip(checks, _page_names([p for p, _ in checks]), strict=True):
            written.append(out_dir / name)
            written[-1].write_text(render_check_page(check, str(path)), encoding="utf-8")
    except OSError as error:
        raise ReportInputError(
            f"cannot write the report into {out_dir} ({error.strerror})", "pass a writable directory to --out"
        ) from None
    return written
