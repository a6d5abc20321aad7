"""Does a loss curve agree with fp32's? Judged against fp32's own run-to-run spread. Pure: numbers in, out.

fp32 is the reference, but it is not exact either. The control (see `report.NoiseFloor`) trains the
model in fp32 again from initial weights that differ by one rounding; how far its loss curve moves
from the reference is how far this model moves on rounding-sized changes alone. On a steady model
that is far below 1%. On a chaotic one (a learning rate too high, post-LayerNorm without warm-up)
it can be tens of percent, and half precision is not to blame for it.

The end of training is judged on the end: the mean loss over the last few steps (`end_window`) against
fp32's, relative to fp32's, within max(tolerance, multiple x the control's spread over the same steps).
Nothing there is scaled by the initial loss: a loss that falls six orders of magnitude is judged at the
level it reached. A dtype that ends far above fp32's loss, at twice it or more and by more than
`Tolerance.limited` times the larger of the tolerance and the control's spread, is precision-limited: it
cannot resolve the loss fp32 reaches (a regression fitted exactly, say), and that is its own verdict.
Along the way a curve may wander by max(tolerance, multiple x the control's largest difference) before
it is called drift; there differences below `Tolerance.absolute` of the initial loss are noise (a
transient wobble late in training is not drift; the end is judged above without that allowance).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from precision_check.check_report import DtypeRun, NoiseFloor

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
    """fp32's own variation along the way: the control's largest relative difference (0 when not measured)."""
    return 0.0 if floor is None or floor.rel_diff_max is None else floor.rel_diff_max


END_WINDOW = 5  # the end of training: the mean loss over the last 5 steps (fewer in a short run)
MIN_STEPS = 5  # the fewest steps with an end distinct from the start (`end_window`); fewer: a usage error


def end_window(steps: int) -> int:
    """How many of the last steps are "the end": a fifth of the run, at most END_WINDOW, at least 1."""
    return max(1, min(END_WINDOW, steps // 5))


def last_steps(window: int) -> str:
    """'the last 5 steps', or 'the last step'."""
    return "the last step" if window == 1 else f"the last {window} steps"


def end_loss(curve: Curve, window: int) -> float | None:
    """The mean loss over the last `window` steps; None when any of them is non-finite (or missing)."""
    tail = list(curve[-window:]) if window <= len(curve) else []
    finite = [x for x in tail if x is not None]
    return statistics.fmean(finite) if tail and len(finite) == len(tail) else None


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
    final: float = 0.02  # the end (mean of the last steps) within 2% of fp32's
    along_the_way: float = 0.10  # and never more than 10% off along the way
    absolute: float = 0.005  # along the way only: differences below 0.5% of the initial loss are noise
    noise_multiple: float = 3.0  # ... and so is drift within 3x fp32's own spread (the control's)
    limited: float = 10.0  # ending above fp32 by 10x max(final, the control's end spread) ...
    limited_ratio: float = 2.0  # ... and at twice fp32's loss or more: precision-limited


@dataclass(frozen=True)
class End:
    """The end of training: mean losses over the last `window` steps."""

    window: int
    loss: float  # this dtype's
    reference: float  # the reference's (fp32, or fp32 skipping this run's skipped steps)
    spread: float | None  # fp32's own run-to-run spread there: |control - fp32| / |fp32| (None: not measured)

    @property
    def excess(self) -> float:
        """How far above the reference's loss this dtype ends, relative to it (negative: below)."""
        return (self.loss - self.reference) / max(abs(self.reference), 1e-30)

    def stalls(self) -> str:
        """'stalls at 0.00051 over the last 5 steps, 61x fp32's 8.3e-06'."""
        ratio = self.loss / self.reference if self.reference > 0 else 0.0
        big = f"{ratio:.2g}x" if ratio < 100 else f"{ratio:.0f}x"
        above = big if ratio >= 2 else f"{pct(self.excess)} above"
        return f"stalls at {self.loss:.2g} over {last_steps(self.window)}, {above} fp32's {self.reference:.2g}"


def spread_at_end(control: Curve, fp32: Curve, window: int) -> float | None:
    """fp32's own spread at the end: the control's end against fp32's, relative (None: either non-finite)."""
    c, f = end_loss(control, window), end_loss(fp32, window)
    return None if c is None or f is None else abs(c - f) / max(abs(f), 1e-30)


