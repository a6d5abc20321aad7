"""The FP16/BF16 article's claims, measured: AMP step time and memory, conv throughput per dtype and the fp32
conv's IEEE error, and FP16's range (65504) against BF16's.  Where a number contradicts the article, the metric
says so."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest
import torch

from conformance.support.expectations.bounds import (
    Gate,
    amp_memory_gate,
    amp_speedup_gate,
    amp_speedup_gate_uncached,
    fp32_ieee_error_gate,
    fp32_kernel_gate,
    tf32_error_gate,
    throughput_gate,
)
from conformance.support.expectations.measured_floors import tighter
from conformance.support.probes.allocator import memory_stats_missing
from conformance.support.probes.env_limits import launch_blocking_hint, tf32_disabled, timing_unreliable
from conformance.support.probes.fp32_policy import conv_fp32_math
from conformance.support.results.recorder import RecordMetric, RecordNote
from conformance.support.workloads.amp_step import AMP_PLAN, StepResult, measure_steps
from conformance.support.workloads.cuda_timing import time_cuda
from conformance.support.workloads.gemm_bench import GemmBench, device_clocks, device_identity
from conformance.support.workloads.numerics import normalized_error, seeded_randn
from conformance.support.workloads.repetition import Plan, describe
from conformance.support.workloads.repetition import ratio as timed_ratio
from pytorch_cuda_contract.gpu import is_native, needs
from pytorch_cuda_contract.peaks import lookup_peak

ARTICLE_MEMORY_CLAIM = "half precision cuts GPU memory by about 50%"
CONV_DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
CONV_SHAPE = (32, 256, 56, 56)  # N, C, H, W; 3x3 conv to 256 channels: 59 GFLOP
# Conv throughput floor, a fraction of the datasheet peak of the dtype.  H200: fp32 43.5 (65% of 67),
# fp16 598 (60% of 989), bf16 634 (64%).  A conv without tensor-core kernels runs near the fp32 rate.
CONV_FLOOR = 0.25
CONV_PLAN = Plan(warmup=3, least=10, cap_s=1.0)  # fp32 about 1.5 ms a call on an H100, fp16/bf16 about 0.09 ms
# cuDNN may pick Winograd for a 3x3 conv: 2.25x fewer multiplies than the direct FLOP count used here, so an
# IEEE fp32 conv may legitimately show up to 2.25x the fp32 bound; TF32 (H200: 494.7 peak) still crosses it.
WINOGRAD_ALLOWANCE = 2.25


@pytest.fixture(scope="module")
def amp_steps() -> dict[str, StepResult]:
    device = torch.device("cuda", 0)
    modes = ["fp32", "fp16"] + (["bf16"] if is_native("bf16", torch.cuda.get_device_capability(device)) else [])
    return measure_steps(device, modes)


def _half_modes(amp_steps: dict[str, StepResult]) -> list[str]:
    return [mode for mode in ("fp16", "bf16") if mode in amp_steps]


def _tensor_cores(mode: str) -> bool:
    return is_native(mode, torch.cuda.get_device_capability(0))


@pytest.mark.gpu
def test_amp_step_speedup(
    amp_steps: dict[str, StepResult], gemm_bench: GemmBench, record_metric: RecordMetric, record_note: RecordNote
) -> None:
    """AMP must give a share of what the same run's GEMM ratio says the tensor cores give, and no more than it."""
    device = device_identity(torch.device("cuda", 0))
    fp32 = amp_steps["fp32"]
    for mode, result in amp_steps.items():
        record_metric(
            f"amp.step_ms.{mode}", result.median_ms, "ms", **result.timings.fields(), device=device,
            clocks=result.clocks, informational=True,
        )  # fmt: skip
        assert math.isfinite(result.final_loss), f"{mode} training step produced loss {result.final_loss}"
    problems = []
    unreliable = timing_unreliable(torch.device("cuda", 0))
    for mode in _half_modes(amp_steps):
        result = amp_steps[mode]
        speedup, spread_fields = timed_ratio(fp32.timings, result.timings)  # the rounds interleaved: paired
        if unreliable is not None:  # a legitimate setting: a general bound, never none
            gate = amp_speedup_gate_uncached(gemm_bench.ratio(mode), _tensor_cores(mode), unreliable)
        else:
            gate = amp_speedup_gate(gemm_bench.ratio(mode), _tensor_cores(mode))
        if gate.lower is not None and unreliable is None:
            lower, why = tighter(
                gate.lower, gate.why, str(gemm_bench.device["name"]), f"amp.speedup.{mode}",
                deterministic=torch.are_deterministic_algorithms_enabled(),
            )  # fmt: skip
            gate = Gate(lower, gate.upper, why)
        record_metric(f"amp.speedup.{mode}", speedup, "x", **spread_fields, **gate.metric_fields())
        record_note(f"{mode}: {gate.why}; timed interleaved with fp32: {describe(result.timings, AMP_PLAN)}")
        problem = gate.violation(speedup)
        if problem is not None:
            problems.append(
                f"{mode} AMP step {result.median_ms:.2f} ms vs fp32 {fp32.median_ms:.2f} ms: speed-up {problem}"
            )
    assert not problems, "; ".join(problems) + (
        ": below, autocast does not reach the tensor cores or every launch waits; above, the fp32 step is slowed "
        "(or AMP skips work)" + launch_blocking_hint()
    )


