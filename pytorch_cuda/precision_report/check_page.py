"""A precision-check report (``precision-check ... --json``) as an HTML page: the verdict, the table the
terminal shows, fp32's noise floor, the GradScaler and zero-gradient facts, and the loss curves.

Reads the report with precision_check.report (standard library only), so the host needs no torch.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import jinja2
from matplotlib.figure import Figure

from precision_check.report import SCHEMA, VERDICT_KIND_MEANING, Report, report_from_json
from precision_check.terminal_table import compile_line, gradients_line, scale_text, table_rows, zero_grads_line
from pytorch_cuda.precision_report.charts import COLOURS, svg_text

TEMPLATE: Final = "check.html.j2"
# What each verdict kind means, one line each (docs/precision-check.md says more).
KIND_MEANING: Final = VERDICT_KIND_MEANING


@dataclass(frozen=True)
class CheckPageError(Exception):
    """A precision-check report that cannot be read: the cause and the fix."""

    cause: str
    fix: str


def is_check_report(doc: object) -> bool:
    return isinstance(doc, dict) and doc.get("schema") == SCHEMA


def read_check_report(path: Path, text: str) -> Report:
    """The report in ``text`` (from ``path``); a malformed one raises CheckPageError naming what is wrong."""
    try:
        return report_from_json(text)
    except (ValueError, KeyError, TypeError) as error:
        what = f"missing field {error}" if isinstance(error, KeyError) else str(error)
        raise CheckPageError(
            f"{path} is a {SCHEMA} report that cannot be read ({what})",
            "pass the file `precision-check ... --json PATH` wrote, unchanged; a report from a newer "
            "precision-check needs a newer pytorch-cuda",
        ) from None


def _finite(losses: tuple[float | None, ...]) -> tuple[list[int], list[float]]:
    """The steps with a finite loss, and those losses (a non-finite step leaves a gap)."""
    points = [(step, loss) for step, loss in enumerate(losses) if loss is not None]
    return [step for step, _ in points], [loss for _, loss in points]


def loss_curves(report: Report) -> str:
    """Each dtype's loss per step, and fp32's control run dashed: where they part is where precision shows."""
    figure = Figure(figsize=(8, 3.8), layout="constrained")
    ax = figure.add_subplot()
    for colour, run in zip(COLOURS, report.measurements.runs, strict=False):
        steps, losses = _finite(run.losses)
        ax.plot(steps, losses, label=run.dtype, color=colour, linewidth=1.4)
    floor = report.measurements.noise_floor
    if floor is not None:
        steps, losses = _finite(floor.losses)
        ax.plot(steps, losses, label="fp32 control", color="#6b7280", linestyle="--", linewidth=1.0)
    for run in report.measurements.runs:
        if run.scaler is not None and run.scaler.fp32_same_skips is not None:
            steps, losses = _finite(run.scaler.fp32_same_skips)
            label = f"fp32 skipping {run.dtype}'s skipped steps"
            ax.plot(steps, losses, label=label, color="#6b7280", linestyle=":", linewidth=1.0)
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.legend(loc="upper right", fontsize=8)
    ax.grid(alpha=0.3)
    return svg_text(figure)


def _facts(report: Report) -> list[str]:
    facts = []
    floor = report.measurements.noise_floor
    if floor is not None and floor.rel_diff_max is not None:
        facts.append(
            f"fp32 noise floor: {100 * floor.rel_diff_max:.2g}% at most along the way"
            + ("" if floor.rel_diff_final is None else f", {100 * floor.rel_diff_final:.2g}% at the end")
            + f", for {floor.perturbation}"
        )
    if (gradients := gradients_line(report)) is not None:
        facts.append(gradients)
    for run in report.measurements.runs:
        z = run.zero_grads
        if z is not None:
            facts.append(zero_grads_line(z))
        if run.scaler is not None and run.scaler.scale:
            skipped = len(run.scaler.skipped_steps)
            facts.append(
                f"GradScaler: scale {scale_text(run.scaler.scale[0])} -> {scale_text(run.scaler.scale[-1])}, "
                f"{skipped} step(s) skipped"
                + (
                    ""
                    if run.scaler.fp32_same_skips is None
                    else f"; {run.dtype} is compared with fp32 skipping them too"
                )
            )
        for overflow in run.overflows[:1]:
            size = "inf/nan" if overflow.max_abs is None else f"{overflow.max_abs:.3g}"
            facts.append(f"{run.dtype}: `{overflow.module}` left fp16's range at step {overflow.step} (|x| = {size})")
        if (compiled := compile_line(run)) is not None:
            facts.append(compiled)
    return facts + [f"note: {note}" for note in report.measurements.notes]


def render_check_page(report: Report, source: str) -> str:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    header, rows = table_rows(report)
    context: dict[str, Any] = {
        "report": report,
        "device": report.measurements.device,
        "source": source,
        "header": header,
        "rows": rows,
        "facts": _facts(report),
        "kind_meaning": KIND_MEANING.get(report.verdict.kind, ""),
        "chart": loss_curves(report),
        "numbers": json.dumps(report.verdict.numbers, indent=1, sort_keys=True),
    }
    return env.get_template(TEMPLATE).render(context)
