"""The verdict under fp32's noise floor, and on the runs recorded on an H200: a chaotic model is not blamed on
precision, real problems are still caught, and the recorded H200 runs give their numbers (test_verdict.py holds the
rest of the verdict's cases)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from precision_check.verdict import decide
from tests.support.precision_measurements import (
    ATTN,
    H200,
    V100,
    healthy_h200,
    on_gpu,
    recorded,
    run,
    with_floor,
    with_run,
)

# fp32's noise floor: a chaotic model is not blamed on precision; real problems are still caught.

CHAOTIC_MS = {"fp32": 40.0, "fp16": 16.0, "bf16": 15.0}
CHAOTIC_MIB = {"fp32": 1000.0, "fp16": 640.0, "bf16": 640.0}


def test_recorded_chaotic_model_is_not_blamed_on_precision() -> None:
    m = recorded("chaotic_transformer")  # a real CPU run: fp32 itself moves 44% on a bf16-rounding nudge
    verdict = decide(m)
    assert verdict.dtype == "bf16"
    assert verdict.headline.startswith(
        "bf16 is safe in numerics on this model: final loss within 5.5% (fp32 itself ends 21% apart on this model). "
        "Over 50 steps on the CPU: no speed or memory evidence"
    )
    assert any(r.startswith("fp32 itself varies by 44% on this model: a second fp32 run") for r in verdict.reasons)
    assert m.noise_floor is not None
    assert verdict.numbers["fp32.noise_floor"] == m.noise_floor.rel_diff_max
    # Without the floor the same curves blame precision: the floor is what changes the verdict.
    blamed = decide(replace(m, noise_floor=None))
    assert blamed.dtype == "fp32"
    assert "bf16 drifts: final loss (mean of the last 5 steps) 5.5% off fp32's (tolerance 2%)" in blamed.headline


def test_recorded_chaotic_model_on_an_h200_picks_on_speed_with_the_floor_named() -> None:
    verdict = decide(on_gpu(recorded("chaotic_transformer"), H200, CHAOTIC_MS, CHAOTIC_MIB))
    assert verdict.dtype == "bf16"
    assert verdict.headline == (
        "bf16: 2.7x faster than fp32, 36% less memory, final loss within 5.5% "
        "(fp32 itself ends 21% apart on this model)"
    )
    assert "fp16: safe: 2.5x faster than fp32, 36% less memory, final loss within 14%" in verdict.reasons[0]


def test_pre_ampere_chaotic_model_gets_fp16_with_gradscaler() -> None:
    verdict = decide(on_gpu(recorded("chaotic_transformer"), V100, CHAOTIC_MS | {"bf16": 95.0}, CHAOTIC_MIB))
    assert verdict.dtype == "fp16"
    assert verdict.headline.startswith("fp16 with GradScaler: 2.5x faster than fp32, 36% less memory")
    assert verdict.headline.endswith(
        "(fp32 itself ends 21% apart on this model) (no native bf16 on Tesla V100-SXM2-16GB)"
    )


def test_pre_ampere_steady_recording_gets_fp16_with_gradscaler() -> None:
    verdict = decide(on_gpu(recorded("transformer"), V100, CHAOTIC_MS | {"bf16": 95.0}, CHAOTIC_MIB))
    assert verdict.dtype == "fp16"
    assert verdict.headline == (
        "fp16 with GradScaler: 2.5x faster than fp32, 36% less memory, final loss within 5.9e-05% "
        "(no native bf16 on Tesla V100-SXM2-16GB)"
    )
    assert not any("fp32 itself varies" in r for r in verdict.reasons)


def test_real_fp16_overflow_is_caught_whatever_the_floor() -> None:
    chaotic = on_gpu(recorded("chaotic_transformer"), H200, CHAOTIC_MS, CHAOTIC_MIB)
    fp16 = chaotic.run("fp16")
    assert fp16 is not None
    verdict = decide(with_run(chaotic, replace(fp16, overflows=(ATTN,))))
    assert verdict.dtype == "bf16"
    assert verdict.headline.startswith("fp16 overflows in `layer3.attn` at step 7 (|x| = inf/nan > 65504): use bf16")
    assert verdict.reasons[0] == "fp16 overflows in `layer3.attn` at step 7 (|x| = inf/nan > 65504)"


def test_recorded_real_fp16_overflow_of_the_example_says_use_bf16() -> None:
    m = recorded("overflow_mlp.fp16")
    verdict = decide(m)
    assert verdict.dtype == "bf16"
    assert verdict.headline.startswith(
        "fp16 overflows in `expand` at step 0 (|x| = inf/nan > 65504): for half precision use bf16"
    )
    assert m.noise_floor is not None
    assert m.noise_floor.rel_diff_max is not None
    assert m.noise_floor.rel_diff_max < 0.01


def test_a_small_floor_changes_nothing_and_is_not_mentioned() -> None:
    verdict = decide(with_floor(healthy_h200(), 0.001))
    assert verdict.headline == "bf16: 2.1x faster than fp32, 38% less memory, final loss within 0.4%"
    assert not any("fp32 itself varies" in r for r in verdict.reasons)
    assert verdict.numbers["fp32.noise_floor"] == pytest.approx(0.001)


def test_drift_beyond_the_floor_is_still_blamed_and_the_floor_is_named() -> None:
    m = with_floor(with_run(healthy_h200(), run("bf16", 10.0, 620.0, drift=0.06)), 0.01)
    verdict = decide(m)
    assert verdict.dtype == "fp16"
    assert (
        "bf16 drifts: final loss (mean of the last 5 steps) 6% off fp32's (tolerance 3%: 3x fp32's own variation "
        "of 1% at the end)"
    ) in verdict.reasons


def test_drift_within_the_floor_is_accepted_and_the_headline_says_why() -> None:
    m = with_floor(with_run(healthy_h200(), run("bf16", 10.0, 620.0, drift=0.06)), 0.03)
    verdict = decide(m)
    assert verdict.dtype == "bf16"
    assert verdict.headline == (
        "bf16: 2.1x faster than fp32, 38% less memory, final loss within 6% (fp32 itself ends 3% apart on this model)"
    )
    assert any(r.startswith("fp32 itself varies by 3% on this model") for r in verdict.reasons)


def test_a_noisy_but_steady_recording_does_not_mention_the_floor() -> None:
    verdict = decide(recorded("cnn"))  # fp32 itself 2.8% apart (batch norm, small batch), bf16 well within 2%
    assert verdict.dtype == "bf16"
    assert "fp32 itself varies" not in verdict.headline
    assert not any("fp32 itself varies" in r for r in verdict.reasons)


def test_a_control_that_goes_non_finite_means_fix_the_model_first() -> None:
    verdict = decide(with_floor(healthy_h200(), 0.2, nonfinite=(30, 31)))
    assert verdict.dtype == "fp32"
    assert verdict.headline.startswith("fp32: the model is on the edge of diverging in fp32 itself: a second fp32 run")
    assert "non-finite loss from step 30" in verdict.headline


# Real H200 runs (gpu/precision-check-examples.sh, 2026-12-03, torch 2.11.0+cu130):
# the verdicts recomputed from them.


def test_recorded_h200_transformer_recommends_bf16_with_its_numbers() -> None:
    verdict = decide(recorded("transformer", "h200"))
    assert verdict.dtype == "bf16"
    assert verdict.headline == "bf16: 6.0x faster than fp32, 35% less memory, final loss within 0.0033%"
    assert "tf32: safe: 3.0x faster than fp32, 0.026% less memory, final loss within 0.00013%" in verdict.reasons


def test_recorded_h200_overflow_mlp_names_the_layer_and_says_bf16() -> None:
    m = recorded("overflow_mlp", "h200")
    fp16 = next(r for r in m.runs if r.dtype == "fp16")
    assert len(fp16.nonfinite_steps) == 50  # every fp16 step overflowed; GradScaler skipped them all
    verdict = decide(m)
    assert verdict.dtype == "bf16"
    assert verdict.headline.startswith("fp16 overflows in `expand` at step 0 (|x| = inf/nan > 65504): use bf16 (2.9x")


def test_recorded_h200_small_cnn_is_not_faster_and_stays_in_fp32() -> None:
    verdict = decide(recorded("cnn-small", "h200"))
    assert verdict.dtype == "fp32"
    assert verdict.headline.startswith("fp32: not faster (bf16 runs at 0.89x fp32's speed)")


def test_recorded_h200_compiled_transformer_reports_the_compiled_speedup() -> None:
    verdict = decide(recorded("transformer-compile", "h200"))
    assert verdict.dtype == "bf16"
    assert "with torch.compile: bf16 runs at 7.60x compiled fp32's speed" in verdict.reasons
