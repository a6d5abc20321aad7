"""The verdict is a pure function of the measurements: each case below is a recorded shape of run."""

from __future__ import annotations

from dataclasses import replace

from precision_check.check_report import Compiled, Overflow, Timing, ZeroGrads, report_from_json
from precision_check.verdict import decide
from tests.support.precision_measurements import (
    ATTN,
    H200,
    RECORDED,
    V100,
    healthy_h200,
    measured,
    run,
    with_run,
)


def test_compute_bound_model_gets_bf16_with_its_numbers() -> None:
    verdict = decide(healthy_h200())
    assert verdict.dtype == "bf16"
    assert verdict.headline == "bf16: 2.1x faster than fp32, 38% less memory, final loss within 0.4%"
    assert verdict.numbers["bf16.speedup"] == 2.1


def test_fp16_only_when_clearly_faster_than_bf16() -> None:
    m = with_run(healthy_h200(), run("fp16", 7.0, 620.0, drift=0.003))
    verdict = decide(m)
    assert verdict.dtype == "fp16"
    assert verdict.headline.startswith("fp16 with GradScaler: 3.0x faster than fp32")


def test_fp16_overflow_names_the_module_and_step_and_says_use_bf16() -> None:
    m = with_run(healthy_h200(), run("fp16", 10.3, 620.0, overflows=(ATTN,), nonfinite=(7, 8, 9), skipped=(7, 8, 9)))
    verdict = decide(m)
    assert verdict.dtype == "bf16"
    assert verdict.headline.startswith("fp16 overflows in `layer3.attn` at step 7 (|x| = inf/nan > 65504): use bf16")
    assert "2.1x faster than fp32" in verdict.headline
    assert verdict.numbers["overflow.module"] == "layer3.attn"


def test_range_exceeded_in_fp32_but_finite_in_fp16_does_not_rule_out_fp16() -> None:
    big = Overflow("norm", 0, 1.3e5)  # e.g. a LayerNorm input: autocast keeps it in fp32
    healthy = with_run(healthy_h200(), run("fp16", 7.0, 620.0, drift=0.003))
    verdict = decide(with_run(healthy, replace(run("fp32", 21.0, 1000.0), overflows=(big,))))
    assert verdict.dtype == "fp16"
    assert "`norm` at step 0 (|x| = 1.3e+05 > 65504) is beyond fp16's range in fp32" in verdict.reasons[-1]


def test_range_exceeded_in_fp32_means_fp16_would_overflow_when_fp16_was_not_run() -> None:
    big = Overflow("mlp.up", 0, 1.3e5)
    m = healthy_h200()
    m = replace(m, runs=(replace(m.runs[0], overflows=(big,)), m.runs[2]))
    verdict = decide(m)
    assert verdict.dtype == "bf16"
    assert verdict.headline.startswith("fp16 would overflow in `mlp.up` at step 0 (|x| = 1.3e+05 > 65504): use bf16")


def test_pre_ampere_gets_fp16_with_gradscaler() -> None:
    m = measured(
        V100,
        run("fp32", 40.0, 1000.0),
        run("fp16", 16.0, 640.0, drift=0.002),
        run("bf16", 95.0, 640.0, drift=0.004),  # emulated: slow
    )
    verdict = decide(m)
    assert verdict.dtype == "fp16"
    assert verdict.headline == (
        "fp16 with GradScaler: 2.5x faster than fp32, 36% less memory, final loss within 0.2% "
        "(no native bf16 on Tesla V100-SXM2-16GB)"
    )
    assert "bf16 is not native on Tesla V100-SXM2-16GB (compute capability 7.0; it needs 8.0)" in verdict.reasons


def test_pre_ampere_with_fp16_overflow_stays_in_fp32() -> None:
    m = measured(
        V100,
        run("fp32", 40.0, 1000.0),
        run("fp16", 16.0, 640.0, overflows=(ATTN,), nonfinite=(7,), skipped=(7,)),
        run("bf16", 95.0, 640.0),
    )
    verdict = decide(m)
    assert verdict.dtype == "fp32"
    assert "fp16 overflows in `layer3.attn` at step 7" in verdict.headline
    assert "bf16 is not native on Tesla V100" in verdict.headline


def test_memory_bound_model_is_not_faster_and_stays_in_fp32() -> None:
    m = measured(
        H200,
        run("fp32", 2.00, 300.0),
        run("fp16", 1.95, 280.0, drift=0.001),
        run("bf16", 1.93, 280.0, drift=0.001),
    )
    verdict = decide(m)
    assert verdict.dtype == "fp32"
    assert verdict.headline.startswith("fp32: not faster (bf16 runs at 1.04x fp32's speed): this model is memory-bound")
    assert "at this batch size" in verdict.headline


