"""The verdict: measurements in, one recommended dtype out, with the reason and the numbers. Pure."""

from __future__ import annotations

from dataclasses import dataclass, field

from precision_check.agreement import Judgement, Tolerance, floor_of, judge, listed, reference_for, varies
from precision_check.agreement import pct as _pct
from precision_check.report import FP16_MAX, DtypeRun, Measurements, Overflow, Verdict


@dataclass(frozen=True)
class Tolerances:
    agreement: Tolerance = field(default_factory=Tolerance)  # closeness to fp32, given its noise floor
    faster: float = 1.10  # a speedup below 1.1x is "not faster"
    prefer_bf16: float = 0.90  # take bf16 over a faster fp16 unless fp16 is >10% faster still
    skipped_steps: float = 0.25  # GradScaler skipping more than a quarter of the steps is unstable
    underflow: float = 0.05  # zero-gradient fraction above fp32's, even with scaling


LABEL = {"fp32": "fp32", "tf32": "tf32", "fp16": "fp16 with GradScaler", "bf16": "bf16"}


def _where(o: Overflow) -> str:
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


def speedup(m: Measurements, run: DtypeRun) -> float | None:
    ref = m.run("fp32")
    if m.device.kind != "cuda" or ref is None or ref.timing is None or run.timing is None:
        return None
    return ref.timing.median_ms / run.timing.median_ms


def compiled_speedup(m: Measurements, run: DtypeRun) -> float | None:
    """fp32 compiled step time / this dtype's compiled step time (GPU, --compile)."""
    ref = m.run("fp32")
    if m.device.kind != "cuda" or ref is None or ref.compiled is None or run.compiled is None:
        return None
    return ref.compiled.timing.median_ms / run.compiled.timing.median_ms


def memory_saving(m: Measurements, run: DtypeRun) -> float | None:
    ref = m.run("fp32")
    if ref is None or ref.peak_mem_mib is None or run.peak_mem_mib is None or ref.peak_mem_mib <= 0:
        return None
    return 1.0 - run.peak_mem_mib / ref.peak_mem_mib


def problem(m: Measurements, run: DtypeRun, tol: Tolerances) -> str | None:
    """Why this dtype is not safe for this model, or None."""
    if run.dtype == "bf16" and m.device.bf16_native is False:
        return f"is not native on {m.device.name} (compute capability {m.device.compute_capability}; it needs 8.0)"
    if run.dtype == "fp16":
        overflow = first_overflow(m)
        if overflow is not None:
            return f"overflows in {_where(overflow[1])}"
    if run.nonfinite_steps:
        return (
            f"has a non-finite loss from step {run.nonfinite_steps[0]} ({len(run.nonfinite_steps)} of {m.steps} steps)"
        )
    if run.scaler is not None and len(run.scaler.skipped_steps) > tol.skipped_steps * m.steps:
        return f"is unstable: GradScaler skipped {len(run.scaler.skipped_steps)} of {m.steps} steps (inf/nan gradients)"
    z = run.zero_grads
    if z is not None and z.fp16_scaled - z.fp32 > tol.underflow:
        return f"underflows: {_pct(z.fp16_scaled)} of gradients are zero even with scaling (fp32: {_pct(z.fp32)})"
    if run.rel_diff_final is None:
        return "has a final loss that cannot be compared with fp32's"
    return _judgement(m, run, tol).problem


def _judgement(m: Measurements, run: DtypeRun, tol: Tolerances) -> Judgement:
    ref = m.run("fp32")
    return Judgement(None) if ref is None else judge(reference_for(run, ref), run.losses, m.noise_floor, tol.agreement)


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


def _numbers(m: Measurements) -> dict[str, float | str | None]:
    numbers: dict[str, float | str | None] = {}
    for run in m.runs:
        if run.dtype != "fp32":
            numbers[f"{run.dtype}.speedup"] = speedup(m, run)
            numbers[f"{run.dtype}.memory_saving"] = memory_saving(m, run)
            if run.compiled is not None:
                numbers[f"{run.dtype}.compiled_speedup"] = compiled_speedup(m, run)
            numbers[f"{run.dtype}.rel_diff_final"] = run.rel_diff_final
            numbers[f"{run.dtype}.rel_diff_max"] = run.rel_diff_max
        if run.zero_grads is not None:
            numbers["fp16.zero_grads.unscaled"] = run.zero_grads.fp16_unscaled
            numbers["fp16.zero_grads.scaled"] = run.zero_grads.fp16_scaled
    if m.noise_floor is not None:
        numbers["fp32.noise_floor"] = m.noise_floor.rel_diff_max
    overflow = first_overflow(m)
    if overflow is not None:
        numbers |= {"overflow.module": overflow[1].module, "overflow.step": overflow[1].step}
        numbers["overflow.seen_in"] = overflow[0]
    return numbers


def _gains(m: Measurements, run: DtypeRun, tol: Tolerances) -> str:
    parts = []
    s, mem = speedup(m, run), memory_saving(m, run)
    if s is not None:
        parts.append(f"{s:.1f}x faster than fp32" if s >= 1.1 else f"{s:.2f}x fp32's speed")
    if mem is not None:
        parts.append(f"{_pct(abs(mem))} {'less' if mem >= 0 else 'more'} memory")
    if run.rel_diff_final is not None:
        parts.append(f"final loss within {_pct(run.rel_diff_final)}")
    shown = ", ".join(parts)
    if _judgement(m, run, tol).needs_floor:
        shown += f" (fp32 itself varies by {_pct(floor_of(m.noise_floor))} on this model)"
    return shown


