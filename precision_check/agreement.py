"""Does a loss curve agree with fp32's? Judged against fp32's own noise floor. Pure: numbers in, numbers out.

fp32 is the reference, but it is not exact either. The control (see `report.NoiseFloor`) trains the
model in fp32 again from initial weights that differ by one rounding; how far its loss curve moves
from the reference is how far this model moves on rounding-sized changes alone. On a steady model
that is far below 1%. On a chaotic one (a learning rate too high, post-LayerNorm without warm-up)
it can be tens of percent, and half precision is not to blame for it. So a half-precision curve
agrees when its drift is within max(tolerance, multiple x that floor), where the floor is the
control's largest relative difference along the way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from precision_check.report import DtypeRun, NoiseFloor

Curve = Sequence[float | None]


def pct(x: float) -> str:
    """0.004 -> '0.4%', 0.27 -> '27%'."""
    value = 100 * x
    return f"{value:.0f}%" if value >= 10 else f"{value:.2g}%"


def listed(steps: Sequence[int], most: int = 5) -> str:
    """(0, 1, 2) -> '0, 1, 2'; past `most` steps, the first `most` and '...'."""
    return ", ".join(map(str, steps[:most])) + (", ..." if len(steps) > most else "")


def relative_diffs(losses: Curve, reference: Curve) -> list[tuple[float, int]]:
    """(|loss - ref| / |ref|, step) at every step where both losses are finite."""
    return [
        (abs(loss - ref) / max(abs(ref), 1e-12), step)
        for step, (loss, ref) in enumerate(zip(losses, reference, strict=False))
        if loss is not None and ref is not None
    ]


def agreement(losses: Curve, reference: Curve) -> tuple[float | None, float | None, int | None]:
    """(relative difference at the last step, the largest one along the way, its step) against fp32.

    Steps where either loss is non-finite are skipped; the last step's difference is None then.
    """
    diffs = relative_diffs(losses, reference)
    last = len(losses) - 1
    final = next((d for d, step in diffs if step == last), None)
    if not diffs:
        return final, None, None
    worst, worst_step = max(diffs)
    return final, worst, worst_step


def reference_for(run: DtypeRun, fp32: DtypeRun) -> Curve:
    """The curve `run` is judged against: fp32 trained with the same optimizer steps skipped when its
    GradScaler skipped any (and that was measured), else the fp32 run itself."""
    same_skips = None if run.scaler is None else run.scaler.fp32_same_skips
    return fp32.losses if same_skips is None else same_skips


def noise_floor(control: Curve, reference: Curve) -> NoiseFloor:
    """The control's curve against the fp32 reference's."""
    final, worst, worst_step = agreement(control, reference)
    nonfinite = tuple(step for step, loss in enumerate(control) if loss is None)
    return NoiseFloor(tuple(control), nonfinite, final, worst, worst_step)


def floor_of(floor: NoiseFloor | None) -> float:
    """fp32's own variation as one number: the control's largest relative difference (0 when not measured)."""
    return 0.0 if floor is None or floor.rel_diff_max is None else floor.rel_diff_max


def worst_drift(
    reference: Curve, losses: Curve, steps: range, limit: float, absolute: float
) -> tuple[int, float] | None:
    """The step (and relative difference) where `losses` is furthest off `reference`, beyond `limit` relative
    and beyond `absolute` times the initial loss in absolute terms; None when it never is."""
    scale = abs(reference[0]) if reference and reference[0] is not None else 0.0
    off = [
        (abs(a - b) / max(abs(b), 1e-12), step)
        for step in steps
        if step < min(len(reference), len(losses))
        and (a := losses[step]) is not None
        and (b := reference[step]) is not None
        and abs(a - b) > absolute * scale
    ]
    worst = max(off, default=None)
    return None if worst is None or worst[0] <= limit else (worst[1], worst[0])


@dataclass(frozen=True)
class Tolerance:
    final: float = 0.02  # final loss within 2% of fp32
    along_the_way: float = 0.10  # and never more than 10% off along the way
    absolute: float = 0.005  # differences below 0.5% of the initial loss are noise, whatever their ratio
    noise_multiple: float = 3.0  # ... and so is drift within 3x fp32's own variation (the noise floor)


@dataclass(frozen=True)
class Judgement:
    problem: str | None  # "drifts: final loss 6% off fp32's (tolerance 2%)", or None: it agrees
    needs_floor: bool = False  # it agrees only because fp32 itself varies that much on this model


def _limit(tolerance: float, floor: float, multiple: float) -> tuple[float, str]:
    widened = multiple * floor
    if widened <= tolerance:
        return tolerance, f"tolerance {pct(tolerance)}"
    return widened, f"tolerance {pct(widened)}: {multiple:g}x fp32's own variation of {pct(floor)}"


def _problem(reference: Curve, losses: Curve, tol: Tolerance, floor: float) -> str | None:
    last = len(losses) - 1
    final_limit, final_text = _limit(tol.final, floor, tol.noise_multiple)
    final = worst_drift(reference, losses, range(last, last + 1), final_limit, tol.absolute)
    if final is not None:
        return f"drifts: final loss {pct(final[1])} off fp32's ({final_text})"
    along_limit, along_text = _limit(tol.along_the_way, floor, tol.noise_multiple)
    worst = worst_drift(reference, losses, range(last), along_limit, tol.absolute)
    if worst is not None:
        return f"drifts: loss {pct(worst[1])} off fp32's at step {worst[0]} ({along_text})"
    return None


def judge(reference: Curve, losses: Curve, floor: NoiseFloor | None, tol: Tolerance = Tolerance()) -> Judgement:
    """Whether `losses` agrees with the fp32 `reference`, given fp32's own noise floor."""
    problem = _problem(reference, losses, tol, floor_of(floor))
    if problem is not None:
        return Judgement(problem)
    return Judgement(None, needs_floor=_problem(reference, losses, tol, 0.0) is not None)


def varies(floor: NoiseFloor) -> str:
    """'fp32 itself varies by 9% on this model: ...', with how that was measured."""
    where = "" if floor.rel_diff_max_step is None else f" (step {floor.rel_diff_max_step})"
    end = "non-finite" if floor.rel_diff_final is None else pct(floor.rel_diff_final)
    return (
        f"fp32 itself varies by {pct(floor_of(floor))} on this model: {floor.perturbation}, "
        f"is up to {pct(floor_of(floor))} off the fp32 run{where}, {end} at the end"
    )
