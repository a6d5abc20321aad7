"""Every new bound, shown passing on the H200's numbers and failing on a broken input (pure, no GPU)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from conformance.support.expectations.bounds import (
    THROUGHPUT_FLOOR,
    amp_memory_gate,
    amp_speedup_gate,
    busbw_gate,
    fp32_ieee_error_gate,
    fp32_kernel_gate,
    scaled_gradient_gate,
    throughput_gate,
)
from conformance.support.expectations.measured_floors import tighter
from conformance.support.probes import allocator
from conformance.support.workloads.collectives import allreduce_expected, allreduce_inputs
from pytorch_cuda_contract.metrics import build_metric

# evidence/gpu-sessions/h200-2026-12-04/conformance-results.json (torch 2.11 + CUDA 13.0, one H200)
H200 = {"gemm.fp16": 751.0, "gemm.tf32": 406.9, "x_fp16": 14.67, "x_bf16": 15.14, "conv.fp32": 43.5, "sdpa.fp32": 32.8}
H200_AMP = {"fp16": 6.46, "bf16": 6.87}
# fp32 kernels' normalized error against float64, IEEE vs TF32 (H100, torch 2.11 + CUDA 13.0; the GEMM: H200)
IEEE_ERROR = {"sdpa": 5.7e-7, "sdpa_math": 4.0e-7, "conv": 4.2e-7, "gemm": 1.15e-6}
TF32_ERROR = {"sdpa": 4.2e-4, "conv": 2.9e-4, "gemm": 2.94e-4}


def test_gemm_throughput_has_a_floor_and_a_datasheet_ceiling() -> None:
    gate = throughput_gate(989.4, THROUGHPUT_FLOOR["fp16"])
    assert gate.violation(H200["gemm.fp16"]) is None
    assert "below" in str(gate.violation(300.0))  # no tensor cores / throttled
    assert "above" in str(gate.violation(1300.0))  # broken timing: faster than the silicon
    assert "not a number" in str(gate.violation(float("nan")))
    assert gate.metric_fields() == {
        "bound": pytest.approx(593.64),
        "bound_kind": "min",
        "ceiling": pytest.approx(1137.81),
    }
    assert throughput_gate(None, 0.6).metric_fields() == {"informational": True}


@pytest.mark.parametrize("mode", ["fp16", "bf16"])
def test_amp_speedup_is_bounded_by_the_same_runs_gemm_ratio(mode: str) -> None:
    gate = amp_speedup_gate(H200[f"x_{mode}"], tensor_cores=True)
    assert gate.violation(H200_AMP[mode]) is None
    assert gate.violation(1.05) is not None  # autocast does not reach the tensor cores: about 1x
    assert gate.violation(2.5) is not None  # the old "> 1.0x" gate passed this
    assert gate.violation(30.0) is not None  # faster than the GEMMs allow: the fp32 step was slowed
    assert amp_speedup_gate(None, tensor_cores=True).lower == 1.0
    assert amp_speedup_gate(14.4, tensor_cores=False).metric_fields() == {"informational": True}


def test_amp_memory_saving_is_gated() -> None:
    gate = amp_memory_gate(tensor_cores=True)
    assert gate.violation(31.46) is None  # every committed run of both cards
    assert gate.violation(0.02) is not None  # autocast not applied: activations stay fp32
    assert gate.violation(31.46 / 2) is not None  # issue 52: a saving halved passed the old 15 % floor
    assert 31.46 / 2 > 15.0


def test_busbw_is_gated_above_zero() -> None:
    gate = busbw_gate()
    assert gate.violation(0.4) is not None  # the old "busbw > 0" passed this
    assert gate.violation(350.0) is None


@pytest.mark.parametrize("kernel", ["conv.fp32", "sdpa.fp32"])
def test_fp32_conv_and_sdpa_fail_when_tf32_is_forced(kernel: str) -> None:
    allowance = 2.25 if kernel == "conv.fp32" else 1.0
    gate = fp32_kernel_gate("NVIDIA H200", (9, 0), H200["gemm.tf32"], None, allowance)
    assert gate.violation(H200[kernel]) is None
    assert gate.violation(300.0) is not None  # TF32 tensor cores: several times the fp32 datasheet peak
    # outside the peak table the measured TF32 GEMM bounds it: 406.9 / 3.7 = 110 TFLOP/s
    unknown = fp32_kernel_gate("NVIDIA H100 Future", (9, 0), H200["gemm.tf32"], None, allowance)
    assert unknown.upper is not None
    assert unknown.violation(H200[kernel]) is None
    assert unknown.violation(300.0) is not None


@pytest.mark.parametrize("kernel", ["sdpa", "conv"])
def test_fp32_error_band_passes_ieee_and_fails_tf32(kernel: str) -> None:
    gate = fp32_ieee_error_gate(kernel)
    for ieee in IEEE_ERROR.values():
        assert gate.violation(ieee) is None
    for tf32 in (*TF32_ERROR.values(), 1e-4, 1e-3):
        assert "above" in str(gate.violation(tf32))  # TF32 forced into the kernel
    assert "not a number" in str(gate.violation(float("nan")))
    assert gate.metric_fields() == {"bound": 1e-5, "bound_kind": "max"}
    assert kernel in gate.why
    assert "informational" not in build_metric(TF32_ERROR[kernel], "rel", gate.metric_fields())


def test_fp32_kernel_floor_needs_a_datasheet() -> None:
    gate = fp32_kernel_gate("NVIDIA H200", (9, 0), 399.6, 0.25)
    assert gate.lower == pytest.approx(16.75)
    assert gate.violation(5.0) is not None
    assert fp32_kernel_gate("Radeon", (0, 0), None, 0.25).metric_fields() == {"informational": True}


def test_a_metric_without_a_bound_is_informational() -> None:
    assert build_metric(3.0, "s", {})["informational"] is True
    bounded = build_metric(3.0, "x", {"bound": 1.0, "bound_kind": "min"})
    assert "informational" not in bounded
    assert "informational" not in build_metric("cudnn", "backend", {})
    with pytest.raises(ValueError, match="not informational"):
        build_metric(3.0, "x", {"bound": 1.0, "bound_kind": "min", "informational": True})


def test_one_rank_premul_sum_reference_transforms_the_input() -> None:
    cpu = torch.device("cpu")
    inputs = allreduce_inputs(0, 64, cpu).double()
    assert torch.equal(allreduce_expected("premul_sum", 64, 1, cpu), 3.0 * inputs)
    assert torch.equal(allreduce_expected("sum", 64, 1, cpu), inputs)
    two = allreduce_expected("avg", 64, 2, cpu)
    assert torch.equal(two, inputs + 0.5)  # (x + (x + 1)) / 2


def _fake_torch(grew: int) -> SimpleNamespace:
    state = {"allocated": 0}

    def empty(n: int, **_: object) -> object:
        state["allocated"] += grew
        return object()

    cuda = SimpleNamespace(memory_allocated=lambda _device: state["allocated"])
    return SimpleNamespace(cuda=cuda, empty=empty, uint8=None)


def test_disabled_caching_allocator_is_a_named_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTORCH_NO_CUDA_MEMORY_CACHING", "1")
    monkeypatch.setattr(allocator, "torch", _fake_torch(0))
    reason = allocator.cuda_graphs_unavailable(torch.device("cpu"))
    assert reason is not None
    assert "PYTORCH_NO_CUDA_MEMORY_CACHING=1" in reason
    assert "memory_allocated by 0 bytes" in str(allocator.memory_stats_missing(torch.device("cpu")))
    monkeypatch.setattr(allocator, "torch", _fake_torch(1 << 20))
    assert allocator.memory_stats_missing(torch.device("cpu")) is None


def test_tf32_turned_off_by_the_user_is_a_named_skip_not_an_fp32_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.support.probes.env_limits import (
        launch_blocking,
        launch_blocking_hint,
        tf32_disabled,
        timing_unreliable,
    )
    from conformance.support.workloads.gemm_bench import GemmBench, GemmRun

    bench = GemmBench({"index": 0, "name": "NVIDIA H200"}, (9, 0))
    bench.runs["tf32"] = GemmRun("tf32", 8192, 50.0, {}, 1.0, None)  # TF32 off: as slow as fp32
    monkeypatch.delenv("NVIDIA_TF32_OVERRIDE", raising=False)
    assert tf32_disabled() is None
    assert bench.tf32_reference() == 50.0
    monkeypatch.setenv("NVIDIA_TF32_OVERRIDE", "0")
    assert "NVIDIA_TF32_OVERRIDE=0" in str(tf32_disabled())
    assert bench.tf32_reference() is None  # fp32's upper bound falls back to the datasheet
    monkeypatch.setenv("NVIDIA_TF32_OVERRIDE", "1")  # forcing TF32 on is a fault, never a skip
    assert tf32_disabled() is None
    monkeypatch.setenv("CUDA_LAUNCH_BLOCKING", "1")
    assert "CUDA_LAUNCH_BLOCKING=1" in str(launch_blocking())
    assert timing_unreliable(torch.device("cpu")) is None  # a fault the floors judge, not a reason to skip them
    assert "unset it" in launch_blocking_hint()
    monkeypatch.delenv("CUDA_LAUNCH_BLOCKING")
    assert timing_unreliable(torch.device("cpu")) is None
    assert launch_blocking_hint() == ""


def test_deterministic_algorithms_have_their_own_measured_floor() -> None:
    """torch.use_deterministic_algorithms(True) moves H100 attention from cuDNN (≈300 TFLOP/s) to flash (≈180): the
    default floor would fail a legitimate setting, so only a floor measured under it applies."""
    h100 = "NVIDIA H100 80GB HBM3"
    default, _ = tighter(None, "recorded", h100, "sdpa.fp16.tflops")
    deterministic, why = tighter(None, "recorded", h100, "sdpa.fp16.tflops", deterministic=True)
    assert default is not None
    assert deterministic is not None
    assert default > 181.6  # flash fails the default floor
    assert 16.0 < deterministic < 181.6  # and passes its own, which math (13-16) fails
    assert "under torch.use_deterministic_algorithms(True)" in why
    general, why = tighter(3.0, "general", "NVIDIA H200", "amp.speedup.fp16", deterministic=True)
    assert general == 3.0
    assert "no floor measured on H200 SXM under torch.use_deterministic_algorithms(True)" in why
    assert tighter(None, "recorded", "NVIDIA RTX 9999", "sdpa.fp16.tflops", deterministic=True) == (None, "recorded")


def test_a_stack_with_its_own_floor_is_judged_by_it_and_others_by_the_shared_one() -> None:
    """torch 2.9.1 (the image's stack) runs attention about 25% under torch 2.11 on an H100: its own SDPA floor
    applies to it, and only to it; a GPU outside the tables keeps the general floor on every stack."""
    h100 = "NVIDIA H100 80GB HBM3"
    shipped, why = tighter(None, "recorded", h100, "sdpa.fp16.tflops", torch_version="2.9.1+cu128")
    host, host_why = tighter(None, "recorded", h100, "sdpa.fp16.tflops", torch_version="2.11.0+cu130")
    assert shipped is not None
    assert host is not None
    assert shipped < 211.4 < host  # the shipped stack's lowest untouched run passes its own floor only
    assert "torch 2.9's own" in why
    assert "torch 2.9's own" not in host_why
    conv, conv_why = tighter(None, "recorded", h100, "conv.fp16.tflops", torch_version="2.9.1+cu128")
    assert conv == tighter(None, "recorded", h100, "conv.fp16.tflops", torch_version="2.11.0")[0]
    assert "own" not in conv_why
    assert tighter(None, "recorded", "NVIDIA RTX 9999", "sdpa.fp16.tflops", torch_version="2.9.1") == (None, "recorded")
    h200, h200_why = tighter(None, "recorded", "NVIDIA H200", "sdpa.bf16.tflops", torch_version="2.9.1+cu128")
    assert h200 is None  # torch 2.11's H200 floor does not judge torch 2.9's attention
    assert h200_why == "recorded; no floor measured for torch 2.9 on H200 SXM, whose kernels move it"
    assert tighter(None, "recorded", "NVIDIA H200", "sdpa.bf16.tflops", torch_version="2.11.0")[0] == 220.0


def _unscaled_gradient(dtype: torch.dtype, scale: float = 65536.0) -> float:
    """The loss-scaling check's weight gradient (x = 0.5, batch 8, upstream 1e-8), its two roundings in ``dtype``."""
    upstream = torch.tensor(1e-8 * scale).to(dtype).float()
    return float((upstream * 0.5 * 8).to(dtype).float()) / scale


def test_scaled_gradient_passes_fp16_roundings_and_fails_a_bf16_gradient_path() -> None:
    expected = 1e-8 * 0.5 * 8
    gate = scaled_gradient_gate(expected)
    assert gate.violation(3.998866304755211e-08) is None  # the H100 and H200 runs
    assert gate.violation(_unscaled_gradient(torch.float16)) is None
    assert gate.violation(_unscaled_gradient(torch.bfloat16)) is not None
    assert gate.violation(expected * 1.05) is not None  # what the old 5 % bound let pass
