"""The timing harness's rule (harness 3 of ``pytorch_cuda_contract.results_format``), apart from the device.

What nvbench adds to CUDA-event timing, in plain Python so that it is tested without a GPU:

- the L2 cache flushed before every repetition (``TimingDevice.flush``: cuda_timing.py writes a buffer of
  ``flush_bytes`` on the stream, outside the events), so no repetition finds the last one's data in L2; on the GPU
  the flush also runs behind the launch hold (launch_hold.py), so no repetition's time holds a launch gap;
- repetitions until the median's relative standard error is at most ``Plan.target`` (after ``Plan.least`` of them),
  or until the time cap or the repetition cap ends them; ``Timings.stopped`` says which;
- several workloads measured interleaved (A, B, A, B: ``measure_interleaved``), so that a clock or thermal change
  during the measurement reaches both sides of a ratio alike, and the repetitions stop for all of them together.

The standard error of the median is distribution-free: the ranks j and k of the 95% interval of the median
(j = floor(n/2 - 1.96 sqrt(n)/2), k = ceil(1 + n/2 + 1.96 sqrt(n)/2), 1-based), its half-width / 1.96, as a share
of the median. One slow repetition moves it by one rank, not by its size.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from pytorch_cuda_contract.metrics import relative_spread, spread

Z95: Final = 1.96
FEWEST: Final = 3  # the time cap never stops the repetitions before this many
FALLBACK_FLUSH_BYTES: Final = 512 * 2**20  # where the card does not say its L2 size: larger than any L2 so far


class TimingDevice(Protocol):
    """Where the repetitions run: cuda_timing.CudaTiming on a GPU, a fake in the unit tests."""

    def flush(self) -> None:
        """Evict the L2 cache (enqueued before the repetition, outside its timing)."""

    def time_ms(self, fn: Callable[[], object]) -> float:
        """One call of ``fn``, timed (ms)."""
        ...

    def synchronize(self) -> None:
        """Wait for the work enqueued so far (the warm-up)."""

    def note(self) -> str:
        """How the device timed the repetitions (the launch hold), for the timing note; "" where nothing to say."""
        ...


@dataclass(frozen=True)
class Plan:
    """How long one number is measured: ``warmup`` calls, then at least ``least`` repetitions, until the median's
    relative standard error is at most ``target``, or ``cap_s`` seconds of repetitions, or ``most`` of them."""

    warmup: int = 3
    least: int = 10
    most: int = 1000
    target: float = 0.01
    cap_s: float = 1.0

    def __post_init__(self) -> None:
        if not (self.warmup >= 0 and FEWEST <= self.least <= self.most and self.target > 0 and self.cap_s > 0):
            raise ValueError(f"a timing plan needs warmup >= 0, {FEWEST} <= least <= most, target and cap > 0: {self}")


@dataclass(frozen=True)
class Timings:
    times_ms: tuple[float, ...]
    stopped: str  # pytorch_cuda_contract.results_format.STOPPED
    rel_error: float  # the median's relative standard error when the repetitions stopped
    seconds: float  # wall time of the repetitions
    device_note: str = ""  # TimingDevice.note: how the device held the repetitions

    @property
    def median_ms(self) -> float:
        return float(statistics.median(self.times_ms))

    def fields(self) -> dict[str, object]:
        """The metric fields of the times (ms): min/median/max, samples, relative spread, error, why it stopped."""
        return {**spread(list(self.times_ms)), "rel_error": self.rel_error, "stopped": self.stopped}

    def rate(self, work: float) -> tuple[float, dict[str, object]]:
        """Throughput (``work`` / s / 1e12) at the median time, with the fields of the per-repetition rates."""
        rates = [work / (t * 1e-3) / 1e12 for t in self.times_ms if t > 0]
        if not rates:
            return math.nan, {"samples": 0, "stopped": self.stopped}
        # the median rate is work / the median time: its relative error is the times' (to first order)
        fields = {**spread(rates), "rel_error": self.rel_error, "stopped": self.stopped}
        return float(statistics.median(rates)), fields


class EagerAndCompiled:
    """The per-repetition times of an eager and a compiled case timed in rounds (a dataclass with the fields
    ``eager`` and ``compiled`` takes these)."""

    eager: Timings
    compiled: Timings

    @property
    def eager_ms(self) -> list[float]:
        return list(self.eager.times_ms)

    @property
    def compiled_ms(self) -> list[float]:
        return list(self.compiled.times_ms)


def ratio(numerator: Timings, denominator: Timings) -> tuple[float, dict[str, object]]:
    """``numerator``'s median over ``denominator``'s (a speed-up: the slow side's time over the fast side's), with
    the spread of the per-round ratios (interleaved: round i of one against round i of the other) and the error of
    the ratio of two medians (their relative errors added in quadrature)."""
    paired = [a / b for a, b in zip(numerator.times_ms, denominator.times_ms, strict=True) if b > 0]
    rel_spread, rel_iqr = relative_spread(paired) if paired else (math.nan, math.nan)
    return numerator.median_ms / denominator.median_ms, {
        "samples": len(paired),
        "rel_spread": rel_spread,
        "rel_iqr": rel_iqr,
        "rel_error": math.hypot(numerator.rel_error, denominator.rel_error),
        "stopped": numerator.stopped,
    }


def median_rel_error(values: Sequence[float]) -> float:
    """The relative standard error of the median of ``values`` (the module's docstring); inf below 2 values."""
    n = len(values)
    if n < 2:
        return math.inf
    ordered = sorted(values)
    centre = statistics.median(ordered)
    if centre == 0:
        return math.inf
    half = Z95 * math.sqrt(n) / 2
    low = max(1, math.floor(n / 2 - half))
    high = min(n, math.ceil(1 + n / 2 + half))
    return (ordered[high - 1] - ordered[low - 1]) / (2 * Z95) / abs(centre)


def flush_bytes(l2_cache_size: int | None) -> int:
    """The size of the buffer written to flush the L2: twice the card's L2 (what it reports), else the fallback."""
    return 2 * l2_cache_size if l2_cache_size and l2_cache_size > 0 else FALLBACK_FLUSH_BYTES


def measure(
    fn: Callable[[], object], device: TimingDevice, plan: Plan, clock: Callable[[], float] = time.monotonic
) -> Timings:
    """One workload's repetitions under ``plan``."""
    return measure_interleaved({"only": fn}, device, plan, clock)["only"]


def measure_interleaved(
    cases: Mapping[str, Callable[[], object]],
    device: TimingDevice,
    plan: Plan,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Timings]:
    """Every case in rounds (A, B, A, B, each repetition after an L2 flush), until every case's median reaches the
    target error (after ``plan.least`` rounds), or the time cap or ``plan.most`` rounds end them all."""
    if not cases:
        raise ValueError("nothing to measure: no cases")
    for _ in range(plan.warmup):
        for fn in cases.values():
            fn()
    device.synchronize()
    times: dict[str, list[float]] = {name: [] for name in cases}
    started = clock()
    while True:
        for name, fn in cases.items():
            device.flush()
            times[name].append(device.time_ms(fn))
        rounds = len(times[next(iter(cases))])
        errors = {name: median_rel_error(values) for name, values in times.items()}
        elapsed = clock() - started
        if rounds >= plan.least and max(errors.values()) <= plan.target:
            stopped = "target"
        elif rounds >= plan.most:
            stopped = "max_reps"
        elif rounds >= FEWEST and elapsed >= plan.cap_s:
            stopped = "time_cap"
        else:
            continue
        note = device.note()
        return {name: Timings(tuple(times[name]), stopped, errors[name], elapsed, note) for name in cases}


def describe(timings: Timings, plan: Plan) -> str:
    """One line for a note: how many repetitions, why they stopped, the error reached."""
    why = {
        "target": f"the median's error reached {plan.target:.1%}",
        "time_cap": f"the {plan.cap_s:g} s cap stopped them short of {plan.target:.1%}",
        "max_reps": f"the cap of {plan.most} repetitions stopped them short of {plan.target:.1%}",
    }[timings.stopped]
    held = f"; {timings.device_note}" if timings.device_note else ""
    count = len(timings.times_ms)
    return f"{count} repetitions in {timings.seconds:.2f} s ({why}; error {timings.rel_error:.2%}){held}"
