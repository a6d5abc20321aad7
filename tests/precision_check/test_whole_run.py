"""The whole run is watched, for real on the CPU: non-finite gradients per parameter in the backward pass
(with finite module outputs and a finite loss), the loss function's own output, and the zero-gradient
fraction at every step."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from precision_check.command import main
from precision_check.measure import LOSS_FUNCTION

MODELS = """
import torch


def batch(step):
    x = torch.randn(16, 4)
    return x, x.sum(dim=1, keepdim=True)


class SqrtAtZero(torch.nn.Module):
    # sqrt(0 * p): the output is 0 (finite), its gradient in p is inf * 0 = nan: broken in the backward only
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 1)
        self.p = torch.nn.Parameter(torch.ones(1))

    def forward(self, x):
        return self.lin(x) + torch.sqrt(self.p * 0.0)


class HalfDead(torch.nn.Module):
    # half of the hidden units are multiplied by 0: their weights' gradients are exactly zero at every step
    def __init__(self):
        super().__init__()
        self.hidden = torch.nn.Linear(4, 8)
        self.out = torch.nn.Linear(8, 1)
        self.register_buffer("mask", torch.tensor([1.0] * 4 + [0.0] * 4))

    def forward(self, x):
        return self.out(self.hidden(x) * self.mask)


def backward_nan():
    return SqrtAtZero(), batch, torch.nn.MSELoss()


def huge_loss():
    # finite model outputs; the loss function's own output overflows (1e39 > fp32's largest, 3.4e38)
    return torch.nn.Linear(4, 1), batch, lambda out, y: torch.nn.functional.mse_loss(out, y) * 1e39


def half_dead():
    return HalfDead(), batch, torch.nn.MSELoss()
"""


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], factory: str) -> tuple[dict[str, object], str]:
    (tmp_path / "models.py").write_text(MODELS)
    out = tmp_path / "report.json"
    argv = [f"{tmp_path}/models.py:{factory}", "--steps", "6", "--timed-steps", "1", "--device", "cpu"]
    assert main([*argv, "--json", str(out)]) == 0
    return json.loads(out.read_text()), capsys.readouterr().out


def test_a_nan_gradient_with_finite_outputs_is_named_by_parameter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc, printed = _run(tmp_path, capsys, "backward_nan")
    fp32 = doc["runs"]["fp32"]  # type: ignore[index]
    assert all(o["step"] > 0 for o in fp32["overflows"])  # step 0's forward pass was finite: it never saw it
    assert fp32["nonfinite_grads"][0] == {"parameter": "p", "step": 0}
    verdict = doc["verdict"]
    assert verdict["kind"] == "model-unstable"  # type: ignore[index]
    assert verdict["headline"].startswith(  # type: ignore[index]
        "fp32: fp32 itself has a non-finite gradient in `p` from step 0"
    )
    assert "first non-finite gradient: fp32 `p` at step 0" in printed


def test_the_loss_functions_own_output_is_watched(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc, _ = _run(tmp_path, capsys, "huge_loss")
    fp32 = doc["runs"]["fp32"]  # type: ignore[index]
    # step 0: the model's output is finite, the loss function's is not (then the weights go non-finite too)
    assert fp32["overflows"][0] == {"module": LOSS_FUNCTION, "step": 0, "max_abs": None}
    assert all(o["step"] > 0 for o in fp32["overflows"][1:])
    assert fp32["nonfinite_steps"] == list(range(6))
    assert doc["verdict"]["kind"] == "model-unstable"  # type: ignore[index]


def test_zero_gradients_are_measured_at_every_step(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc, printed = _run(tmp_path, capsys, "half_dead")
    zeros = doc["runs"]["bf16"]["zero_grad_fractions"]  # type: ignore[index]
    assert len(zeros) == 6
    # hidden.weight (16 of 32 zero), hidden.bias (4 of 8) and out.weight (4 of 8) of 49 elements: 24/49
    assert zeros == pytest.approx([24 / 49] * 6)
    assert "zero gradients over the last step: fp32 48.98%, bf16 48.98%" in printed
    assert doc["verdict"]["kind"] == "numerics-only"  # type: ignore[index]
