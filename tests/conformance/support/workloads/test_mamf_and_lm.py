"""The MAMF shape search and the transformer LM compile row, without a GPU: the search keeps the fastest shape and
stops at its budget, the LM step trains on the CPU, and the amortised speed-up is the arithmetic it claims."""

from __future__ import annotations

import math

import pytest
import torch

from conformance.support.workloads.mamf import Shape, best_of, search_grid, search_pass
from conformance.support.workloads.numerics import gemm_tflops
from conformance.support.workloads.repetition import Timings
from conformance.support.workloads.transformer_lm import LmShape, LmTiming, build, token_batch, train_step


def test_the_search_keeps_the_fastest_shape() -> None:
    grid: list[Shape] = [(1024, 1024, 1024), (2048, 2048, 2048), (4096, 1024, 2048)]
    times = {(1024, 1024, 1024): 0.01, (2048, 2048, 2048): 0.05, (4096, 1024, 2048): 0.06}
    timed = search_pass(grid, lambda s: [times[s]] * 3, budget_s=60.0)
    assert [shape for _, shape in timed] == [(2048, 2048, 2048), (4096, 1024, 2048), (1024, 1024, 1024)]
    assert timed[0][0] == pytest.approx(gemm_tflops(2048, 2048, 2048, 0.05))


def test_the_search_stops_at_its_budget_after_one_shape_at_least() -> None:
    ticks = iter(float(t) for t in range(100))
    timed = search_pass(search_grid(), lambda s: [1.0], budget_s=1.5, clock=lambda: next(ticks))
    assert len(timed) == 2  # started at 0; 1 <= 1.5 searches the second; 2 > 1.5 stops
    assert {shape for _, shape in timed} == set(search_grid()[:2])
    with pytest.raises(ValueError, match="empty"):
        search_pass([], lambda s: [1.0], budget_s=1.0)


def test_the_fixed_gemm_wins_only_when_it_is_faster() -> None:
    searched = (780.0, (4096, 4096, 8192))
    assert best_of(searched, (790.0, (8192, 8192, 8192))) == ((790.0, (8192, 8192, 8192)), "fixed GEMM")
    assert best_of(searched, (770.0, (8192, 8192, 8192))) == (searched, "search")
    assert best_of(searched, None) == (searched, "search")


def test_the_grid_is_the_documented_one() -> None:
    grid = search_grid()
    assert len(grid) == len(set(grid)) == 64
    assert (8192, 8192, 8192) in grid  # the suite's own GEMM is among the shapes searched


def test_the_lm_step_trains_on_the_cpu() -> None:
    shape = LmShape(blocks=2, width=32, heads=4, tokens=16, vocabulary=64, batch=4)
    device = torch.device("cpu")
    model, optimizer = build(shape, device)
    ids = token_batch(shape, device)
    losses = [float(train_step(model, optimizer, ids)) for _ in range(8)]
    assert all(math.isfinite(loss) for loss in losses)
    assert losses[-1] < losses[0]  # the same batch eight times: it must be learning it
    assert losses[0] == pytest.approx(math.log(shape.vocabulary), rel=0.2)  # untrained: about uniform


def _timed(ms: float) -> Timings:
    return Timings((ms,) * 5, "target", 0.0, 0.5)


def test_the_amortised_speed_up_charges_the_compile_time() -> None:
    timing = LmTiming(_timed(100.0), _timed(80.0), compile_s=20.0, tokens_per_step=16384, dynamo_graphs=2)
    assert timing.speedup == pytest.approx(1.25)
    assert timing.break_even_steps == pytest.approx(1000.0)  # 20 s saved 20 ms at a time
    assert timing.amortised_speedup(1000) == pytest.approx(100_000 / 100_000)
    assert timing.amortised_speedup(10_000) == pytest.approx(1_000_000 / 820_000)
    slower = LmTiming(_timed(100.0), _timed(120.0), compile_s=20.0, tokens_per_step=16384, dynamo_graphs=2)
    assert slower.break_even_steps is None