def test_bf16_drift_falls_back_to_fp16_with_gradscaler() -> None:
    m = with_run(healthy_h200(), run("bf16", 10.0, 620.0, drift=0.06))
    verdict = decide(m)
    assert verdict.dtype == "fp16"
    assert "bf16 drifts: final loss (mean of the last 5 steps) 6% off fp32's (tolerance 2%)" in verdict.reasons
    assert verdict.kind == "faster"


def test_bf16_drift_along_the_way_counts_too() -> None:
    m = with_run(healthy_h200(), run("bf16", 10.0, 620.0, drift=0.004, bump=0.3))
    assert decide(m).reasons[1] == "bf16 drifts: loss 30% off fp32's at step 25 (tolerance 10%)"


def test_a_large_relative_difference_on_a_tiny_loss_is_drift_not_noise() -> None:
    # 4.0 -> 0.01, and bf16 10% above over the last steps: the old rule called 0.001 noise (below 0.5% of the
    # initial loss) and printed "final loss within 10%"; the end is judged on the end.
    fp32 = run("fp32", 21.0, 1000.0, final=0.01)
    bf16 = replace(run("bf16", 10.0, 620.0), losses=(*fp32.losses[:-5], *(1.1 * x for x in fp32.losses[-5:] if x)))
    verdict = decide(measured(H200, fp32, bf16))
    assert verdict.dtype == "fp32"
    assert verdict.kind == "unsafe"
    assert verdict.headline == "fp32: bf16 drifts: final loss (mean of the last 5 steps) 10% off fp32's (tolerance 2%)"
    assert "within" not in verdict.headline


def test_fp16_scaler_skipping_most_steps_is_unsafe() -> None:
    m = with_run(healthy_h200(), run("fp16", 7.0, 620.0, skipped=tuple(range(30))))
    verdict = decide(m)
    assert verdict.dtype == "bf16"
    assert verdict.reasons[0] == "fp16 is unstable: GradScaler skipped 30 of 50 steps (inf/nan gradients)"


def test_underflow_even_with_scaling_rules_out_fp16() -> None:
    zero = ZeroGrads(fp32=0.01, fp16_unscaled=0.6, fp16_scaled=0.3, scale=65536.0)
    m = with_run(healthy_h200(), run("fp16", 7.0, 620.0, zero=zero))
    assert (
        decide(m).reasons[0] == "fp16 underflows: 30% of gradients are zero even with GradScaler's scaling (fp32: 1%)"
    )


def test_a_model_that_diverges_in_fp32_is_not_a_precision_problem() -> None:
    m = with_run(healthy_h200(), run("fp32", 21.0, 1000.0, nonfinite=(12,)))
    verdict = decide(m)
    assert verdict.dtype == "fp32"
    assert "non-finite in fp32 itself from step 12" in verdict.headline


def test_recorded_cpu_run_of_the_overflow_example_says_use_bf16_and_names_expand() -> None:
    report = report_from_json((RECORDED / "overflow_mlp.cpu.json").read_text())
    verdict = decide(report.measurements)
    assert verdict.dtype == "bf16"
    assert verdict.headline.startswith("fp16 would overflow in `expand` at step 0")
    assert "use bf16" in verdict.headline
    assert "on the CPU: no speed or memory evidence, so no dtype is recommended for speed" in verdict.headline
    assert verdict.kind == "numerics-only"


def test_cpu_run_with_bf16_drift_recommends_fp32() -> None:
    report = report_from_json((RECORDED / "overflow_mlp.cpu.json").read_text())
    m = report.measurements
    drifted = replace(m.runs[1], losses=tuple(1.2 * x for x in m.runs[0].losses if x is not None), rel_diff_final=0.2)
    verdict = decide(replace(m, runs=(m.runs[0], drifted)))
    assert verdict.dtype == "fp32"
    assert "bf16 drifts: final loss (mean of the last 5 steps) 20% off fp32's (tolerance 2%)" in verdict.headline
    assert verdict.kind == "unsafe"


def test_compiled_timings_are_reported_alongside() -> None:
    m = healthy_h200()
    timing = Timing(5.0, 4.9, 5.2, 20, "cuda-events")
    fast = Timing(2.0, 1.9, 2.1, 20, "cuda-events")
    runs = tuple(replace(r, compiled=Compiled(30.0, timing if r.dtype == "fp32" else fast)) for r in m.runs)
    verdict = decide(replace(m, runs=runs, compile=True))
    assert verdict.dtype == "bf16"
    assert "with torch.compile: bf16 runs at 2.50x compiled fp32's speed" in verdict.reasons
    assert verdict.numbers["bf16.compiled_speedup"] == 2.5