def end_of(reference: Curve, losses: Curve, floor: NoiseFloor | None, fp32: Curve | None = None) -> End | None:
    """The end of `losses` against `reference`, with the control's spread against `fp32` (default: the
    reference); None when either curve ends non-finite."""
    window = end_window(min(len(reference), len(losses)))
    loss, ref = end_loss(losses, window), end_loss(reference, window)
    if loss is None or ref is None:
        return None
    spread = None if floor is None else spread_at_end(floor.losses, reference if fp32 is None else fp32, window)
    return End(window, loss, ref, spread)


@dataclass(frozen=True)
class Judgement:
    problem: str | None  # "drifts: final loss 6% off fp32's (tolerance 2%)", or None: it agrees
    # when it agrees only because fp32 itself varies that much on this model: how much, e.g.
    # "fp32 itself ends 21% apart on this model" (else "")
    leaned_on: str = ""
    limited: bool = False  # precision-limited: it ends far above fp32's loss
    end: End | None = None  # the end it was judged on (None: a curve ends non-finite)
    limit: float = 0.0  # the end's tolerance: what "final loss within X%" is bound by

    @property
    def needs_floor(self) -> bool:
        return bool(self.leaned_on)


def _limit(tolerance: float, spread: float, multiple: float, what: str) -> tuple[float, str]:
    widened = multiple * spread
    if widened <= tolerance:
        return tolerance, f"tolerance {pct(tolerance)}"
    return widened, f"tolerance {pct(widened)}: {multiple:g}x fp32's own variation of {pct(spread)}{what}"


def _end_problem(end: End, tol: Tolerance, spread: float) -> tuple[str | None, bool, float]:
    """(the problem at the end, whether it is precision-limited, the end's limit)."""
    limit, text = _limit(tol.final, spread, tol.noise_multiple, " at the end")
    if end.excess > tol.limited * max(tol.final, spread) and end.excess >= tol.limited_ratio - 1:
        own = "no control run" if end.spread is None else f"fp32's own spread at the end: {pct(end.spread)}"
        return f"is precision-limited: its loss {end.stalls()} ({own})", True, limit
    if abs(end.excess) > limit:
        last = f" (mean of the last {end.window} steps)" if end.window > 1 else ""
        return f"drifts: final loss{last} {pct(abs(end.excess))} off fp32's ({text})", False, limit
    return None, False, limit


def _along(reference: Curve, losses: Curve, tol: Tolerance, floor: float) -> str | None:
    limit, text = _limit(tol.along_the_way, floor, tol.noise_multiple, "")
    worst = worst_drift(reference, losses, range(len(losses) - 1), limit, tol.absolute)
    return None if worst is None else f"drifts: loss {pct(worst[1])} off fp32's at step {worst[0]} ({text})"


def judge(
    reference: Curve,
    losses: Curve,
    floor: NoiseFloor | None,
    tol: Tolerance = Tolerance(),
    *,
    fp32: Curve | None = None,
) -> Judgement:
    """Whether `losses` agrees with the `reference` (fp32, or `fp32` trained skipping this run's skipped
    steps), given fp32's own spread: the control in `floor` against `fp32` (default: the reference)."""
    end = end_of(reference, losses, floor, fp32)
    if end is None:
        return Judgement("has a final loss that cannot be compared with fp32's")
    problem, limited, limit = _end_problem(end, tol, end.spread or 0.0)
    if problem is not None:
        return Judgement(problem, limited=limited, end=end, limit=limit)
    along = _along(reference, losses, tol, floor_of(floor))
    if along is not None:
        return Judgement(along, end=end, limit=limit)
    leaned = ""
    if _end_problem(end, tol, 0.0)[0] is not None:
        leaned = f"fp32 itself ends {pct(end.spread or 0.0)} apart on this model"
    elif _along(reference, losses, tol, 0.0) is not None:
        leaned = f"fp32 itself varies by {pct(floor_of(floor))} on this model"
    return Judgement(None, leaned_on=leaned, end=end, limit=limit)


def varies(floor: NoiseFloor) -> str:
    """'fp32 itself varies by 9% on this model: ...', with how that was measured."""
    where = "" if floor.rel_diff_max_step is None else f" (step {floor.rel_diff_max_step})"
    end = "non-finite" if floor.rel_diff_final is None else pct(floor.rel_diff_final)
    return (
        f"fp32 itself varies by {pct(floor_of(floor))} on this model: {floor.perturbation}, "
        f"is up to {pct(floor_of(floor))} off the fp32 run{where}, {end} at the end"
    )
