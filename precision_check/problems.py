"""Why one dtype is not safe for this model, from its whole run: range, non-finite losses and gradients,
GradScaler's skips, underflow (at the first step and late in training), and the end of training against
fp32's (agreement.py). Pure: measurements in, a named problem (or None) out."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from precision_check.agreement import Judgement, Tolerance, end_window, judge, last_steps, listed, reference_for
from precision_check.agreement import pct as _pct
from precision_check.check_report import FP16_MAX, DtypeRun, Measurements, Overflow
from pytorch_cuda_contract.gpu import native_from

BF16_FROM = native_from("bf16")


@dataclass(frozen=True)
class Tolerances:
    agreement: Tolerance = field(default_factory=Tolerance)  # closeness to fp32, given its noise floor
    faster: float = 1.10  # a speedup below 1.1x is "not faster"
    prefer_bf16: float = 0.90  # take bf16 over a faster fp16 unless fp16 is >10% faster still
    skipped_steps: float = 0.25  # GradScaler skipping more than a quarter of the steps is unstable
    underflow: float = 0.05  # zero-gradient fraction above fp32's (fp16: even with scaling), first or last steps


DEFAULT_TOLERANCES = Tolerances()


@dataclass(frozen=True)
class Problem:
    text: str  # "overflows in `expand` at step 0 (...)", said after the dtype's name
    kind: str  # "range", "nonfinite", "unstable", "underflow", "drifts", "precision-limited", "not-native"


def where(o: Overflow) -> str:
    size = "inf/nan" if o.max_abs is None else f"{o.max_abs:.3g}"
    return f"`{o.module}` at step {o.step} (|x| = {size} > {FP16_MAX:.0f})"


def first_overflow(m: Measurements) -> tuple[str, Overflow] | None:
    """The first module output fp16 cannot hold: inf/nan in the fp16 run if it ran, else an output above
    65504 in the fp32 (or tf32, bf16) run: what fp16 would not hold."""
    for dtype in ("fp16",) if m.run("fp16") else ("fp32", "tf32", "bf16"):
        run = m.run(dtype)
        if run is not None and run.overflows:
            return dtype, min(run.overflows, key=lambda o: o.step)
    return None


def late_zero_grads(run: DtypeRun, steps: int) -> float | None:
    """The mean fraction of zero gradients over the last steps (`end_window`); None when not measured."""
    tail = [z for z in run.zero_grad_fractions[-end_window(steps) :] if z is not None]
    return statistics.fmean(tail) if tail else None


def nonfinite_grads(run: DtypeRun) -> str | None:
    """'a non-finite gradient in `w` from step 3 (2 parameters)': the backward pass, per parameter."""
    if not run.nonfinite_grads:
        return None
    first = min(run.nonfinite_grads, key=lambda g: g.step)
    count = len(run.nonfinite_grads)
    return f"a non-finite gradient in `{first.parameter}` from step {first.step}" + (
        f" ({count} parameters)" if count > 1 else ""
    )


def judgement(m: Measurements, run: DtypeRun, tol: Tolerances) -> Judgement:
    ref = m.run("fp32")
    if ref is None:
        return Judgement(None)
    return judge(reference_for(run, ref), run.losses, m.noise_floor, tol.agreement, fp32=ref.losses)


def _underflow(m: Measurements, run: DtypeRun, tol: Tolerances) -> str | None:
    scaled = " even with GradScaler's scaling" if run.scaler is not None else ""
    z = run.zero_grads
    if z is not None and z.fp16_scaled - z.fp32 > tol.underflow:
        return f"underflows: {_pct(z.fp16_scaled)} of gradients are zero{scaled} (fp32: {_pct(z.fp32)})"
    fp32 = m.run("fp32")
    late, ref = late_zero_grads(run, m.steps), None if fp32 is None else late_zero_grads(fp32, m.steps)
    if late is not None and ref is not None and late - ref > tol.underflow:
        return (
            f"underflows late in training: {_pct(late)} of gradients are zero{scaled} over "
            f"{last_steps(end_window(m.steps))} (fp32: {_pct(ref)})"
        )
    return None


def problem(m: Measurements, run: DtypeRun, tol: Tolerances) -> Problem | None:
    """Why this dtype is not safe for this model, or None."""
    if run.dtype == "bf16" and m.device.bf16_native is False:
        cc = m.device.compute_capability
        return Problem(
            f"is not native on {m.device.name} (compute capability {cc}; it needs {BF16_FROM})", "not-native"
        )
    if run.dtype == "fp16":
        overflow = first_overflow(m)
        if overflow is not None:
            return Problem(f"overflows in {where(overflow[1])}", "range")
    grads = nonfinite_grads(run) if run.scaler is None else None  # with a scaler, inf/nan is its skip
    if grads is not None:
        return Problem(f"has {grads} (the backward pass)", "nonfinite")
    if run.nonfinite_steps:
        first, count = run.nonfinite_steps[0], len(run.nonfinite_steps)
        return Problem(f"has a non-finite loss from step {first} ({count} of {m.steps} steps)", "nonfinite")
    if run.scaler is not None and len(run.scaler.skipped_steps) > tol.skipped_steps * m.steps:
        skipped = len(run.scaler.skipped_steps)
        return Problem(f"is unstable: GradScaler skipped {skipped} of {m.steps} steps (inf/nan gradients)", "unstable")
    underflow = _underflow(m, run, tol)
    if underflow is not None:
        return Problem(underflow, "underflow")
    judged = judgement(m, run, tol)
    if judged.problem is None:
        return None
    return Problem(judged.problem, "precision-limited" if judged.limited else "drifts")


def same_skips(run: DtypeRun) -> str | None:
    """What the skipped steps of `run` were, and what it was compared with because of them."""
    scaler = run.scaler
    if scaler is None or not scaler.skipped_steps or scaler.fp32_same_skips is None:
        return None
    skipped = scaler.skipped_steps
    if len(skipped) == 1:
        which, that = f"step {skipped[0]}", "that step"
    else:
        which, that = f"{len(skipped)} steps ({listed(skipped)})", "those steps"
    return (
        f"{run.dtype}: GradScaler skipped {which}: inf/nan gradients at its scale, so it lowered the scale "
        f"and dropped the update, as it does while it finds its scale; {run.dtype} is compared with fp32 "
        f"trained with {that} skipped too"
    )