@pytest.mark.gpu
def test_amp_memory_saving(amp_steps: dict[str, StepResult], record_metric: RecordMetric) -> None:
    """Fails when AMP saves less than 25 % (`AMP_MEMORY_FLOOR_PCT`) of fp32's peak memory: 31.46 % measured on both
    cards, so a saving halved crosses it; autocast a no-op saves 0.02 %. Skips naming the setting when the caching
    allocator keeps no statistics (`PYTORCH_NO_CUDA_MEMORY_CACHING=1`)."""
    device = torch.device("cuda", 0)
    missing = memory_stats_missing(device)
    if missing is not None:
        pytest.skip(missing)
    fp32 = amp_steps["fp32"]
    if not fp32.peak_mib > 0:
        pytest.skip(f"the fp32 step's peak memory reads {fp32.peak_mib} MiB: no allocator statistics")
    problems = []
    for mode, result in amp_steps.items():
        record_metric(f"amp.peak_mem_mib.{mode}", result.peak_mib, "MiB", device=device_identity(device),
                      informational=True)  # fmt: skip
    for mode in _half_modes(amp_steps):
        saving = 100.0 * (1.0 - amp_steps[mode].peak_mib / fp32.peak_mib)
        gate = amp_memory_gate(_tensor_cores(mode))
        contradicts = ARTICLE_MEMORY_CLAIM if saving < 40.0 else None
        record_metric(f"amp.mem_saving_pct.{mode}", saving, "%", contradicts=contradicts, **gate.metric_fields())
        problem = gate.violation(saving)
        if problem is not None:
            problems.append(f"{mode} AMP peak memory saving {problem}")
    assert not problems, "; ".join(problems) + ": autocast does not keep activations in half precision"


@pytest.fixture
def ieee_conv() -> Iterator[None]:
    """What a program that asks for IEEE fp32 convolutions gets (``torch.backends.cudnn.allow_tf32 = False``): the
    image's default is TF32 (the checks ``..._at_the_default_policy`` measure that)."""
    allow = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = False  # conv.fp32 is IEEE fp32, like gemm.fp32
    yield
    torch.backends.cudnn.allow_tf32 = allow


def conv_gate(dtype_name: str, gemm_bench: GemmBench, uncached: str | None = None) -> Gate:
    """fp32 (IEEE): no faster than fp32 can be (TF32 forced into cuDNN crosses it); fp16/bf16: the tensor-core
    floor and the datasheet ceiling. The SKU's measured floor tightens it, except where allocations are uncached
    (``uncached``: why): the general floor of the datasheet then holds."""
    name = str(gemm_bench.device["name"])
    if dtype_name == "fp32":
        gate = fp32_kernel_gate(
            name, gemm_bench.capability, gemm_bench.tf32_reference(), CONV_FLOOR, WINOGRAD_ALLOWANCE
        )
    else:
        spec = lookup_peak(name)
        gate = throughput_gate(spec.peak(dtype_name) if spec is not None else None, CONV_FLOOR)
    if uncached is not None:
        return Gate(gate.lower, gate.upper, f"{gate.why}; the measured floor is not judged: {uncached}")
    lower, why = tighter(gate.lower, gate.why, name, f"conv.{dtype_name}.tflops")
    return Gate(lower, gate.upper, why)


def _timed_conv(dtype: torch.dtype, device: torch.device) -> tuple[float, dict[str, object], torch.Tensor, str]:
    """The 3x3 conv of CONV_SHAPE, channels-last, timed under CONV_PLAN: TFLOP/s at the median, its spread, one
    output, and how the repetitions went."""
    n, c, h, w = CONV_SHAPE
    memory = torch.channels_last
    x = seeded_randn(CONV_SHAPE, 51, device, dtype).contiguous(memory_format=memory)
    weight = (seeded_randn((c, c, 3, 3), 52, device, dtype) / 48).contiguous(memory_format=memory)
    timings = time_cuda(lambda: torch.nn.functional.conv2d(x, weight, padding=1), device, CONV_PLAN)
    tflops, fields = timings.rate(2.0 * n * c * h * w * c * 9)
    return tflops, fields, torch.nn.functional.conv2d(x, weight, padding=1), describe(timings, CONV_PLAN)


