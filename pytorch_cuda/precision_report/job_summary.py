"""A GPU job's summary: the report's Markdown, under a note when the job was skipped because this content already
passed on this runner (gpu-conformance.yml restores that run's out/, with the passed.json it wrote then)."""

from __future__ import annotations

import json
from pathlib import Path

from pytorch_cuda.precision_report.report_files import ReportInputError

PASSED_FIELDS = ("content_hash", "runner", "run", "date")  # what gpu-conformance.yml writes into out/passed.json


def already_passed_note(passed_file: Path) -> str:
    """The note over a skipped job's report: which content passed where and when, and how to test it again."""
    try:
        passed = json.loads(passed_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ReportInputError(
            f"cannot read --already-passed {passed_file} ({error})", "pass the passed.json of the run that passed"
        ) from None
    missing = [name for name in PASSED_FIELDS if not isinstance(passed, dict) or not passed.get(name)]
    if missing:
        raise ReportInputError(
            f"--already-passed {passed_file} lacks {', '.join(missing)}",
            f"pass a passed.json with {', '.join(PASSED_FIELDS)} (gpu-conformance.yml writes one)",
        )
    return (
        "> **Skipped: already passed.** This image's content (layers, run config) and the suite's files\n"
        f"> hash to `{passed['content_hash']}`, which passed on `{passed['runner']}` in\n"
        f"> {passed['run']} ({passed['date']}); the results below are that run's.\n"
        "> Run nightly-gpu by hand with skip-passed off to test it again.\n\n"
    )


def job_summary(report_md: Path, already_passed: Path | None) -> str:
    """report.md, under the already-passed note when there is one."""
    if not report_md.is_file():
        raise ReportInputError(
            f"no {report_md} to summarise (only precision-check reports were given)",
            "give a conformance results file too, or leave out --summary",
        )
    note = already_passed_note(already_passed) if already_passed is not None else ""
    return note + report_md.read_text(encoding="utf-8")
