"""The end of training judged on the end (stalls are not noise): a precision-limited dtype, late underflow, non-finite
gradients, and a control spread inflated by tiny losses, each with the verdict it must get."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from precision_check.agreement import noise_floor, worst_drift
from precision_check.check_report import DtypeRun, GradFault, Measurements, NoiseFloor
from precision_check.problems import DEFAULT_TOLERANCES, judgement
from precision_check.verdict import decide
from tests.support.precision_measurements import H200, STEPS, healthy_h200, measured, recorded, run, with_run


def falling(final: float, start: float = 100.0) -> tuple[float | None, ...]:
    """A loss falling geometrically from `start` to `final` by step STEPS - 10, then flat there: a regression
    fitted exactly, converged."""
    last = STEPS - 10
    return tuple(start * (final / start) ** (min(step, last) / last) for step in range(STEPS))


def stalling(level: float) -> tuple[float | None, ...]:
    """fp32's curve (down to 8.3e-6) until it reaches `level`, then staying there: a precision limit."""
    return tuple(max(x, level) for x in falling(8.3e-6) if x is not None)


def _with_losses(r: DtypeRun, losses: tuple[float | None, ...]) -> DtypeRun:
    return replace(r, losses=losses)


def regression(bf16_end: float = 5.1e-4, fp16_end: float | None = None, control_end: float = 8.3e-6) -> Measurements:
    """fp32 down to 8.3e-6 (the issue's H200 numbers), its control ending at `control_end`; bf16 stalls at
    `bf16_end`; fp16 (when given) stalls at `fp16_end`."""
    fp32 = _with_losses(run("fp32", 21.0, 1000.0), falling(8.3e-6))
    runs = [fp32, _with_losses(run("bf16", 10.0, 620.0), stalling(bf16_end))]
    if fp16_end is not None:
        runs.insert(1, _with_losses(run("fp16", 10.3, 620.0, skipped=()), stalling(fp16_end)))
    control = tuple(x * control_end / 8.3e-6 if i >= STEPS - 5 else x for i, x in enumerate(falling(8.3e-6)) if x)
    return replace(measured(H200, *runs), noise_floor=noise_floor(control, fp32.losses))


def test_the_old_rule_called_the_stalled_loss_noise() -> None:
    """Why the old rule failed: every difference at the end is below 0.5% of the initial loss, so it was 'noise'."""
    m = regression()
    fp32, bf16 = m.run("fp32"), m.run("bf16")
    assert fp32 is not None
    assert bf16 is not None
    assert worst_drift(fp32.losses, bf16.losses, range(STEPS), 0.02, 0.005) is None


def test_a_dtype_that_stalls_far_above_fp32_is_precision_limited_and_never_recommended() -> None:
    verdict = decide(regression())
    assert verdict.kind == "precision-limited"
    assert verdict.dtype == "fp32"
    assert verdict.headline == (
        "fp32: bf16 is precision-limited on this model: bf16's loss stalls at 0.00051 over the last 5 steps, "
        "61x fp32's 8.3e-06 (fp32's own spread at the end: 0%); train in fp32 (tf32 and fp16 keep 10 mantissa "
        "bits to bf16's 7: `--dtypes fp32,tf32,fp16` shows whether they reach fp32's loss)"
    )
    assert "within" not in verdict.headline
    assert verdict.numbers["bf16.end_loss"] == pytest.approx(5.1e-4)


def test_precision_limited_bf16_with_fp16_that_fits_recommends_fp16_with_gradscaler() -> None:
    verdict = decide(regression(fp16_end=8.4e-6))  # fp16 keeps 10 bits: it reaches fp32's loss here
    assert verdict.kind == "precision-limited"
    assert verdict.dtype == "fp16"
    assert verdict.headline.startswith("fp16 with GradScaler: bf16 is precision-limited on this model: bf16's loss")
    assert verdict.headline.endswith(
        "; fp16 with GradScaler reaches fp32's loss (2.0x faster than fp32, 38% less memory, final loss within 1.2%)"
    )