@pytest.mark.gpu
@pytest.mark.usefixtures("ieee_conv")
@pytest.mark.parametrize("dtype_name", list(CONV_DTYPES))
def test_cudnn_conv_throughput(
    dtype_name: str,
    cuda_device: torch.device,
    gemm_bench: GemmBench,
    record_metric: RecordMetric,
    record_note: RecordNote,
) -> None:
    """Fails when conv 3×3 below 25 % of the datasheet peak; fp16/bf16 above 1.15 × the peak; fp32 as a program that
    asks for IEEE gets it (cuDNN TF32 off: not the image's default, which the check at the default policy measures)
    above 2.25 (Winograd) × fp32's bound (1.15 × datasheet, or measured TF32 / 0.5 × the TF32 ratio): TF32 forced
    into cuDNN."""
    dtype = CONV_DTYPES[dtype_name]
    if dtype_name == "bf16" and not is_native("bf16", torch.cuda.get_device_capability(cuda_device)):
        pytest.skip(f"bf16 conv needs {needs('bf16')}")
    tflops, fields, out, timed = _timed_conv(dtype, cuda_device)
    record_note(f"conv {dtype_name} timed: {timed}")
    unreliable = timing_unreliable(cuda_device)
    gate = conv_gate(dtype_name, gemm_bench, unreliable)  # uncached: the datasheet floor, never none
    if unreliable is not None:
        record_note(f"conv {dtype_name}: the datasheet floor judged, not the measured one: {unreliable}")
    record_metric(
        f"conv.{dtype_name}.tflops", tflops, "TFLOP/s", **fields, **gate.metric_fields(),
        device=device_identity(cuda_device), clocks=device_clocks(cuda_device),
    )  # fmt: skip
    assert bool(torch.isfinite(out).all()), f"cuDNN {dtype_name} conv produced non-finite values"
    problem = gate.violation(tflops)
    assert problem is None, (
        f"cuDNN {dtype_name} conv 3x3 {CONV_SHAPE}: {tflops:.1f} TFLOP/s: {problem}. fp32 above its bound: TF32 is "
        "forced into cuDNN (NVIDIA_TF32_OVERRIDE=1 or a patched library); below the floor: no tensor-core kernel, "
        "cuDNN's v8 API off (TORCH_CUDNN_V8_API_DISABLED=1), or a busy GPU" + launch_blocking_hint()
    )


CONV_ERROR_SHAPE = (8, 64, 32, 32)  # N, C, H, W; 3x3 conv to 64 channels


def _conv_fp32_error(device: torch.device) -> float:
    """An fp32 conv 3x3 of CONV_ERROR_SHAPE against float64, under whatever cuDNN policy is in force."""
    channels = CONV_ERROR_SHAPE[1]
    x = seeded_randn(CONV_ERROR_SHAPE, 53, device)
    weight = seeded_randn((channels, channels, 3, 3), 54, device) / 24
    out = torch.nn.functional.conv2d(x, weight, padding=1)
    return normalized_error(out, torch.nn.functional.conv2d(x.double(), weight.double(), padding=1))


@pytest.mark.gpu
@pytest.mark.usefixtures("ieee_conv")
def test_cudnn_conv_fp32_is_ieee(cuda_device: torch.device, record_metric: RecordMetric) -> None:
    """Fails when an fp32 conv that asks for IEEE (cuDNN's TF32 off, as conv.fp32.tflops is measured; not the image's
    default) has an error against float64 of 1e-5 or more: TF32 used against the flag."""
    error = _conv_fp32_error(cuda_device)
    gate = fp32_ieee_error_gate("conv")
    record_metric("conv.fp32.error", error, "rel", **gate.metric_fields())
    problem = gate.violation(error)
    assert problem is None, (
        f"cuDNN fp32 conv 3x3 {CONV_ERROR_SHAPE} with torch.backends.cudnn.allow_tf32=False against float64: "
        f"{problem}: cuDNN uses TF32 regardless of the flag (a patched cuDNN or a wrapper forcing allow_tf32)"
    )


def _default_conv_math(policy: dict[str, object], device: torch.device) -> tuple[str, str]:
    """The math of an fp32 conv under the policy read at startup; a named skip when it is IEEE (the IEEE checks above
    measure that)."""
    math, why = conv_fp32_math(policy, torch.cuda.get_device_capability(device), tf32_disabled())
    if math != "tf32":
        pytest.skip(f"the fp32 conv is IEEE under this process's policy ({why}): test_cudnn_conv_throughput[fp32] "
                    "and test_cudnn_conv_fp32_is_ieee judge it")  # fmt: skip
    return math, why


