"""Batches: each step's batch is made once and handed to every dtype's run, as the same data."""

from __future__ import annotations

import torch

from precision_check.check_report import Device
from precision_check.runner import Options, run_all
from precision_check.trainer import Batch, Batches
from precision_check.workload import Workload


class _CountingBatch:
    def __init__(self) -> None:
        self.calls: list[int] = []

    def __call__(self, step: int) -> Batch:
        self.calls.append(step)
        x = torch.randn(8, 4)
        return (x,), x.sum(dim=1, keepdim=True)


class _DropoutThenMutate(torch.nn.Module):
    """Dropout draws from the RNG, and the model changes its input in place."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 1)
        self.dropout = torch.nn.Dropout(0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.linear(self.dropout(x))
        x.mul_(0.0)
        return out


def _workload(batch: _CountingBatch) -> Workload:
    torch.manual_seed(0)
    return Workload(_DropoutThenMutate(), batch, torch.nn.functional.mse_loss)


def test_every_dtype_run_reuses_the_batches_and_sees_the_same_data() -> None:
    batch = _CountingBatch()
    options = Options(steps=6, dtypes=("fp32", "bf16"), warmup=1, timed_steps=2)
    lines: list[str] = []
    measured = run_all(_workload(batch), options, Device("cpu", "CPU"), [], progress=lines.append)
    # 6 steps for fp32, its control and bf16, plus the timed and zero-grad batches: each step made once.
    assert sorted(batch.calls) == list(range(6)), batch.calls
    # The control run (fp32 again, weights nudged by 2^-9) tracks fp32 closely only when its batches and
    # dropout masks are the same as fp32's: a mutated input (zeros) or a different mask would show.
    floor = measured.noise_floor
    assert floor is not None
    assert floor.rel_diff_max is not None
    assert floor.rel_diff_max < 0.05, floor
    assert lines[0] == "[fp32] 6 steps, then 2 timed"
    assert any(line.startswith("[fp32 control]") for line in lines)
    assert lines[-1].startswith("[bf16] done in ")


def test_a_kept_batch_is_a_copy_and_the_step_rng_is_reseeded_either_way() -> None:
    batch = _CountingBatch()
    batches = Batches(_workload(batch), "cpu", seed=7)
    (first,), _ = batches.get(3)
    after_made = torch.rand(3)
    first.mul_(0.0)  # a model that changes its input in place
    (again,), _ = batches.get(3)
    after_kept = torch.rand(3)
    assert batch.calls == [3]
    assert bool(again.abs().sum() > 0)
    assert torch.equal(after_made, after_kept)


def test_past_the_budget_batches_are_made_again_with_the_same_seed() -> None:
    batch = _CountingBatch()
    batches = Batches(_workload(batch), "cpu", seed=0, budget=0)
    (one,), _ = batches.get(2)
    (two,), _ = batches.get(2)
    assert batch.calls == [2, 2]
    assert torch.equal(one, two)
