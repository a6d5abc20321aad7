"""A step GradScaler skips is not drift: fp16 is compared with fp32 trained with the same steps skipped.

GradScaler starts at scale 65536; when the scaled gradients overflow it halves the scale and drops
that update. The fp16 curve then lags fp32's by one update, and on a fast-moving model the lag alone
looked like "302% off fp32 at step 3" (the CNN on the H200). The runner trains fp32 once more,
skipping the same optimizer steps, and the verdict judges fp16 against that curve.
"""

from __future__ import annotations

from dataclasses import replace

from precision_check.agreement import agreement
from precision_check.check_report import DtypeRun, Measurements, Report, ScalerHistory, report_from_json
from precision_check.display import to_json
from precision_check.terminal_table import render
from precision_check.verdict import decide, same_skips
from tests.support.precision_measurements import H200, STEPS, measured, recorded, run

# fp32 falls 3% a step: step s has loss 4 * 0.97^s. fp16 skipped step 1, so from step 2 on it is one
# update behind, 3% above fp32 (beyond the 2% final tolerance), plus a 0.1% precision difference.
FP32 = tuple(4.0 * 0.97**s for s in range(STEPS))
LAGGING = tuple(x * 1.001 for x in (FP32[0], FP32[1], *FP32[1:-1]))
SAME_SKIPS = (FP32[0], FP32[1], *FP32[1:-1])


def _fp16(losses: tuple[float, ...], same_skips: tuple[float | None, ...] | None) -> DtypeRun:
    base = run("fp16", 10.3, 620.0)
    reference = FP32 if same_skips is None else same_skips
    final, worst, step = agreement(losses, reference)
    scaler = ScalerHistory((65536.0, 32768.0, *(32768.0,) * (STEPS - 2)), (1,), same_skips)
    return replace(base, losses=losses, scaler=scaler, rel_diff_final=final, rel_diff_max=worst, rel_diff_max_step=step)


def _measured(fp16: DtypeRun) -> Measurements:
    fp32 = replace(run("fp32", 21.0, 1000.0), losses=FP32)
    bf16 = replace(run("bf16", 20.0, 900.0), losses=FP32)  # not faster: the choice is between fp32 and fp16
    return measured(H200, fp32, fp16, bf16)


def test_a_skipped_step_alone_is_not_drift() -> None:
    m = _measured(_fp16(LAGGING, SAME_SKIPS))
    verdict = decide(m)
    assert verdict.dtype == "fp16", verdict
    assert verdict.headline.startswith("fp16 with GradScaler: 2.0x faster than fp32")
    assert "final loss within 0.1%" in verdict.headline
    assert (
        "fp16: GradScaler skipped step 1: inf/nan gradients at its scale, so it lowered the scale and dropped "
        "the update, as it does while it finds its scale; fp16 is compared with fp32 trained with that step "
        "skipped too"
    ) in verdict.reasons


def test_without_the_same_skips_curve_the_lag_reads_as_drift() -> None:
    """A version 2 report (no fp32_same_skips) is judged as before: against fp32 itself."""
    m = _measured(_fp16(LAGGING, None))
    verdict = decide(m)
    assert verdict.dtype == "fp32"
    assert verdict.reasons[0].startswith("fp16 drifts: ")
    assert not any("GradScaler skipped" in reason for reason in verdict.reasons)


def test_real_drift_from_the_same_skips_curve_is_still_caught() -> None:
    drifting = tuple(x * (1.0 if s < STEPS // 2 else 1.3) for s, x in enumerate(SAME_SKIPS))
    verdict = decide(_measured(_fp16(drifting, SAME_SKIPS)))
    assert verdict.dtype == "fp32"
    assert verdict.reasons[0] == "fp16 drifts: final loss (mean of the last 5 steps) 30% off fp32's (tolerance 2%)"


def test_no_skipped_step_no_sentence_and_several_are_listed() -> None:
    fp16 = replace(run("fp16", 10.3, 620.0), scaler=ScalerHistory((65536.0,) * STEPS, (), None))
    assert same_skips(fp16) is None
    several = replace(fp16, scaler=ScalerHistory((65536.0,) * STEPS, tuple(range(7)), SAME_SKIPS))
    assert (same_skips(several) or "").startswith("fp16: GradScaler skipped 7 steps (0, 1, 2, 3, 4, ...): ")
    assert (same_skips(several) or "").endswith("trained with those steps skipped too")


def test_skips_that_are_part_of_an_overflow_get_no_sentence() -> None:
    verdict = decide(recorded("overflow_mlp", "h200"))
    fp16 = recorded("overflow_mlp", "h200").run("fp16")
    assert fp16 is not None
    assert fp16.scaler is not None
    assert fp16.scaler.fp32_same_skips is not None  # this recording predates skipping it for non-finite runs
    assert verdict.reasons[0].startswith("fp16 overflows in `expand` at step 0")
    assert not any("GradScaler skipped" in reason for reason in verdict.reasons)


def test_recorded_h200_cnn_fp16_skipped_step_1_and_agrees_with_fp32_skipping_it() -> None:
    """On the H200 this CNN's fp16 run lost step 1's update; against fp32 it looked 302% off at step 3."""
    m = recorded("cnn", "h200")
    verdict = decide(m)
    assert verdict.dtype == "bf16"
    assert verdict.reasons[0] == "fp16: safe: 1.02x fp32's speed, 44% less memory, final loss within 0.39%"
    assert verdict.reasons[2].startswith("fp16: GradScaler skipped step 1: ")
    fp16, fp32 = m.run("fp16"), m.run("fp32")
    assert fp16 is not None
    assert fp32 is not None
    against_fp32 = agreement(fp16.losses, fp32.losses)
    assert against_fp32[1] is not None
    assert against_fp32[1] > 3.0  # the old comparison: over 300% off, at step 3
    assert against_fp32[2] == 3


def test_the_same_skips_curve_survives_the_json_round_trip() -> None:
    m = _measured(_fp16(LAGGING, (*SAME_SKIPS[:-1], None)))
    report = report_from_json(to_json(Report("x.py:factory", "2026-12-03T00:00:00+00:00", m, decide(m))))
    fp16 = report.measurements.run("fp16")
    assert fp16 is not None
    assert fp16.scaler is not None
    assert fp16.scaler.fp32_same_skips == (*SAME_SKIPS[:-1], None)


def test_the_terminal_says_what_fp16s_delta_is_measured_against() -> None:
    m = _measured(_fp16(LAGGING, SAME_SKIPS))
    printed = render(Report("x.py:factory", "2026-12-03T00:00:00+00:00", m, decide(m)))
    assert (
        "GradScaler scale: 65536 -> 32768; 1 step(s) skipped, so fp16's Δ is against fp32 trained with the same "
        "step(s) skipped"
    ) in printed
    plain = _measured(_fp16(LAGGING, None))
    assert "so fp16's Δ is against" not in render(Report("x.py:factory", "", plain, decide(plain)))


def test_a_scale_driven_below_one_is_printed_as_it_is_not_as_zero() -> None:
    """overflow_mlp on the H200: every fp16 step overflowed and GradScaler halved its scale 50 times."""
    m = recorded("overflow_mlp", "h200")
    printed = render(Report("x.py:factory", "", m, decide(m)))
    assert "GradScaler scale: 32768 -> 5.82e-11" in printed
