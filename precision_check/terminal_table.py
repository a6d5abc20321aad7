"""The terminal rendering of a report: one table, the notes, the verdict."""

from __future__ import annotations

from precision_check.agreement import end_window, last_steps
from precision_check.check_report import DtypeRun, Report, ZeroGrads
from precision_check.problems import DEFAULT_TOLERANCES, judgement, late_zero_grads
from precision_check.verdict import memory_saving, speedup

HEADER = ("dtype", "final loss", "Δ end", "Δ max (step)", "non-finite", "skipped", "overflow", "step ms", "speedup")


def _num(x: float | None, fmt: str = "{:.4g}") -> str:
    return "-" if x is None else fmt.format(x)


def _row(report: Report, run: DtypeRun) -> list[str]:
    m = report.measurements
    worst = "-" if run.rel_diff_max is None else f"{100 * run.rel_diff_max:.2f}% ({run.rel_diff_max_step})"
    first = run.overflows[0] if run.overflows else None
    overflow = "-" if first is None else f"{first.module}@{first.step}"
    end = None if run.dtype == "fp32" else judgement(m, run, DEFAULT_TOLERANCES).end
    row = [
        run.dtype,
        _num(run.final_loss),
        "-" if end is None else f"{100 * end.excess:+.2f}%",
        worst,
        str(len(run.nonfinite_steps)),
        "-" if run.scaler is None else str(len(run.scaler.skipped_steps)),
        overflow,
        _num(run.timing.median_ms if run.timing else None, "{:.2f}"),
        _num(speedup(m, run) if run.dtype != "fp32" else (1.0 if m.device.kind == "cuda" else None), "{:.2f}x"),
    ]
    if m.device.kind == "cuda":
        saving = memory_saving(m, run)
        row += [_num(run.peak_mem_mib, "{:.0f}"), "-" if saving is None else f"{100 * saving:+.0f}%"]
    if m.compile:
        row.append(_num(run.compiled.timing.median_ms if run.compiled else None, "{:.2f}"))
    return row


def table_rows(report: Report) -> tuple[list[str], list[list[str]]]:
    """The table's header and one row of cells per dtype (the terminal and the HTML page show these)."""
    m = report.measurements
    header = list(HEADER)
    window = end_window(m.steps)
    header[2] = "Δ end" if window == 1 else f"Δ last {window}"
    if m.device.kind == "cuda":
        header += ["peak MiB", "memory saved"]
    if m.compile:
        header.append("compiled ms")
    return header, [_row(report, run) for run in m.runs]


def scale_text(value: float) -> str:
    """A GradScaler scale: 65536 -> '65536', 5.8e-11 -> '5.82e-11' (not '0')."""
    return f"{value:.0f}" if value >= 1 else f"{value:.3g}"


def zero_grads_line(z: ZeroGrads) -> str:
    """The zero-gradient fractions as one sentence (the terminal and the HTML page say it alike)."""
    return (
        f"zero gradients at the initial weights: fp32 {100 * z.fp32:.2f}%, fp16 without scaling "
        f"{100 * z.fp16_unscaled:.2f}%, fp16 scaled by {z.scale:.0f} {100 * z.fp16_scaled:.2f}%"
    )


def gradients_line(report: Report) -> str | None:
    """The whole run's gradients in one sentence: zero fractions late in training, non-finite ones per
    parameter; None for a report without them (before version 4)."""
    m = report.measurements
    late = [(r.dtype, z) for r in m.runs if (z := late_zero_grads(r, m.steps)) is not None]
    if not late:
        return None
    zeros = ", ".join(f"{dtype} {100 * z:.2f}%" for dtype, z in late)
    # with GradScaler (fp16), inf/nan gradients are what makes it skip a step: its own line says so
    faults = [
        f"{r.dtype} `{g.parameter}` at step {g.step}" for r in m.runs if r.scaler is None for g in r.nonfinite_grads[:1]
    ]
    return f"zero gradients over {last_steps(end_window(m.steps))}: {zeros}; first non-finite gradient: " + (
        ", ".join(faults) if faults else "none"
    )


def compile_line(run: DtypeRun) -> str | None:
    """How long torch.compile's first step took, or None when the run was not compiled."""
    return (
        None
        if run.compiled is None
        else f"{run.dtype}: torch.compile took {run.compiled.compile_s:.1f} s on the first step"
    )


def render(report: Report) -> str:
    m = report.measurements
    d = m.device
    where = f"{d.name} (compute capability {d.compute_capability})" if d.kind == "cuda" else f"the CPU ({d.name})"
    lines = [f"precision-check {report.target}: {m.steps} steps per dtype on {where}, torch {d.torch}", ""]
    header, body = table_rows(report)
    rows = [header, *body]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    floor = m.noise_floor
    if floor is not None:
        end = _num(None if floor.rel_diff_final is None else 100 * floor.rel_diff_final, "{:.2g}%")
        worst = _num(None if floor.rel_diff_max is None else 100 * floor.rel_diff_max, "{:.2g}%")
        worst += "" if floor.rel_diff_max_step is None else f" (step {floor.rel_diff_max_step})"
        lost = f", non-finite from step {floor.nonfinite_steps[0]}" if floor.nonfinite_steps else ""
        lines.append(f"\nfp32 noise floor: Δ end {end}, Δ max {worst}{lost}, for {floor.perturbation}")
    if (gradients := gradients_line(report)) is not None:
        lines.append(gradients)
    for run in m.runs:
        z = run.zero_grads
        if z is not None:
            lines.append(f"\n{zero_grads_line(z)}")
        if run.scaler is not None and run.scaler.scale:
            scale = f"GradScaler scale: {scale_text(run.scaler.scale[0])} -> {scale_text(run.scaler.scale[-1])}"
            if run.scaler.fp32_same_skips is not None:
                skipped = len(run.scaler.skipped_steps)
                scale += (
                    f"; {skipped} step(s) skipped, so {run.dtype}'s Δ is against fp32 trained with "
                    "the same step(s) skipped"
                )
            lines.append(scale)
        if (compiled := compile_line(run)) is not None:
            lines.append(compiled)
    lines += ["", *(f"note: {note}" for note in m.notes)]
    kind = [f"  kind: {report.verdict.kind} (docs/precision-check.md)"] if report.verdict.kind else []
    lines += ["", f"verdict: {report.verdict.headline}", *kind, *(f"  - {r}" for r in report.verdict.reasons)]
    return "\n".join(lines).replace("\n\n\n", "\n\n") + "\n"
