"""The precision support report on the host: report.html, report.md and report.json from result files.

``python build.py --report RESULTS.json [...] --out DIR``. Reads every file through
conformance.results_file and computes the recommendation with conformance.advice.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from conformance.results_file import ResultsFileError, load_results
from pytorch_cuda.errors import UserError
from pytorch_cuda.precision_report.markdown import render_markdown
from pytorch_cuda.precision_report.model import build_document
from pytorch_cuda.precision_report.view import render_html

SCHEMA_FILE = Path(__file__).with_name("report.schema.json")


class ReportInputError(UserError):
    """A results file given to --report cannot be read."""


def write_report(paths: Sequence[Path], out_dir: Path) -> list[Path]:
    """Write report.{html,md,json} into out_dir; bad input raises ReportInputError (exit 2)."""
    loaded = []
    for path in paths:
        try:
            loaded.append(load_results(path))
        except ResultsFileError as error:
            raise ReportInputError(f"{error.source}: {error.cause}", error.fix) from None
    document = build_document(loaded)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        written = [out_dir / "report.json", out_dir / "report.md", out_dir / "report.html"]
        written[0].write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        written[1].write_text(render_markdown(document), encoding="utf-8")
        written[2].write_text(render_html(document), encoding="utf-8")
    except OSError as error:
        raise ReportInputError(
            f"cannot write the report into {out_dir} ({error.strerror})", "pass a writable directory to --out"
        ) from None
    return written
