"""Maximum achievable matmul FLOPS (MAMF): the best GEMM throughput a short shape search finds on this GPU.

The datasheet peak is a number no kernel reaches; MAMF is what cuBLAS really delivers at its best shape (the method
of stas00's ml-engineering ``mamf-finder.py``: time a grid of m, n, k, keep the fastest). The suite's fixed 8192^3
GEMM is then reported as a percentage of both. The search is bounded in time (``SEARCH_BUDGET_S`` per dtype): a
slow GPU searches fewer shapes, and says how many.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import torch

from conformance.support.workloads.numerics import gemm_tflops, median, time_cuda_ms

# 4 x 4 x 4 = 64 shapes, the largest first-dimension sizes where cuBLAS's tiles fill every SM of a Hopper part.
SEARCH_M: tuple[int, ...] = (4096, 6144, 8192, 12288)
SEARCH_N: tuple[int, ...] = (4096, 6144, 8192, 12288)
SEARCH_K: tuple[int, ...] = (4096, 8192, 12288, 16384)
SEARCH_BUDGET_S = 6.0
# 5 warm-up and 20 timed calls per shape: about 3 s per dtype for the 64 shapes on an H100 (2 and 5: 0.8 s).
WARMUP, ITERATIONS = 5, 20
DTYPES: dict[str, torch.dtype] = {"bf16": torch.bfloat16, "fp16": torch.float16}

Shape = tuple[int, int, int]
TimeShape = Callable[[Shape], list[float]]  # shape -> per-call times (ms)


@dataclass(frozen=True)
class MamfResult:
    dtype: str
    tflops: float  # the best shape's median throughput
    shape: Shape  # (m, n, k) of the best shape
    shapes_searched: int
    shapes_in_grid: int
    seconds: float

    @property
    def complete(self) -> bool:
        return self.shapes_searched == self.shapes_in_grid


def search_grid() -> list[Shape]:
    return list(itertools.product(SEARCH_M, SEARCH_N, SEARCH_K))


def best_shape(
    grid: Iterable[Shape], time_shape: TimeShape, budget_s: float, clock: Callable[[], float] = time.monotonic
) -> tuple[float, Shape, int]:
    """(best median TFLOP/s, its shape, shapes searched): every shape until the budget is spent (at least one)."""
    started = clock()
    best: tuple[float, Shape] | None = None
    searched = 0
    for shape in grid:
        if searched and clock() - started > budget_s:
            break
        tflops = gemm_tflops(*shape, median(time_shape(shape)))
        searched += 1
        if best is None or tflops > best[0]:
            best = (tflops, shape)
    if best is None:
        raise ValueError("the MAMF search grid is empty")
    return best[0], best[1], searched


def cuda_shape_timer(device: torch.device, dtype: torch.dtype) -> TimeShape:
    """Times ``torch.mm`` of random (not zero) operands of one shape; data generated on the GPU."""
    generator = torch.Generator(device=device).manual_seed(31)

    def time_shape(shape: Shape) -> list[float]:
        m, n, k = shape
        a = torch.randn(m, k, device=device, dtype=dtype, generator=generator)
        b = torch.randn(k, n, device=device, dtype=dtype, generator=generator)
        out = torch.empty(m, n, device=device, dtype=dtype)
        return time_cuda_ms(lambda: torch.mm(a, b, out=out), warmup=WARMUP, iterations=ITERATIONS)

    return time_shape


def search_mamf(device: torch.device, dtype_name: str, budget_s: float = SEARCH_BUDGET_S) -> MamfResult:
    grid = search_grid()
    started = time.monotonic()
    tflops, shape, searched = best_shape(grid, cuda_shape_timer(device, DTYPES[dtype_name]), budget_s)
    torch.cuda.empty_cache()
    return MamfResult(dtype_name, tflops, shape, searched, len(grid), time.monotonic() - started)
