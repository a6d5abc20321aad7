"""The factory contract's optional parts: a `device` argument, and clip_grad_norm (applied after unscaling)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from precision_check.bad_input import PrecisionCheckError
from precision_check.check_report import Device
from precision_check.command import main
from precision_check.loading import call_factory
from precision_check.trainer import Trainer
from precision_check.workload import Workload, coerce_workload

CPU = Device("cpu", "test CPU", None, None, torch.__version__)


def test_a_factory_with_a_device_parameter_is_told_the_device(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "model.py").write_text(
        "import torch\n"
        "SEEN = []\n"
        "def factory(device=None):\n"
        "    SEEN.append(device)\n"
        "    return torch.nn.Linear(3, 1), lambda s: (torch.randn(4, 3), torch.randn(4, 1)), torch.nn.MSELoss()\n"
    )
    status = main([f"{tmp_path}/model.py:factory", "--steps", "5", "--timed-steps", "1", "--device", "cpu"])
    assert status == 0, capsys.readouterr().err
    assert sys.modules["precision_check_user_model"].SEEN == ["cpu"]


def test_call_factory_passes_device_only_to_factories_that_take_it() -> None:
    assert call_factory(lambda: "plain", "m:f", "cuda") == "plain"
    assert call_factory(lambda device: device, "m:f", "cuda") == "cuda"
    assert call_factory(lambda *, device="cpu": device, "m:f", "cuda") == "cuda"


@pytest.mark.parametrize("bad", [0, -1.0, "1.0", True])
def test_clip_grad_norm_must_be_a_positive_number(bad: object) -> None:
    parts = {"model": torch.nn.Linear(2, 1), "batch": lambda s: None, "loss": torch.nn.MSELoss(), "clip_grad_norm": bad}
    with pytest.raises(PrecisionCheckError, match="clip_grad_norm of"):
        coerce_workload(parts, "m:f")
    assert coerce_workload(parts | {"clip_grad_norm": 2}, "m:f").clip_grad_norm == 2.0


def _one_step(dtype: str, clip: float | None) -> float:
    """The size of one SGD(lr=1) update: the (clipped) gradient's norm."""
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1)
    workload = Workload(
        model,
        lambda step: ((torch.randn(16, 8),), torch.full((16,), 0.5)),
        lambda out, y: ((out.squeeze(-1) - y) ** 2).mean(),
        lambda params: torch.optim.SGD(params, lr=1.0),
        clip,
    )
    before = torch.cat([p.detach().flatten().clone() for p in model.parameters()])
    torch.manual_seed(1)
    batch = workload.batch(0)
    Trainer(model, workload, dtype, CPU).step(model, batch)
    after = torch.cat([p.detach().flatten() for p in model.parameters()])
    return float((after - before).norm())


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_clipping_limits_the_step_to_the_norm_of_the_true_gradient(dtype: str) -> None:
    assert _one_step(dtype, None) > 0.1  # unclipped: a hundred times the clip norm
    # fp16: GradScaler unscales before clipping; clipping the scaled gradient would give 1e-3 / 65536.
    assert _one_step(dtype, 1e-3) == pytest.approx(1e-3, rel=0.01)
