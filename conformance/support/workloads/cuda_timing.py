"""The timing harness's device: CUDA events on the current stream, and the L2 flush (repetition.py has the rule).

The flush writes a buffer of twice the card's L2 (``torch.cuda.get_device_properties(i).L2_cache_size``) on the
stream before each repetition, outside its events: the next repetition finds none of the last one's data in L2,
and the memset keeps the GPU busy while the CPU enqueues the repetition, so a short kernel's start is not a launch
gap after an idle GPU.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import torch

from conformance.support.workloads.numerics import cuda_event
from conformance.support.workloads.repetition import Plan, Timings, flush_bytes, measure, measure_interleaved


def l2_cache_size(device: torch.device) -> int | None:
    """The card's L2 in bytes, where torch reports it (None: not reported, or 0)."""
    size = getattr(torch.cuda.get_device_properties(device.index or 0), "L2_cache_size", None)
    return int(size) if isinstance(size, int) and size > 0 else None


class CudaTiming:
    """``repetition.TimingDevice`` on one GPU: its flush buffer lives as long as this object."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.flush_bytes = flush_bytes(l2_cache_size(device))
        self._buffer = torch.empty(self.flush_bytes // 4, dtype=torch.int32, device=device)

    def flush(self) -> None:
        self._buffer.zero_()

    def time_ms(self, fn: Callable[[], object]) -> float:
        start, end = cuda_event(), cuda_event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        return float(start.elapsed_time(end))

    def synchronize(self) -> None:
        torch.cuda.synchronize(self.device)


def time_cuda(fn: Callable[[], object], device: torch.device, plan: Plan) -> Timings:
    """``fn`` timed under ``plan`` on ``device`` (the current stream)."""
    return measure(fn, CudaTiming(device), plan)


def time_cuda_interleaved(
    cases: Mapping[str, Callable[[], object]], device: torch.device, plan: Plan
) -> dict[str, Timings]:
    """``cases`` timed in rounds (A, B, A, B) under ``plan`` on ``device``."""
    return measure_interleaved(cases, CudaTiming(device), plan)
