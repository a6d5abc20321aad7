"""The FP16/BF16 article's claims, measured: AMP step time and memory, conv throughput per dtype,
and FP16's range (65504) against BF16's.  Where a number contradicts the article, the metric says so."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch

from conformance._amp_step import StepResult, measure_step
from conformance._gemm_bench import device_clocks, device_identity
from conformance._metrics import rate_spread, spread
from conformance._numerics import seeded_randn, time_cuda_ms
from conformance._results import RecordMetric, RecordNote

ARTICLE_MEMORY_CLAIM = "half precision cuts GPU memory by about 50%"
CONV_DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
CONV_SHAPE = (32, 256, 56, 56)  # N, C, H, W; 3x3 conv to 256 channels: 59 GFLOP
MINIMUM_CC = {"fp16": (7, 0), "bf16": (8, 0)}  # tensor cores for the dtype


@pytest.fixture(scope="module")
def amp_steps() -> dict[str, StepResult]:
    device = torch.device("cuda", 0)
    modes = ["fp32", "fp16"] + (["bf16"] if torch.cuda.get_device_capability(device) >= (8, 0) else [])
    return {mode: measure_step(device, mode) for mode in modes}


@pytest.mark.gpu
def test_amp_step_time_and_memory(amp_steps: dict[str, StepResult], record_metric: RecordMetric) -> None:
    device = device_identity(torch.device("cuda", 0))
    fp32 = amp_steps["fp32"]
    for mode, result in amp_steps.items():
        fields = spread(result.times_ms)
        record_metric(f"amp.step_ms.{mode}", result.median_ms, "ms", **fields, device=device, clocks=result.clocks)
        record_metric(f"amp.peak_mem_mib.{mode}", result.peak_mib, "MiB", device=device)
        assert torch.isfinite(torch.tensor(result.final_loss)), (
            f"{mode} training step produced loss {result.final_loss}"
        )
    problems = []
    capability = torch.cuda.get_device_capability(0)
    for mode in ("fp16", "bf16"):
        if mode not in amp_steps:
            continue
        result = amp_steps[mode]
        speedup = fp32.median_ms / result.median_ms
        saving = 100.0 * (1.0 - result.peak_mib / fp32.peak_mib)
        tensor_cores = capability >= MINIMUM_CC[mode]
        record_metric(f"amp.speedup.{mode}", speedup, "x", bound=1.0 if tensor_cores else None, bound_kind="min")
        record_metric(
            f"amp.mem_saving_pct.{mode}", saving, "%", contradicts=ARTICLE_MEMORY_CLAIM if saving < 40.0 else None
        )
        if tensor_cores and not speedup > 1.0:
            problems.append(
                f"{mode} AMP step {result.median_ms:.2f} ms is not faster than fp32 {fp32.median_ms:.2f} ms"
            )
    assert not problems, "; ".join(problems) + ": autocast does not reach the tensor cores"


@pytest.fixture
def ieee_conv() -> Iterator[None]:
    allow = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = False  # conv.fp32 is IEEE fp32, like gemm.fp32
    yield
    torch.backends.cudnn.allow_tf32 = allow


@pytest.mark.gpu
@pytest.mark.parametrize("dtype_name", list(CONV_DTYPES))
def test_cudnn_conv_throughput(
    dtype_name: str, cuda_device: torch.device, ieee_conv: None, record_metric: RecordMetric
) -> None:
    dtype = CONV_DTYPES[dtype_name]
    if dtype_name == "bf16" and torch.cuda.get_device_capability(cuda_device) < (8, 0):
        pytest.skip("bf16 conv needs compute capability >= 8.0")
    n, c, h, w = CONV_SHAPE
    memory = torch.channels_last
    x = seeded_randn(CONV_SHAPE, 51, cuda_device, dtype).contiguous(memory_format=memory)
    weight = (seeded_randn((c, c, 3, 3), 52, cuda_device, dtype) / 48).contiguous(memory_format=memory)
    times = time_cuda_ms(lambda: torch.nn.functional.conv2d(x, weight, padding=1), warmup=3, iterations=10)
    tflops, fields = rate_spread(times, 2.0 * n * c * h * w * c * 9)
    record_metric(
        f"conv.{dtype_name}.tflops", tflops, "TFLOP/s", **fields,
        device=device_identity(cuda_device), clocks=device_clocks(cuda_device),
    )  # fmt: skip
    out = torch.nn.functional.conv2d(x, weight, padding=1)
    assert bool(torch.isfinite(out).all()), f"cuDNN {dtype_name} conv produced non-finite values"


FP16_MAX = 65504.0


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
        record_metric(stable, float(overflowed), "bool")
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
