"""Maximum achievable matmul FLOPS (MAMF): the best GEMM throughput a short shape search finds on this GPU.

The datasheet peak is a number no kernel reaches; MAMF is what cuBLAS really delivers at its best shape (the method
of stas00's ml-engineering ``mamf-finder.py``: time a grid of m, n, k, keep the fastest). The suite's fixed 8192^3
GEMM is then reported as a percentage of both. The search is bounded in time (``SEARCH_BUDGET_S`` per dtype): a
slow GPU searches fewer shapes, and says how many.

A search at sustained load under-reads what a short burst reaches: on an H100 the search found 766 TFLOP/s while
the suite's own 8192^3 GEMM, timed on a cooler GPU, got 783 (and a coarse pass at 2/5 calls per shape, refined on
its 4 best at 5/20, found only 649: the short timings ranked the shapes wrongly, so it was dropped). The suite's
fixed GEMM is therefore one more candidate, so that MAMF is never below a shape the suite measured; ``source`` says
which won, and ``search_tflops`` keeps the search's own best.
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
# 5 warm-up and 20 timed calls per shape: about 3 s per dtype for the 64 shapes on an H100.
WARMUP, ITERATIONS = 5, 20
MAMF_DTYPES: dict[str, torch.dtype] = {"bf16": torch.bfloat16, "fp16": torch.float16}

Shape = tuple[int, int, int]
TimeShape = Callable[[Shape], list[float]]  # shape -> per-call times (ms)
Candidate = tuple[float, Shape]  # (median TFLOP/s, shape)


@dataclass(frozen=True)
class MamfResult:
    dtype: str
    tflops: float  # the best shape's median throughput
    shape: Shape  # (m, n, k) of the best shape
    shapes_searched: int
    shapes_in_grid: int
    seconds: float
    source: str  # "search" (a searched shape won) or "fixed GEMM" (the suite's own GEMM was faster)
    search_tflops: float  # the search's best, whichever won

    @property
    def complete(self) -> bool:
        return self.shapes_searched == self.shapes_in_grid


def search_grid() -> list[Shape]:
    return list(itertools.product(SEARCH_M, SEARCH_N, SEARCH_K))


def search_pass(
    grid: Iterable[Shape], time_shape: TimeShape, budget_s: float, clock: Callable[[], float] = time.monotonic
) -> list[Candidate]:
    """Every shape until the budget is spent (at least one), fastest first."""
    started = clock()
    timed: list[Candidate] = []
    for shape in grid:
        if timed and clock() - started > budget_s:
            break
        timed.append((gemm_tflops(*shape, median(time_shape(shape))), shape))
    if not timed:
        raise ValueError("the MAMF search grid is empty")
    return sorted(timed, key=lambda candidate: candidate[0], reverse=True)


def best_of(searched: Candidate, fixed: Candidate | None) -> tuple[Candidate, str]:
    """The search's best, or the suite's fixed GEMM where that was faster (MAMF is a maximum)."""
    if fixed is not None and fixed[0] > searched[0]:
        return fixed, "fixed GEMM"
    return searched, "search"


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


def search_mamf(
    device: torch.device, dtype_name: str, fixed: Candidate | None = None, budget_s: float = SEARCH_BUDGET_S
) -> MamfResult:
    """The MAMF of one dtype; ``fixed`` is the suite's own GEMM (TFLOP/s, shape), a candidate like the others."""
    grid = search_grid()
    started = time.monotonic()
    timer = cuda_shape_timer(device, MAMF_DTYPES[dtype_name])
    timed = search_pass(grid, timer, budget_s)
    (tflops, shape), source = best_of(timed[0], fixed)
    torch.cuda.empty_cache()
    seconds = time.monotonic() - started
    return MamfResult(dtype_name, tflops, shape, len(timed), len(grid), seconds, source, timed[0][0])
