"""The timing harness's rule (support/workloads/repetition.py) on a fake device and clock: when the repetitions
stop and why, the L2 flush before each one, the interleaving order, and the spread recorded with each number."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest

from conformance.support.workloads.repetition import (
    FALLBACK_FLUSH_BYTES,
    FEWEST,
    Plan,
    Timings,
    describe,
    flush_bytes,
    measure,
    measure_interleaved,
    median_rel_error,
    ratio,
)
from pytorch_cuda_contract.metrics import build_metric
from pytorch_cuda_contract.results_format import STOPPED


@dataclass
class FakeGpu:
    """The device boundary: each workload appends its name to ``log`` when called; ``time_ms`` returns the next of
    that workload's times and moves the clock by ``seconds_per_call``."""

    times: dict[str, Iterator[float]]
    seconds_per_call: float = 0.01
    now: float = 0.0
    log: list[str] = field(default_factory=list)

    def clock(self) -> float:
        return self.now

    def flush(self) -> None:
        self.log.append("flush")

    def time_ms(self, fn: Callable[[], object]) -> float:
        fn()
        self.now += self.seconds_per_call
        return next(self.times[self.log[-1]])

    def synchronize(self) -> None:
        self.log.append("sync")

    def note(self) -> str:
        return "held behind a 0.05 ms spin"

    def workload(self, name: str) -> Callable[[], object]:
        return lambda: self.log.append(name)


def steady(value: float) -> Iterator[float]:
    return itertools.repeat(value)


def noisy(low: float, high: float) -> Iterator[float]:
    return itertools.cycle([low, high])


def test_a_quiet_workload_stops_at_the_target_after_the_least_count() -> None:
    gpu = FakeGpu({"gemm": steady(2.0)})
    plan = Plan(warmup=3, least=10, target=0.01, cap_s=100.0)
    timings = measure(gpu.workload("gemm"), gpu, plan, gpu.clock)
    assert timings.stopped == "target"
    assert len(timings.times_ms) == 10
    assert timings.rel_error == 0.0
    assert "the median's error reached 1.0%" in describe(timings, plan)
    assert describe(timings, plan).endswith("; held behind a 0.05 ms spin")  # the device's note, with each number


def test_repetitions_go_on_until_the_error_reaches_the_target() -> None:
    # a slow outlier every 8th call: at 10 repetitions the interval of the median still reaches it; later not
    gpu = FakeGpu({"conv": itertools.cycle([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.5])})
    plan = Plan(warmup=0, least=10, target=0.01, cap_s=100.0)
    timings = measure(gpu.workload("conv"), gpu, plan, gpu.clock)
    assert timings.stopped == "target"
    assert len(timings.times_ms) > 10
    assert timings.rel_error <= 0.01
    assert median_rel_error(timings.times_ms[:-1]) > 0.01  # one repetition fewer was not enough


def test_a_noisy_workload_stops_at_the_time_cap_and_says_so() -> None:
    gpu = FakeGpu({"sdpa": noisy(1.0, 1.3)}, seconds_per_call=0.05)
    plan = Plan(warmup=2, least=10, target=0.01, cap_s=1.0)
    timings = measure(gpu.workload("sdpa"), gpu, plan, gpu.clock)
    assert timings.stopped == "time_cap"
    assert len(timings.times_ms) == 20  # 20 x 0.05 s reaches the 1 s cap
    assert timings.rel_error > 0.01
    assert timings.seconds == pytest.approx(1.0)
    assert "the 1 s cap stopped them short of 1.0%" in describe(timings, plan)


def test_the_time_cap_leaves_at_least_the_fewest_repetitions() -> None:
    gpu = FakeGpu({"amp": noisy(100.0, 130.0)}, seconds_per_call=5.0)  # a slow card: every call beyond the cap
    timings = measure(gpu.workload("amp"), gpu, Plan(warmup=0, least=8, cap_s=1.0), gpu.clock)
    assert (timings.stopped, len(timings.times_ms)) == ("time_cap", FEWEST)


def test_the_repetition_cap_stops_a_fast_noisy_workload() -> None:
    gpu = FakeGpu({"tiny": noisy(0.1, 0.2)}, seconds_per_call=1e-6)
    plan = Plan(warmup=0, least=10, most=40, cap_s=60.0)
    timings = measure(gpu.workload("tiny"), gpu, plan, gpu.clock)
    assert (timings.stopped, len(timings.times_ms)) == ("max_reps", 40)
    assert "the cap of 40 repetitions" in describe(timings, plan)


