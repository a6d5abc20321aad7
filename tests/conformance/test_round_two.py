"""Issue 38's fixes to the suite, each shown failing on a broken input: the deterministic cuRAND histogram, the
cuDNN attention backend refused under deterministic algorithms (a named skip), the short-training tolerance, the
bf16 PREMUL_SUM judgement."""

from __future__ import annotations

import warnings

import pytest
import torch

with warnings.catch_warnings():  # the suite registers its cpu/gpu markers in its own conftest, not here
    warnings.simplefilter("ignore", pytest.PytestUnknownMarkWarning)
    from conformance.support.workloads.collectives import judge_bf16_premul
    from conformance.test_amp import TRAINING_RELATIVE_TOLERANCE, training_drift_problem
    from conformance.test_sdpa import DETERMINISTIC_REFUSAL
    from conformance.test_smoke import histogram, uniform_statistics

FAULT_CONTROL_SKIP = "torch.use_deterministic_algorithms(True)"  # what fault_coverage's control looks for


def test_the_histogram_is_histc_and_runs_under_deterministic_algorithms() -> None:
    x = torch.rand(100_000, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    x[:3] = torch.tensor([1.0, -0.5, 1.5], dtype=torch.float64)  # histc keeps 1.0 in the last bin, drops the rest
    assert torch.equal(histogram(x, 64).double(), torch.histc(x, bins=64, min=0.0, max=1.0))
    torch.use_deterministic_algorithms(True)
    try:
        samples = torch.rand(1 << 18, generator=torch.Generator().manual_seed(5))
        good = {s.name: s.ok for s in uniform_statistics(samples)}
        skewed = {s.name: s.ok for s in uniform_statistics(torch.rand(1 << 18).pow(1.3))}
    finally:
        torch.use_deterministic_algorithms(False)
    assert all(good.values()), good
    assert not skewed["uniform_chi2_64_bins"]  # the histogram still sees a bent generator


def test_the_deterministic_refusal_names_the_setting_the_control_looks_for() -> None:
    assert FAULT_CONTROL_SKIP in DETERMINISTIC_REFUSAL
    assert "cuDNN" in DETERMINISTIC_REFUSAL


def test_the_training_tolerance_is_twice_the_healthy_drift_and_fails_what_the_old_one_passed() -> None:
    assert training_drift_problem("fp16", 0.0174) is None
    assert training_drift_problem("bf16", 0.0707) is None
    for mode, old_bound in (("fp16", 0.10), ("bf16", 0.25)):
        drifted = (TRAINING_RELATIVE_TOLERANCE[mode] + old_bound) / 2  # passed the old bound
        problem = training_drift_problem(mode, drifted)
        assert problem is not None
        assert "twice the healthy drift" in problem
    assert training_drift_problem("fp16", float("nan")) is not None


def test_bf16_premul_sum_names_each_outcome() -> None:
    before = torch.arange(8, dtype=torch.bfloat16)
    expected = before * 3
    assert judge_bf16_premul(expected.clone(), expected, before)[0] == "exact"
    outcome, note = judge_bf16_premul(torch.zeros(8, dtype=torch.bfloat16), expected, before)
    assert outcome == "all_zero"
    assert "read as a bf16" in note
    assert judge_bf16_premul(before.clone(), expected, before)[0] == "unchanged"  # collectives do nothing
    assert judge_bf16_premul(expected * 2, expected, before)[0] == "wrong"
