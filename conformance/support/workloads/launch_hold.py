"""The launch hold of timing harness 3 (``pytorch_cuda_contract.results_format``): nvbench's blocking kernel.

A repetition is timed between two CUDA events. If the GPU reaches the start event before the CPU has enqueued the
workload, the time between them includes the CPU's launch work (cuDNN's plan lookup, Python, the dispatcher): a
host's speed, not the kernel's. Harness 2 saw it as conv moving 20-25% from one process to the next on one H100.

So before each repetition (and its L2 flush) the stream runs a spin kernel (``torch.cuda._sleep``) long enough for
the CPU to enqueue the flush, the events and the workload behind it. Whether it was long enough is seen, not
assumed: when the start event has already completed once the CPU has enqueued the workload and the end event, the
repetition was *late*; it is not recorded, and it is timed again behind a hold twice as long. A workload that waits
for the GPU itself (a ``.item()`` inside) is late behind any hold: when the hold reaches ``most_ms`` and the
repetition is still late, holding stops for that measurement and its note says so (its times include the launch).

This module is the rule, on numbers only (tested without a GPU); cuda_timing.py applies it on the stream.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

FIRST_HOLD_MS: Final = 0.05  # the first hold: a conv's launch on a fast host is 20-40 us
MOST_HOLD_MS: Final = 64.0  # past this, a workload waits for the GPU itself: holding stops


@dataclass
class LaunchHold:
    """The hold's length (ms) for the next repetition, and what the repetitions so far showed."""

    hold_ms: float = FIRST_HOLD_MS
    most_ms: float = MOST_HOLD_MS
    late: int = 0  # repetitions timed again because the GPU reached the start first
    given_up: bool = False  # the workload was late behind the longest hold: its times include the launch
    longest_ms: float = 0.0  # the longest hold a recorded repetition ran behind

    @property
    def active(self) -> bool:
        return not self.given_up

    def after(self, was_late: bool) -> bool:
        """Record one timed repetition; True: time it again (it was late and the hold can still grow)."""
        if self.given_up:
            return False
        if not was_late:
            self.longest_ms = max(self.longest_ms, self.hold_ms)
            return False
        self.late += 1
        if self.hold_ms >= self.most_ms:
            self.given_up = True
            return False
        self.hold_ms = min(self.most_ms, self.hold_ms * 2)
        return True

    def note(self) -> str:
        """How the repetitions were held, for the metric's timing note."""
        if self.given_up:
            return (
                f"not held: late behind a {self.most_ms:g} ms hold (the workload waits for the GPU), so its times "
                "include the launch"
            )
        retried = f", {self.late} late repetition(s) timed again" if self.late else ""
        return f"held behind a {self.longest_ms:.2g} ms spin while the launch was enqueued{retried}"


def hold_cycles(hold_ms: float, cycles_per_ms: float) -> int:
    """The spin kernel's length in SM clock cycles (at least one)."""
    return max(1, round(hold_ms * cycles_per_ms))
