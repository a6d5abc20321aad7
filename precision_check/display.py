"""The lines precision-check judged, for a reader that does not judge: the JSON report (``--json``) carries them.

``display_of`` gives the table the terminal prints (its Δ columns come from the judgement in problems.py), the
facts a page lists under it (the noise floor, the gradients, GradScaler, overflows, compile time, the notes) and
what the verdict's kind means; ``to_json`` writes the report with them (version 5), so that the host's page
(pytorch_cuda/precision_report/check_page.py) only shows them.
"""

from __future__ import annotations

import json
from dataclasses import asdict

from precision_check.check_report import VERDICT_KIND_MEANING, Report, as_document
from precision_check.terminal_table import compile_line, gradients_line, scale_text, table_rows, zero_grads_line
from pytorch_cuda_contract.precision_check_file import Display


def facts(report: Report) -> list[str]:
    """One sentence per fact a page lists under the table, in the order it lists them."""
    found = []
    floor = report.measurements.noise_floor
    if floor is not None and floor.rel_diff_max is not None:
        found.append(
            f"fp32 noise floor: {100 * floor.rel_diff_max:.2g}% at most along the way"
            + ("" if floor.rel_diff_final is None else f", {100 * floor.rel_diff_final:.2g}% at the end")
            + f", for {floor.perturbation}"
        )
    if (gradients := gradients_line(report)) is not None:
        found.append(gradients)
    for run in report.measurements.runs:
        if run.zero_grads is not None:
            found.append(zero_grads_line(run.zero_grads))
        if run.scaler is not None and run.scaler.scale:
            found.append(
                f"GradScaler: scale {scale_text(run.scaler.scale[0])} -> {scale_text(run.scaler.scale[-1])}, "
                f"{len(run.scaler.skipped_steps)} step(s) skipped"
                + (
                    ""
                    if run.scaler.fp32_same_skips is None
                    else f"; {run.dtype} is compared with fp32 skipping them too"
                )
            )
        for overflow in run.overflows[:1]:
            size = "inf/nan" if overflow.max_abs is None else f"{overflow.max_abs:.3g}"
            found.append(f"{run.dtype}: `{overflow.module}` left fp16's range at step {overflow.step} (|x| = {size})")
        if (compiled := compile_line(run)) is not None:
            found.append(compiled)
    return found + [f"note: {note}" for note in report.measurements.notes]


def display_of(report: Report) -> Display:
    header, rows = table_rows(report)
    return Display(
        header=tuple(header),
        rows=tuple(tuple(row) for row in rows),
        facts=tuple(facts(report)),
        kind_meaning=VERDICT_KIND_MEANING.get(report.verdict.kind, ""),
    )


def to_json(report: Report) -> str:
    """The report as JSON (the current version), its judged lines included."""
    doc = as_document(report) | {"display": asdict(display_of(report))}
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"
