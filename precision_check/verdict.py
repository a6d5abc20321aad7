"""The verdict: measurements in, one recommended dtype out, with its kind, the reason and the numbers. Pure.

The kinds (report.VERDICT_KINDS; docs/precision-check.md): faster, not-faster, numerics-only (the CPU: no
speed evidence, so no dtype is recommended for speed), precision-limited, unsafe, model-unstable, no-reference.
"""

from __future__ import annotations

from precision_check.agreement import end_window, floor_of, varies
from precision_check.agreement import pct as _pct
from precision_check.check_report import DtypeRun, Measurements, Verdict
from precision_check.problems import (
    DEFAULT_TOLERANCES,
    Problem,
    Tolerances,
    first_overflow,
    judgement,
    late_zero_grads,
    nonfinite_grads,
    problem,
    same_skips,
    where,
)

__all__ = ["Tolerances", "compiled_speedup", "decide", "memory_saving", "same_skips", "speedup"]

LABEL = {"fp32": "fp32", "tf32": "tf32", "fp16": "fp16 with GradScaler", "bf16": "bf16"}
STEADIER = "steadier training (a lower learning rate, warm-up, gradient clipping, pre-LayerNorm)"
NO_SPEED = (
    "CPU: no speed or memory evidence, so no dtype is recommended for speed; run precision-check on the GPU "
    "you train on for that"
)


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


def _numbers(m: Measurements, tol: Tolerances) -> dict[str, float | str | None]:
    numbers: dict[str, float | str | None] = {"end_window": end_window(m.steps)}
    for run in m.runs:
        late = late_zero_grads(run, m.steps)
        if late is not None:
            numbers[f"{run.dtype}.zero_grads.late"] = late
        if run.dtype == "fp32":
            continue
        numbers[f"{run.dtype}.speedup"] = speedup(m, run)
        numbers[f"{run.dtype}.memory_saving"] = memory_saving(m, run)
        if run.compiled is not None:
            numbers[f"{run.dtype}.compiled_speedup"] = compiled_speedup(m, run)
        numbers[f"{run.dtype}.rel_diff_final"] = run.rel_diff_final
        numbers[f"{run.dtype}.rel_diff_max"] = run.rel_diff_max
        end = judgement(m, run, tol).end
        if end is not None:
            numbers |= {f"{run.dtype}.end_loss": end.loss, f"{run.dtype}.end_excess": end.excess}
            numbers |= {"fp32.end_loss": end.reference} if run.scaler is None else {}
            numbers |= {"fp32.end_spread": end.spread}
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
    """Speed, memory and the end's agreement of a safe run. The agreement shown is the one judged, so it
    is within the tolerance it was judged by (never 'within 2219%')."""
    parts = []
    s, mem = speedup(m, run), memory_saving(m, run)
    if s is not None:
        parts.append(f"{s:.1f}x faster than fp32" if s >= 1.1 else f"{s:.2f}x fp32's speed")
    if mem is not None:
        parts.append(f"{_pct(abs(mem))} {'less' if mem >= 0 else 'more'} memory")
    judged = judgement(m, run, tol)
    if judged.end is not None and abs(judged.end.excess) <= judged.limit:
        parts.append(f"final loss within {_pct(abs(judged.end.excess))}")
    shown = ", ".join(parts)
    return shown + (f" ({judged.leaned_on})" if judged.leaned_on else "")


