"""Agreement with fp32, judged against fp32's own noise floor: from recorded CPU curves and small made-up ones."""

from __future__ import annotations

import pytest

from precision_check.agreement import Tolerance, agreement, judge, noise_floor, pct, varies
from precision_check.check_report import NoiseFloor
from tests.support.precision_measurements import recorded


def test_agreement_final_and_worst_step_skip_non_finite_steps() -> None:
    final, worst, step = agreement([1.0, None, 2.2, 1.01], [1.0, 1.0, 2.0, 1.0])
    assert final == pytest.approx(0.01)
    assert worst == pytest.approx(0.1)
    assert step == 2
    assert agreement([1.0, None], [1.0, 1.0])[0] is None


def test_noise_floor_is_the_controls_agreement_and_keeps_its_non_finite_steps() -> None:
    floor = noise_floor([1.0, 1.1, None, 0.5], [1.0, 1.0, 1.0, 0.4])
    assert floor.losses == (1.0, 1.1, None, 0.5)
    assert floor.nonfinite_steps == (2,)
    assert floor.rel_diff_final == pytest.approx(0.25)
    assert floor.rel_diff_max == pytest.approx(0.25)
    assert floor.rel_diff_max_step == 3


def test_the_recorded_floors_recompute_from_their_curves() -> None:
    for name in ("chaotic_transformer", "transformer", "cnn"):
        m = recorded(name)
        fp32 = m.run("fp32")
        assert fp32 is not None
        assert m.noise_floor is not None
        assert noise_floor(m.noise_floor.losses, fp32.losses) == m.noise_floor


def test_chaotic_recording_bf16_drifts_past_the_fixed_tolerance_but_within_the_floor() -> None:
    m = recorded("chaotic_transformer")
    fp32, bf16, floor = m.run("fp32"), m.run("bf16"), m.noise_floor
    assert fp32 is not None
    assert bf16 is not None
    assert floor is not None
    assert floor.rel_diff_max is not None
    assert floor.rel_diff_max > 0.3  # fp32 itself: up to 44% apart on a bf16-rounding-sized nudge
    without = judge(fp32.losses, bf16.losses, None)
    assert without.problem == "drifts: final loss (mean of the last 5 steps) 5.5% off fp32's (tolerance 2%)"
    with_floor = judge(fp32.losses, bf16.losses, floor)
    assert with_floor.problem is None
    assert with_floor.needs_floor


def test_steady_recording_has_a_tiny_floor_that_hides_no_real_drift() -> None:
    m = recorded("transformer")
    fp32, floor = m.run("fp32"), m.noise_floor
    assert fp32 is not None
    assert floor is not None
    assert floor.rel_diff_max is not None
    assert floor.rel_diff_max < 1e-3
    drifted = tuple(None if x is None else x * 1.05 for x in fp32.losses)
    assert judge(fp32.losses, drifted, floor).problem == (
        "drifts: final loss (mean of the last 5 steps) 5% off fp32's (tolerance 2%)"
    )
    bf16 = m.run("bf16")
    assert bf16 is not None
    with_floor, without = judge(fp32.losses, bf16.losses, floor), judge(fp32.losses, bf16.losses, None)
    assert (with_floor.problem, with_floor.needs_floor) == (without.problem, without.needs_floor) == (None, False)


def test_drift_beyond_the_widened_tolerance_names_the_floor() -> None:
    m = recorded("chaotic_transformer")
    fp32, floor = m.run("fp32"), m.noise_floor
    assert fp32 is not None
    assert floor is not None
    broken = tuple(None if x is None else x * 3.0 for x in fp32.losses)  # 200% off
    judged = judge(fp32.losses, broken, floor)
    assert judged.problem == (
        "drifts: final loss (mean of the last 5 steps) 200% off fp32's "
        "(tolerance 64%: 3x fp32's own variation of 21% at the end)"
    )
    assert not judged.limited  # 3x on a model whose fp32 ends 21% apart is drift, not a precision limit


def test_along_the_way_and_the_multiple_are_tolerances() -> None:
    reference = [4.0, 3.0, 2.0, 1.0]
    bumped = [4.0, 3.6, 2.0, 1.0]  # 20% off at step 1
    floor = NoiseFloor((4.0, 3.15, 2.0, 1.0), (), 0.0, 0.05, 1)  # fp32 itself 5% off at step 1
    assert judge(reference, bumped, None).problem == "drifts: loss 20% off fp32's at step 1 (tolerance 10%)"
    assert judge(reference, bumped, floor).problem == (
        "drifts: loss 20% off fp32's at step 1 (tolerance 15%: 3x fp32's own variation of 5%)"
    )
    assert judge(reference, bumped, floor, Tolerance(noise_multiple=5.0)).problem is None


def test_the_end_is_never_scaled_by_the_initial_loss() -> None:
    # 4.0 -> 0.01: 10% of 0.01 is 0.001, far below 0.5% of the initial loss (0.02); it is drift all the same.
    assert (
        judge([4.0, 1.0, 0.01], [4.0, 1.0, 0.011], None).problem == "drifts: final loss 10% off fp32's (tolerance 2%)"
    )


def test_along_the_way_differences_below_the_absolute_floor_are_noise() -> None:
    reference = [4.0, 0.01, *[1.0] * 8]  # step 1: 10% off, but 0.001 in absolute terms, below 0.5% of 4.0
    assert judge(reference, [4.0, 0.011, *[1.0] * 8], None).problem is None
    assert judge(reference, [4.0, 0.5, *[1.0] * 8], None).problem == (
        "drifts: loss 4900% off fp32's at step 1 (tolerance 10%)"
    )


def test_pct_and_the_floor_sentence() -> None:
    assert (pct(0.004), pct(0.27), pct(2e-5)) == ("0.4%", "27%", "0.002%")
    floor = NoiseFloor((1.0,), (), 0.093, 0.437, 40, "a control")
    assert varies(floor) == (
        "fp32 itself varies by 44% on this model: a control, is up to 44% off the fp32 run (step 40), 9.3% at the end"
    )