def test_both_half_precisions_limited_means_fp32_with_no_tf32_hint() -> None:
    verdict = decide(regression(fp16_end=2e-4))
    assert (verdict.kind, verdict.dtype) == ("precision-limited", "fp32")
    assert verdict.headline.startswith("fp32: fp16 and bf16 are precision-limited on this model")
    assert verdict.headline.endswith("; train in fp32")  # tf32 rounds like fp16: no hint that it might do


def test_a_loss_somewhat_above_fp32_is_drift_not_a_precision_limit() -> None:
    verdict = decide(regression(bf16_end=8.3e-6 * 1.3))
    assert verdict.kind in {"not-faster", "unsafe"}
    reason = next(r for r in verdict.reasons if r.startswith("bf16"))
    assert reason == "bf16 drifts: final loss (mean of the last 5 steps) 30% off fp32's (tolerance 2%)"


def test_a_control_spread_inflated_by_tiny_losses_hides_no_precision_limit() -> None:
    # fp32 and its control both reach the bottom, 3x apart there (200%: rounding-level noise on a loss of 1e-5);
    # bf16 stalls 60x above: far beyond 10x that spread.
    verdict = decide(regression(control_end=2.5e-5))
    assert verdict.kind == "precision-limited"
    assert "(fp32's own spread at the end: 201%)" in verdict.headline
    # within 10x the spread it is not called a limit, only judged against 3x the spread
    wide = decide(regression(bf16_end=4e-5, control_end=2.5e-5))
    assert next(r for r in wide.reasons if r.startswith("bf16")).startswith("bf16: safe:")


def test_a_control_that_wanders_on_tiny_losses_along_the_way_does_not_widen_the_end() -> None:
    # The control is 50x off fp32 at one step where the loss is tiny (the old floor: 5000%, so 3x that accepted
    # anything); at the end it agrees to 0.1%. bf16 10% off at the end is drift against 2%.
    m = healthy_h200()
    fp32 = m.run("fp32")
    assert fp32 is not None
    tiny = (*fp32.losses[:10], 1e-6, *fp32.losses[11:])
    control = tuple(None if x is None else x * (50.0 if i == 10 else 1.001) for i, x in enumerate(tiny))
    fp32 = replace(fp32, losses=tiny)
    bf16 = replace(run("bf16", 10.0, 620.0), losses=tuple(None if x is None else 1.1 * x for x in tiny))
    m = replace(m, runs=(fp32, bf16), noise_floor=noise_floor(control, tiny))
    assert m.noise_floor is not None
    assert (m.noise_floor.rel_diff_max or 0) > 40
    verdict = decide(m)
    assert verdict.dtype == "fp32"
    assert "bf16 drifts: final loss (mean of the last 5 steps) 10% off fp32's (tolerance 2%)" in verdict.headline


def test_late_underflow_rules_the_dtype_out() -> None:
    late = tuple(0.01 if step < STEPS - 5 else 0.4 for step in range(STEPS))
    steady = (0.01,) * STEPS
    m = healthy_h200()
    m = replace(m, runs=tuple(replace(r, zero_grad_fractions=late if r.dtype == "fp16" else steady) for r in m.runs))
    verdict = decide(m)
    assert verdict.dtype == "bf16"
    assert verdict.reasons[0] == (
        "fp16 underflows late in training: 40% of gradients are zero even with GradScaler's scaling over the last "
        "5 steps (fp32: 1%)"
    )
    assert verdict.numbers["fp16.zero_grads.late"] == pytest.approx(0.4)
    early = tuple(0.4 if step < 5 else 0.01 for step in range(STEPS))  # early zeros alone: not late underflow
    m = replace(m, runs=tuple(replace(r, zero_grad_fractions=early if r.dtype == "fp16" else steady) for r in m.runs))
    assert decide(m).reasons[0].startswith("fp16: safe:")


def test_a_non_finite_gradient_in_the_backward_pass_names_the_parameter() -> None:
    bf16 = replace(run("bf16", 10.0, 620.0), nonfinite_grads=(GradFault("head.weight", 12), GradFault("emb", 14)))
    verdict = decide(with_run(healthy_h200(), bf16))
    assert verdict.dtype == "fp16"
    assert "bf16 has a non-finite gradient in `head.weight` from step 12 (2 parameters) (the backward pass)" in (
        verdict.reasons
    )
    fp32 = replace(run("fp32", 21.0, 1000.0), nonfinite_grads=(GradFault("w", 3),))
    broken = decide(with_run(healthy_h200(), fp32))
    assert broken.kind == "model-unstable"
    assert broken.headline.startswith("fp32: fp32 itself has a non-finite gradient in `w` from step 3")