def _limited_head(m: Measurements, limited: list[DtypeRun], problems: dict[str, Problem | None], alt: str) -> str:
    """'fp32: bf16 is precision-limited on this model: bf16's loss stalls at ...; train in fp32 (...)'."""
    names = " and ".join(r.dtype for r in limited)
    first = problems[limited[0].dtype]
    detail = "" if first is None else first.text.removeprefix("is precision-limited: its ")
    verb = "is" if len(limited) == 1 else "are"
    head = f"{LABEL[alt]}: {names} {verb} precision-limited on this model: {limited[0].dtype}'s {detail}"
    if alt != "fp32":
        return f"{head}; {LABEL[alt]} reaches fp32's loss"
    reaching = [LABEL[d] for d, p in problems.items() if p is None]
    if reaching:
        one = len(reaching) == 1
        why = ("is not" if one else "are not") + " faster" if m.device.kind == "cuda" else "the CPU shows no speed"
        reach = "reaches" if one else "reach"
        return f"{head}; train in fp32 ({' and '.join(reaching)} {reach} fp32's loss, but {why})"
    tried = {r.dtype for r in m.runs}
    untried = [d for d in (("tf32", "fp16") if m.device.kind == "cuda" else ("fp16",)) if d not in tried]
    if not untried or not all(r.dtype == "bf16" for r in limited):
        return f"{head}; train in fp32"
    which, one = " and ".join(untried), len(untried) == 1
    where = " on a GPU" if m.device.kind != "cuda" else ""
    return (
        f"{head}; train in fp32 ({which} {'keeps' if one else 'keep'} 10 mantissa bits to bf16's 7: "
        f"`--dtypes fp32,{','.join(untried)}`{where} shows whether {'it reaches' if one else 'they reach'} "
        "fp32's loss)"
    )


def _reasons(
    m: Measurements, others: list[DtypeRun], problems: dict[str, Problem | None], tol: Tolerances
) -> tuple[str, ...]:
    reasons = tuple(
        f"{r.dtype} {p.text}" if (p := problems[r.dtype]) else f"{r.dtype}: safe: {_gains(m, r, tol)}" for r in others
    )
    # said only where the skips are GradScaler finding its scale, not part of an overflow or instability
    judged_on_curve = (None, "drifts", "precision-limited")
    reasons += tuple(
        skips
        for r in others
        if (None if (p := problems[r.dtype]) is None else p.kind) in judged_on_curve and (skips := same_skips(r))
    )
    overflow = first_overflow(m)
    if overflow is not None and "fp16" not in problems:
        reasons += (f"fp16 (not run) would overflow in {where(overflow[1])}, seen in the {overflow[0]} run",)
    wide = next((r.overflows[0] for r in m.runs if r.dtype != "fp16" and r.overflows), None)
    if overflow is None and wide is not None:
        reasons += (
            f"{where(wide)} is beyond fp16's range in fp32, but the fp16 run stayed finite "
            "(autocast keeps that output in fp32)",
        )
    compiled = [(r.dtype, compiled_speedup(m, r)) for r in others]
    reasons += tuple(f"with torch.compile: {d} runs at {x:.2f}x compiled fp32's speed" for d, x in compiled if x)
    floor = m.noise_floor
    leaned = any(problems[r.dtype] is None and judgement(m, r, tol).needs_floor for r in others)
    if floor is not None and not floor.nonfinite_steps and (leaned or floor_of(floor) > tol.agreement.along_the_way):
        reasons += (
            f"{varies(floor)}: half precision is judged against {tol.agreement.noise_multiple:g}x that, not "
            f"blamed for it; {STEADIER} makes the comparison sharper",
        )
    return reasons


def _unstable(m: Measurements, fp32: DtypeRun) -> str | None:
    grads = nonfinite_grads(fp32)
    if fp32.nonfinite_steps or grads is not None:
        what = (
            f"the loss is non-finite in fp32 itself from step {fp32.nonfinite_steps[0]}" if fp32.nonfinite_steps else ""
        )
        what = f"fp32 itself has {grads} in the backward pass" if grads is not None else what
        return (
            f"fp32: {what}: the model diverges whatever the precision; fix it (learning rate, initialisation) "
            "before choosing a dtype"
        )
    floor = m.noise_floor
    if floor is not None and floor.nonfinite_steps:
        return (
            f"fp32: the model is on the edge of diverging in fp32 itself: {floor.perturbation}, has a non-finite "
            f"loss from step {floor.nonfinite_steps[0]}; fix it ({STEADIER}) before choosing a dtype"
        )
    return None