@pytest.mark.gpu
def test_cudnn_conv_throughput_fp32_at_the_default_policy(
    cuda_device: torch.device,
    fp32_policy_at_start: dict[str, object],
    record_metric: RecordMetric,
    record_note: RecordNote,
) -> None:
    """Fails when an fp32 conv 3×3 under the image's default policy (PyTorch's `cudnn.allow_tf32=True`: TF32, recorded
    as conv.tf32.tflops) is below 25 % (`CONV_FLOOR`) or above 1.15 × (`DATASHEET_CEILING`) the TF32 datasheet peak:
    TF32 allowed and not delivered (cuDNN off: 27 TFLOP/s). Skips naming it where the policy is IEEE."""
    _, why = _default_conv_math(fp32_policy_at_start, cuda_device)
    tflops, fields, out, timed = _timed_conv(torch.float32, cuda_device)
    spec = lookup_peak(torch.cuda.get_device_name(cuda_device))
    gate = throughput_gate(spec.tf32 if spec is not None else None, CONV_FLOOR)
    record_note(f"fp32 conv at the default policy runs as TF32: {why}; timed: {timed}")
    record_metric(
        "conv.tf32.tflops", tflops, "TFLOP/s", **fields, **gate.metric_fields(),
        device=device_identity(cuda_device), clocks=device_clocks(cuda_device),
    )  # fmt: skip
    assert bool(torch.isfinite(out).all()), "cuDNN fp32 conv at the default policy produced non-finite values"
    problem = gate.violation(tflops)
    assert problem is None, (
        f"cuDNN fp32 conv 3x3 {CONV_SHAPE} at the image's default policy ({why}): {tflops:.1f} TFLOP/s: {problem}. "
        "Below: TF32 is allowed but the conv does not get it (cuDNN switched off, torch.backends.cudnn.enabled=False, "
        "runs torch's native IEEE kernels; a cuDNN without TF32 kernels); above: broken timing" + launch_blocking_hint()
    )


@pytest.mark.gpu
def test_cudnn_conv_fp32_error_at_the_default_policy(
    cuda_device: torch.device, fp32_policy_at_start: dict[str, object], record_metric: RecordMetric
) -> None:
    """Fails when an fp32 conv under the image's default policy (TF32, recorded as conv.tf32.error) has an error
    against float64 outside TF32's 1e-4..1e-3 (`TF32_ERROR_RANGE`): below, TF32 allowed and not used (cuDNN off: IEEE
    4.2e-7); above, worse than TF32. Skips naming it where the policy is IEEE."""
    _, why = _default_conv_math(fp32_policy_at_start, cuda_device)
    error = _conv_fp32_error(cuda_device)
    gate = tf32_error_gate("conv")
    record_metric("conv.tf32.error", error, "rel", **gate.metric_fields())
    problem = gate.violation(error)
    assert problem is None, (
        f"cuDNN fp32 conv 3x3 {CONV_ERROR_SHAPE} at the image's default policy ({why}) against float64: {problem}: "
        "below, the conv is IEEE although TF32 is allowed (cuDNN switched off: torch's native kernels); above, the "
        "conv lost more than TF32's rounding"
    )


FP16_MAX = 65504.0


@pytest.mark.informational(
    "documents the formats' range for the article: 65536 cannot be stored in fp16 and is exact in bf16, so no "
    "kernel can change the outcome; test_precision.py's test_fp16_reduction_does_not_overflow_at_65504 is the "
    "range check a fault (an fp16 reduction) trips"
)
@pytest.mark.parametrize(
    "device_type", [pytest.param("cpu", marks=pytest.mark.cpu), pytest.param("cuda", marks=pytest.mark.gpu)]
)
def test_fp16_overflows_where_bf16_does_not(
    device_type: str, record_metric: RecordMetric, record_note: RecordNote
) -> None:
    """A matmul whose every output is 256 * 16 * 16 = 65536 > 65504: inf in fp16, exact in bf16."""
    results = {}
    for name, dtype in (("fp16", torch.float16), ("bf16", torch.bfloat16)):
        a = torch.full((8, 256), 16.0, dtype=dtype, device=device_type)
        out = a @ a.T
        results[name] = out
        overflowed = bool(torch.isinf(out).any())
        stable = f"range.{name}_overflow" if device_type == "cuda" else f"range_{name}_overflow_cpu"
        record_metric(stable, float(overflowed), "bool")  # no bound: the format decides it (informational)
    record_note(
        f"fp16 max {FP16_MAX}; product 65536: fp16 {float(results['fp16'][0, 0])}, bf16 {float(results['bf16'][0, 0])}"
    )
    assert bool(torch.isinf(results["fp16"]).all()), (
        f"an fp16 matmul whose result is 65536 (> {FP16_MAX}) gave {float(results['fp16'][0, 0])}, not inf: "
        "the output is not IEEE fp16"
    )
    assert bool((results["bf16"].float() == 65536.0).all()), (
        f"the same matmul in bf16 gave {float(results['bf16'][0, 0])}, not 65536: bf16 lost its fp32 range"
    )