def _within(text: str) -> float | None:
    found = re.search(r"within ([0-9.e+-]+)%", text)
    return None if found is None else float(found.group(1)) / 100


CASES = [
    ("healthy", healthy_h200()),
    ("regression", regression()),
    ("regression+fp16", regression(fp16_end=8.4e-6)),
    ("inflated", regression(bf16_end=4e-5, control_end=2.5e-5)),
    *((f"{name}.cpu", recorded(name)) for name in ("chaotic_transformer", "transformer", "cnn", "linear_regression")),
    *(
        (f"{name}.h200", recorded(name, "h200"))
        for name in ("transformer", "cnn", "cnn-small", "overflow_mlp", "linear_regression")
    ),
]


@pytest.mark.parametrize(("name", "m"), CASES, ids=[name for name, _ in CASES])
def test_within_x_is_never_above_the_tolerance_it_was_judged_by(name: str, m: Measurements) -> None:
    verdict = decide(m)
    for text in (verdict.headline, *verdict.reasons):
        shown = _within(text)
        if shown is None or not text.startswith(tuple(f"{r.dtype}: safe" for r in m.runs)):
            continue
        r = next(r for r in m.runs if text.startswith(f"{r.dtype}: safe"))
        assert shown <= judgement(m, r, DEFAULT_TOLERANCES).limit * 1.01, text


def test_recorded_cpu_run_of_the_linear_regression_is_precision_limited() -> None:
    m = recorded("linear_regression")
    verdict = decide(m)
    assert (verdict.kind, verdict.dtype) == ("precision-limited", "fp32")
    assert verdict.headline.startswith("fp32: bf16 is precision-limited on this model: bf16's loss stalls at ")
    assert "on the CPU: no speed or memory evidence, so no dtype is recommended for speed" in verdict.headline
    assert not any(r.startswith("bf16: safe") for r in verdict.reasons)
    fp32, bf16 = m.run("fp32"), m.run("bf16")
    assert fp32 is not None
    assert bf16 is not None
    assert (fp32.final_loss or 1.0) < 1e-5  # fp32 fits it ...
    assert (bf16.final_loss or 0.0) > 1e-4  # ... bf16 stalls
    assert isinstance(m.noise_floor, NoiseFloor)


def test_a_safe_dtype_that_is_not_faster_is_named_beside_the_limited_one() -> None:
    m = regression(fp16_end=8.4e-6)
    fp16 = m.run("fp16")
    assert fp16 is not None
    timing = replace(fp16.timing, median_ms=20.0) if fp16.timing else None
    verdict = decide(with_run(m, replace(fp16, timing=timing)))  # fp16 reaches fp32's loss, at fp32's speed
    assert (verdict.kind, verdict.dtype) == ("precision-limited", "fp32")
    assert verdict.headline.endswith("; train in fp32 (fp16 with GradScaler reaches fp32's loss, but is not faster)")


def test_recorded_h200_run_of_the_linear_regression_is_precision_limited() -> None:
    """The H200 run of 2026-12-04 (torch 2.11.0+cu130): fp16 and bf16 stall far above fp32's loss; tf32 reaches it."""
    m = recorded("linear_regression", "h200")
    verdict = decide(m)
    assert (verdict.kind, verdict.dtype) == ("precision-limited", "tf32")
    assert verdict.headline.startswith("tf32: fp16 and bf16 are precision-limited on this model")
    assert not any(r.startswith(("bf16: safe", "fp16: safe")) for r in verdict.reasons)
    fp32, bf16 = m.run("fp32"), m.run("bf16")
    assert fp32 is not None
    assert bf16 is not None
    assert (fp32.final_loss or 1.0) < 1e-6
    assert (bf16.final_loss or 0.0) > 1000 * (fp32.final_loss or 1.0)