def decide(m: Measurements, tol: Tolerances = Tolerances()) -> Verdict:
    numbers = _numbers(m)
    fp32 = m.run("fp32")
    if fp32 is None:
        return Verdict("fp32", "fp32: no fp32 reference run, nothing to compare with", (), numbers)
    if fp32.nonfinite_steps:
        return Verdict(
            "fp32",
            f"fp32: the loss is non-finite in fp32 itself from step {fp32.nonfinite_steps[0]}: the model "
            "diverges whatever the precision; fix it (learning rate, initialisation) before choosing a dtype",
            (),
            numbers,
        )
    others = [run for run in m.runs if run.dtype != "fp32"]
    problems = {run.dtype: problem(m, run, tol) for run in others}
    reasons = tuple(
        f"{r.dtype} {problems[r.dtype]}" if problems[r.dtype] else f"{r.dtype}: safe: {_gains(m, r, tol)}"
        for r in others
    )
    # said only where the skips are GradScaler finding its scale, not part of an overflow or instability
    reasons += tuple(
        skips for r in others if (problems[r.dtype] or "drifts").startswith("drifts") and (skips := same_skips(r))
    )
    overflow = first_overflow(m)
    if overflow is not None and "fp16" not in problems:
        reasons += (f"fp16 (not run) would overflow in {_where(overflow[1])}, seen in the {overflow[0]} run",)
    wide = next((r.overflows[0] for r in m.runs if r.dtype != "fp16" and r.overflows), None)
    if overflow is None and wide is not None:
        reasons += (
            f"{_where(wide)} is beyond fp16's range in fp32, but the fp16 run stayed finite "
            "(autocast keeps that output in fp32)",
        )
    compiled = [(r.dtype, compiled_speedup(m, r)) for r in others]
    reasons += tuple(f"with torch.compile: {d} runs at {x:.2f}x compiled fp32's speed" for d, x in compiled if x)
    floor = m.noise_floor
    steadier = "steadier training (a lower learning rate, warm-up, gradient clipping, pre-LayerNorm)"
    if floor is not None and floor.nonfinite_steps:
        head = (
            f"fp32: the model is on the edge of diverging in fp32 itself: {floor.perturbation}, has a non-finite "
            f"loss from step {floor.nonfinite_steps[0]}; fix it ({steadier}) before choosing a dtype"
        )
        return Verdict("fp32", head, reasons, numbers)
    leaned = any(problems[r.dtype] is None and _judgement(m, r, tol).needs_floor for r in others)
    if floor is not None and (leaned or floor_of(floor) > tol.agreement.along_the_way):
        reasons += (
            f"{varies(floor)}: half precision is judged against {tol.agreement.noise_multiple:g}x that, not "
            f"blamed for it; {steadier} makes the comparison sharper",
        )
    safe = [run for run in m.runs if run.dtype in problems and problems[run.dtype] is None]
    overflow_lead = ""
    if overflow is not None:
        verb = "overflows" if overflow[0] == "fp16" else "would overflow"
        overflow_lead = f"fp16 {verb} in {_where(overflow[1])}: "
    no_bf16 = m.device.bf16_native is False

    if m.device.kind != "cuda":
        chosen = next((r for r in safe if r.dtype == "bf16"), None)
        cpu = f" over {m.steps} steps (CPU run: numerics only; speed and memory need a GPU)"
        if chosen is None:
            why = "; ".join(f"{d} {p}" for d, p in problems.items() if p) or "no other dtype was run"
            return Verdict("fp32", f"fp32: {why}{cpu}", reasons, numbers)
        return Verdict("bf16", f"{overflow_lead}use bf16: {_gains(m, chosen, tol)}{cpu}", reasons, numbers)

    faster = [r for r in safe if (speedup(m, r) or 0.0) >= tol.faster]
    if not faster:
        if safe:
            best = max(safe, key=lambda r: speedup(m, r) or 0.0)
            s = speedup(m, best)
            shown = f"{LABEL[best.dtype]} runs at {s:.2f}x fp32's speed" if s is not None else "no timing"
            head = (
                f"fp32: not faster ({shown}): this model is memory-bound at this batch size (or launch-bound), "
                "so lower precision buys no speed; stay in fp32 or grow the batch"
            )
        else:
            why = "; ".join(f"{d} {p}" for d, p in problems.items() if p) or "no other dtype was run"
            head = f"fp32: {why}" + ("; this GPU has no native bf16" if no_bf16 and "bf16" not in problems else "")
        return Verdict("fp32", head, reasons, numbers)
    chosen = max(faster, key=lambda r: speedup(m, r) or 0.0)
    bf16 = next((r for r in faster if r.dtype == "bf16"), None)
    if bf16 is not None and (speedup(m, bf16) or 0.0) >= tol.prefer_bf16 * (speedup(m, chosen) or 0.0):
        chosen = bf16
    label = LABEL[chosen.dtype]
    if chosen.dtype == "bf16" and overflow is not None:
        return Verdict("bf16", f"{overflow_lead}use bf16 ({_gains(m, chosen, tol)})", reasons, numbers)
    tail = f" (no native bf16 on {m.device.name})" if no_bf16 and chosen.dtype == "fp16" else ""
    return Verdict(chosen.dtype, f"{label}: {_gains(m, chosen, tol)}{tail}", reasons, numbers)
