"""One GEMM benchmark per dtype at the same m=n=k, measured once per session and shared by the checks."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import torch

from conformance.support.expectations.ratios import expected_ratios
from conformance.support.probes import nvml
from conformance.support.workloads.cuda_timing import time_cuda
from conformance.support.workloads.numerics import seeded_randn
from conformance.support.workloads.repetition import Plan, describe
from pytorch_cuda_contract.gpu import is_native, native_from

GEMM_N = 8192  # every dtype at the same size, so that the ratios mean something
# fp32 IEEE at 8192^3 takes about 21 ms on an H100 (45 repetitions in the cap), the tensor-core dtypes 1-3 ms.
GEMM_PLAN = Plan(warmup=3, least=10, cap_s=1.0)
# dtype name -> (torch dtype, float32 matmul precision)
CASES: dict[str, tuple[torch.dtype, str]] = {
    "fp32": (torch.float32, "highest"),
    "tf32": (torch.float32, "high"),
    "fp16": (torch.float16, "highest"),
    "bf16": (torch.bfloat16, "highest"),
}


@dataclass(frozen=True)
class GemmRun:
    dtype: str
    n: int
    tflops: float  # at the median time
    spread: dict[str, object]  # min/median/max/samples, relative spread and error, why it stopped (of TFLOP/s)
    median_ms: float
    clocks: dict[str, object] | None
    error: str | None = None  # the GEMM raised (dtype unsupported)
    timing: str = ""  # how it was timed: repetitions, why they stopped, the L2 flush


@dataclass
class GemmBench:
    device: dict[str, object]
    capability: tuple[int, int]
    runs: dict[str, GemmRun] = field(default_factory=dict)

    def tflops(self, dtype: str) -> float | None:
        run = self.runs.get(dtype)
        return None if run is None or run.error is not None else run.tflops

    def tf32_reference(self) -> float | None:
        """The measured TF32 GEMM as a reference for fp32 bounds; None when NVIDIA_TF32_OVERRIDE=0 turned TF32 off."""
        from conformance.support.probes.env_limits import tf32_disabled

        return None if tf32_disabled() else self.tflops("tf32")

    def ratio(self, dtype: str) -> float | None:
        value, base = self.tflops(dtype), self.tflops("fp32")
        return None if value is None or not base else value / base


def device_identity(device: torch.device) -> dict[str, object]:
    index = device.index or 0
    return {"index": index, "name": torch.cuda.get_device_name(index)}


def device_clocks(device: torch.device) -> dict[str, object] | None:
    index = device.index or 0
    uuid = getattr(torch.cuda.get_device_properties(index), "uuid", None)
    return nvml.clocks(str(uuid) if uuid is not None else None, index)


def _measure(device: torch.device, name: str, n: int) -> GemmRun:
    dtype, precision = CASES[name]
    previous = "highest"
    try:
        previous = torch.get_float32_matmul_precision()  # raises when the legacy and new TF32 APIs were mixed
        torch.set_float32_matmul_precision(precision)
        a = seeded_randn((n, n), seed=11, device=device, dtype=dtype)
        b = seeded_randn((n, n), seed=12, device=device, dtype=dtype)
        out = torch.empty(n, n, device=device, dtype=dtype)
        timings = time_cuda(lambda: torch.mm(a, b, out=out), device, GEMM_PLAN)
    except RuntimeError as exc:
        return GemmRun(name, n, float("nan"), {}, float("nan"), None, f"{type(exc).__name__}: {exc}")
    finally:
        with contextlib.suppress(RuntimeError):
            torch.set_float32_matmul_precision(previous)
    clocks = device_clocks(device)
    tflops, spread = timings.rate(2.0 * n * n * n)
    return GemmRun(name, n, tflops, spread, timings.median_ms, clocks, timing=describe(timings, GEMM_PLAN))


def run_gemm_bench(device: torch.device, n: int = GEMM_N) -> GemmBench:
    bench = GemmBench(device_identity(device), tuple(torch.cuda.get_device_capability(device)))
    for name in CASES:
        bench.runs[name] = _measure(device, name, n)
    torch.cuda.empty_cache()
    return bench


def dtype_verdict(bench: GemmBench, dtype: str) -> tuple[str, str]:
    """native / emulated / unsupported from the measured speed (not from the compute capability)."""
    run = bench.runs[dtype]
    if run.error is not None:
        return "unsupported", f"GEMM raised: {run.error[:200]}"
    ratios = expected_ratios(bench.capability, str(bench.device["name"]))
    ratio = bench.ratio(dtype) or 0.0
    speed = f"{run.tflops:.1f} TFLOP/s, {ratio:.2f}x fp32 at {run.n}^3"
    if dtype == "fp32":
        return "native", speed
    if dtype == "tf32" and not is_native("tf32", bench.capability):
        return "unsupported", f"no TF32 before cc {native_from('tf32')}: precision 'high' runs IEEE fp32 ({speed})"
    bound = ratios.bound(dtype) if ratios is not None else None
    native = ratio >= bound if bound is not None else ratio >= 1.5
    return ("native" if native else "emulated"), speed
