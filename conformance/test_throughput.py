"""GEMM throughput per dtype against the datasheet dense peak of cuda:0.

CUDA-event timing, warm-up, median of several runs, random (not zero) data.
Unknown GPUs are measured and recorded but not gated.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch

from conformance._numerics import gemm_tflops, median, seeded_randn, time_cuda_ms
from conformance._peaks import THROUGHPUT_FLOOR, lookup_peak
from conformance._results import RecordMetric, RecordNote

pytestmark = pytest.mark.gpu

# dtype name -> (torch dtype, float32 matmul precision, square size)
CASES: dict[str, tuple[torch.dtype, str, int]] = {
    "fp16": (torch.float16, "highest", 8192),
    "bf16": (torch.bfloat16, "highest", 8192),
    "tf32": (torch.float32, "high", 8192),
    "fp32": (torch.float32, "highest", 4096),
}
WARMUP = 3
ITERATIONS = 10


@pytest.fixture
def keep_fp32_precision() -> Iterator[None]:
    precision = torch.get_float32_matmul_precision()
    yield
    torch.set_float32_matmul_precision(precision)


@pytest.mark.parametrize("dtype_name", list(CASES))
def test_gemm_throughput(
    dtype_name: str,
    cuda_device: torch.device,
    keep_fp32_precision: None,
    record_metric: RecordMetric,
    record_note: RecordNote,
) -> None:
    dtype, precision, n = CASES[dtype_name]
    name = torch.cuda.get_device_name(cuda_device)
    spec = lookup_peak(name)
    peak = spec.peak(dtype_name) if spec is not None else None
    if spec is not None and peak is None:
        pytest.skip(f"{spec.gpu} has no {dtype_name} tensor-core path")
    torch.set_float32_matmul_precision(precision)
    a = seeded_randn((n, n), seed=11, device=cuda_device, dtype=dtype)
    b = seeded_randn((n, n), seed=12, device=cuda_device, dtype=dtype)
    out = torch.empty(n, n, device=cuda_device, dtype=dtype)
    times = time_cuda_ms(lambda: torch.mm(a, b, out=out), warmup=WARMUP, iterations=ITERATIONS)
    tflops = gemm_tflops(n, n, n, median(times))
    record_metric(f"{dtype_name}_tflops", tflops, "TFLOP/s")
    record_metric(f"{dtype_name}_size", n, "m=n=k")
    record_metric(f"{dtype_name}_median_ms", median(times), "ms")
    if spec is None or peak is None:
        record_note(f"{name!r} is not in the peak table: {tflops:.1f} TFLOP/s recorded, not gated")
        return
    fraction = tflops / peak
    record_metric(f"{dtype_name}_fraction_of_peak", 100.0 * fraction, "%")
    record_note(f"peak {peak} TFLOP/s ({spec.gpu} datasheet, dense)")
    floor = THROUGHPUT_FLOOR[dtype_name]
    assert fraction >= floor, (
        f"{dtype_name} GEMM {n}^3 on {name}: {tflops:.1f} TFLOP/s = {100 * fraction:.0f}% of the {peak} "
        f"TFLOP/s datasheet peak, below the {100 * floor:.0f}% floor: check clocks/power capping, other "
        "processes on the GPU, and that cuBLAS tensor-core kernels are used"
    )
