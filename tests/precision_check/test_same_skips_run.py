"""The runner's fp32 run that skips fp16's skipped steps, for real on the CPU (see test_skipped_steps.py)."""

from __future__ import annotations

import pytest
import torch

from precision_check.agreement import agreement
from precision_check.device import pick_device
from precision_check.runner import Options, run_all
from precision_check.trainer import Trainer
from precision_check.workload import Workload


def _regression() -> Workload:
    """Targets near 100: the first gradients, times GradScaler's 65536, overflow fp16, so it skips
    steps until the scale is small enough; after that fp16 trains like fp32."""
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 16)

    def batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.randn(32, 16), 100.0 + torch.randn(32, 16)

    return Workload(model, batch, torch.nn.functional.mse_loss, lambda params: torch.optim.SGD(params, lr=1e-3))


def test_a_step_without_update_computes_the_loss_and_changes_no_weight() -> None:
    workload = _regression()
    device, _ = pick_device("cpu")
    trainer = Trainer(workload.model, workload, "fp32", device)
    before = {k: v.clone() for k, v in workload.model.state_dict().items()}
    batch = ((torch.randn(32, 16),), torch.randn(32, 16))
    loss = trainer.step(workload.model, batch, update=False)
    assert all(torch.equal(before[k], v) for k, v in workload.model.state_dict().items())
    assert loss.item() == pytest.approx(trainer.loss(workload.model, batch).item())
    trainer.step(workload.model, batch)
    assert not torch.equal(before["weight"], workload.model.weight)


def test_fp16_is_compared_with_fp32_skipping_the_same_steps() -> None:
    device, _ = pick_device("cpu")
    options = Options(steps=12, dtypes=("fp32", "fp16"), warmup=1, timed_steps=2)
    lines: list[str] = []
    m = run_all(_regression(), options, device, [], lines.append)
    fp32, fp16 = m.run("fp32"), m.run("fp16")
    assert fp32 is not None
    assert fp16 is not None
    assert fp16.scaler is not None
    skipped = fp16.scaler.skipped_steps
    same = fp16.scaler.fp32_same_skips
    assert skipped == tuple(range(len(skipped))), fp16.scaler  # the first steps, while it finds its scale
    assert 0 < len(skipped) < options.steps - 2
    assert same is not None
    assert len(same) == options.steps
    # step 0 is the same forward pass in both fp32 runs; from step 1 the one that skips has not moved
    assert same[0] == fp32.losses[0]
    assert same[1] != fp32.losses[1]
    # and it trails fp32, which has been learning since step 0
    assert same[-1] is not None
    assert fp32.losses[-1] is not None
    assert same[-1] > fp32.losses[-1]
    assert (fp16.rel_diff_final, fp16.rel_diff_max, fp16.rel_diff_max_step) == agreement(fp16.losses, same)
    assert any(line.startswith(f"[fp32 skipping fp16's skipped steps {skipped[0]}") for line in lines), lines