def test_the_l2_is_flushed_before_every_repetition_and_not_during_the_warm_up() -> None:
    gpu = FakeGpu({"gemm": steady(2.0)})
    measure(gpu.workload("gemm"), gpu, Plan(warmup=3, least=10), gpu.clock)
    warm_up, timed = gpu.log[: gpu.log.index("sync")], gpu.log[gpu.log.index("sync") + 1 :]
    assert warm_up == ["gemm"] * 3
    assert timed == ["flush", "gemm"] * 10


def test_interleaved_workloads_alternate_and_stop_together() -> None:
    # fp32 is quiet, fp16 noisy: both go on until fp16's error reaches the target (here: the cap)
    gpu = FakeGpu({"fp32": steady(100.0), "fp16": noisy(16.0, 20.0)}, seconds_per_call=0.1)
    plan = Plan(warmup=2, least=5, target=0.01, cap_s=1.2)
    cases = {"fp32": gpu.workload("fp32"), "fp16": gpu.workload("fp16")}
    timed = measure_interleaved(cases, gpu, plan, gpu.clock)
    assert gpu.log[: gpu.log.index("sync")] == ["fp32", "fp16", "fp32", "fp16"]
    rounds = gpu.log[gpu.log.index("sync") + 1 :]
    assert rounds == ["flush", "fp32", "flush", "fp16"] * 6  # A, B, A, B: each repetition after a flush
    assert {name: len(t.times_ms) for name, t in timed.items()} == {"fp32": 6, "fp16": 6}
    assert timed["fp32"].stopped == timed["fp16"].stopped == "time_cap"
    assert timed["fp32"].rel_error == 0.0
    assert timed["fp16"].rel_error > 0.01


def test_a_speed_up_records_the_spread_of_its_rounds_and_the_error_of_both_sides() -> None:
    fp32 = Timings((100.0, 110.0, 100.0, 104.0), "target", 0.03, 1.0)
    fp16 = Timings((20.0, 22.0, 20.0, 20.0), "target", 0.04, 1.0)
    value, fields = ratio(fp32, fp16)
    assert value == pytest.approx(102.0 / 20.0)
    assert fields["samples"] == 4
    assert fields["rel_error"] == pytest.approx(0.05)  # 3% and 4% in quadrature
    assert fields["rel_spread"] == pytest.approx((5.2 - 5.0) / 5.0)  # round by round: 5, 5, 5, 5.2
    assert fields["stopped"] == "target"


def test_the_rate_carries_the_spread_and_its_count_into_the_results_format() -> None:
    timings = Timings((2.0, 2.0, 2.5, 2.0), "time_cap", 0.05, 1.0)
    tflops, fields = timings.rate(4e12)
    assert tflops == pytest.approx(2000.0)
    assert fields["samples"] == 4
    assert fields["min"] == pytest.approx(1600.0)
    assert fields["rel_spread"] == pytest.approx(400.0 / 2000.0)
    assert (fields["rel_error"], fields["stopped"]) == (0.05, "time_cap")  # as the repetitions stopped
    metric = build_metric(tflops, "TFLOP/s", fields)
    assert {"rel_spread", "rel_iqr", "rel_error", "stopped", "samples"} <= set(metric)
    assert metric["stopped"] in STOPPED
    with pytest.raises(ValueError, match="stopped must be one of"):
        build_metric(1.0, "x", {"stopped": "tired"})


def test_the_median_error_is_the_interval_of_the_median() -> None:
    values = [float(v) for v in range(1, 21)]  # n = 20: ranks 5 and 16 of the 95% interval
    assert median_rel_error(values) == pytest.approx((16 - 5) / (2 * 1.96) / 10.5)
    spiked = [*values[:-1], 1e6]  # one huge outlier moves the interval by nothing more than its rank
    assert median_rel_error(spiked) == pytest.approx(median_rel_error(values))
    assert math.isinf(median_rel_error([1.0]))


def test_the_flush_buffer_is_twice_the_l2_or_the_fallback() -> None:
    assert flush_bytes(50 * 2**20) == 100 * 2**20  # an H100's 50 MiB
    assert flush_bytes(None) == flush_bytes(0) == FALLBACK_FLUSH_BYTES


@pytest.mark.parametrize("bad", [{"least": 2}, {"least": 20, "most": 10}, {"target": 0.0}, {"cap_s": 0.0}])
def test_a_plan_that_cannot_measure_is_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="a timing plan needs"):
        Plan(**bad)  # type: ignore[arg-type]