def decide(m: Measurements, tol: Tolerances = DEFAULT_TOLERANCES) -> Verdict:
    numbers = _numbers(m, tol)
    fp32 = m.run("fp32")
    if fp32 is None:
        return Verdict("fp32", "fp32: no fp32 reference run, nothing to compare with", (), numbers, "no-reference")
    others = [run for run in m.runs if run.dtype != "fp32"]
    problems = {run.dtype: problem(m, run, tol) for run in others}
    reasons = _reasons(m, others, problems, tol)
    unstable = _unstable(m, fp32)
    if unstable is not None:
        return Verdict("fp32", unstable, reasons, numbers, "model-unstable")
    safe = [run for run in others if problems[run.dtype] is None]
    limited = [r for r in others if (p := problems[r.dtype]) is not None and p.kind == "precision-limited"]
    overflow = first_overflow(m)
    overflow_lead = ""
    if overflow is not None:
        overflow_lead = f"fp16 {'overflows' if overflow[0] == 'fp16' else 'would overflow'} in {where(overflow[1])}: "
    why = "; ".join(f"{d} {p.text}" for d, p in problems.items() if p) or "no other dtype was run"

    if m.device.kind != "cuda":
        cpu = f". Over {m.steps} steps on the {NO_SPEED}"
        if limited:
            return Verdict(
                "fp32", _limited_head(m, limited, problems, "fp32") + cpu, reasons, numbers, "precision-limited"
            )
        chosen = next((r for r in safe if r.dtype == "bf16"), None) or next(iter(safe), None)
        if chosen is None:
            return Verdict("fp32", f"fp32: {why}{cpu}", reasons, numbers, "unsafe")
        if overflow_lead and chosen.dtype == "bf16":
            head = f"{overflow_lead}for half precision use bf16, safe in numerics here: {_gains(m, chosen, tol)}"
        else:
            head = f"{LABEL[chosen.dtype]} is safe in numerics on this model: {_gains(m, chosen, tol)}"
        return Verdict(chosen.dtype, head + cpu, reasons, numbers, "numerics-only")

    faster = [r for r in safe if (speedup(m, r) or 0.0) >= tol.faster]
    if limited:
        alt = max(faster, key=lambda r: speedup(m, r) or 0.0).dtype if faster else "fp32"
        head = _limited_head(m, limited, problems, alt)
        if alt != "fp32":
            head += f" ({_gains(m, next(r for r in faster if r.dtype == alt), tol)})"
        return Verdict(alt, head, reasons, numbers, "precision-limited")
    if not faster:
        if safe:
            best = max(safe, key=lambda r: speedup(m, r) or 0.0)
            s = speedup(m, best)
            shown = f"{LABEL[best.dtype]} runs at {s:.2f}x fp32's speed" if s is not None else "no timing"
            head = (
                f"fp32: not faster ({shown}): this model is memory-bound at this batch size (or launch-bound), "
                "so lower precision buys no speed; stay in fp32 or grow the batch"
            )
            return Verdict("fp32", head, reasons, numbers, "not-faster")
        no_bf16 = m.device.bf16_native is False and "bf16" not in problems
        head = f"fp32: {why}" + ("; this GPU has no native bf16" if no_bf16 else "")
        return Verdict("fp32", head, reasons, numbers, "unsafe")
    chosen = max(faster, key=lambda r: speedup(m, r) or 0.0)
    bf16 = next((r for r in faster if r.dtype == "bf16"), None)
    if bf16 is not None and (speedup(m, bf16) or 0.0) >= tol.prefer_bf16 * (speedup(m, chosen) or 0.0):
        chosen = bf16
    if chosen.dtype == "bf16" and overflow is not None:
        return Verdict("bf16", f"{overflow_lead}use bf16 ({_gains(m, chosen, tol)})", reasons, numbers, "faster")
    tail = f" (no native bf16 on {m.device.name})" if m.device.bf16_native is False and chosen.dtype == "fp16" else ""
    head = f"{LABEL[chosen.dtype]}: {_gains(m, chosen, tol)}{tail}"
    return Verdict(chosen.dtype, head, reasons, numbers, "faster")
