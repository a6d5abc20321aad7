"""The timing harness's device: CUDA events on the current stream, the launch hold and the L2 flush (repetition.py
has the rule of the repetitions, launch_hold.py the rule of the hold).

Before each repetition the stream runs a spin kernel (``torch.cuda._sleep``, the launch hold: nvbench's blocking
kernel), then writes a buffer of twice the card's L2 (``torch.cuda.get_device_properties(i).L2_cache_size``), both
outside the repetition's events: the next repetition finds none of the last one's data in L2, and its timing holds
no launch gap. A repetition whose start event had completed before the CPU had enqueued it is timed again behind a
longer hold (launch_hold.LaunchHold).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import torch

from conformance.support.workloads.launch_hold import LaunchHold, hold_cycles
from conformance.support.workloads.numerics import cuda_event
from conformance.support.workloads.repetition import Plan, Timings, flush_bytes, measure, measure_interleaved


def l2_cache_size(device: torch.device) -> int | None:
    """The card's L2 in bytes, where torch reports it (None: not reported, or 0)."""
    size = getattr(torch.cuda.get_device_properties(device.index or 0), "L2_cache_size", None)
    return int(size) if isinstance(size, int) and size > 0 else None


SPIN_CALIBRATION_CYCLES = 1_000_000  # about 0.5 ms at an H100's 1980 MHz


def spin_rate() -> float | None:
    """The spin kernel's SM clock cycles per ms on the current stream, timed once; None where this torch has no
    ``torch.cuda._sleep`` (the repetitions are then not held, and their note says so)."""
    sleep = getattr(torch.cuda, "_sleep", None)
    if sleep is None:
        return None
    sleep(1000)  # the kernel's first launch loads its module
    start, end = cuda_event(), cuda_event()
    start.record()
    sleep(SPIN_CALIBRATION_CYCLES)
    end.record()
    end.synchronize()
    elapsed = float(start.elapsed_time(end))
    return SPIN_CALIBRATION_CYCLES / elapsed if elapsed > 0 else None


class CudaTiming:
    """``repetition.TimingDevice`` on one GPU: its flush buffer and launch hold live as long as this object."""

    def __init__(self, device: torch.device, held: bool = True) -> None:
        self.device = device
        self.flush_bytes = flush_bytes(l2_cache_size(device))
        self._buffer = torch.empty(self.flush_bytes // 4, dtype=torch.int32, device=device)
        self.held = held  # False: harness 2's repetitions (gpu/timing_spread.py compares them)
        self._cycles_per_ms = spin_rate() if held else None
        self.hold = LaunchHold()

    def flush(self) -> None:
        if self._cycles_per_ms is not None and self.hold.active:
            torch.cuda._sleep(hold_cycles(self.hold.hold_ms, self._cycles_per_ms))
        self._buffer.zero_()

    def time_ms(self, fn: Callable[[], object]) -> float:
        while True:
            start, end = cuda_event(), cuda_event()
            start.record()
            fn()
            end.record()
            late = bool(start.query())  # the GPU was at the start before the CPU had enqueued the workload
            end.synchronize()
            elapsed = float(start.elapsed_time(end))
            if self._cycles_per_ms is None or not self.hold.after(late):
                return elapsed
            self.flush()  # behind a hold twice as long, and the L2 flushed again

    def synchronize(self) -> None:
        torch.cuda.synchronize(self.device)

    def note(self) -> str:
        if not self.held:
            return "not held (harness 2)"
        if self._cycles_per_ms is None:
            return "not held: this torch has no torch.cuda._sleep, so the times may include the launch"
        return self.hold.note()


def time_cuda(fn: Callable[[], object], device: torch.device, plan: Plan, held: bool = True) -> Timings:
    """``fn`` timed under ``plan`` on ``device`` (the current stream); ``held=False``: without the launch hold."""
    return measure(fn, CudaTiming(device, held), plan)


def time_cuda_interleaved(
    cases: Mapping[str, Callable[[], object]], device: torch.device, plan: Plan
) -> dict[str, Timings]:
    """``cases`` timed in rounds (A, B, A, B) under ``plan`` on ``device``."""
    return measure_interleaved(cases, CudaTiming(device), plan)
