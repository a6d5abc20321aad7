"""An unnormalised MLP whose `expand` layer puts out activations of ~1e5, beyond fp16's
largest value (65504): fp16 overflows there, bf16 (fp32's range) does not. Built to fail
in fp16. `precision-check examples/precision_check/overflow_mlp.py:factory`
The factory takes the device the check runs on: on a GPU the model and batch grow so that the step
is compute-bound there; on the CPU the small size runs in seconds. PRECISION_CHECK_EXAMPLE_SIZE=small
or large overrides the choice."""

from __future__ import annotations

import os

import torch
from torch import nn

from precision_check import Workload


def pick_size(device: str | None) -> tuple[int, int]:
    """(batch, width)"""
    default = "large" if (device or ("cuda" if torch.cuda.is_available() else "cpu")) == "cuda" else "small"
    return (8192, 1024) if os.environ.get("PRECISION_CHECK_EXAMPLE_SIZE", default) == "large" else (64, 32)


class LargeActivationMLP(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.inp = nn.Linear(width, width)
        self.expand = nn.Linear(width, 4 * width)  # no normalisation anywhere: large weights stay large
        self.head = nn.Linear(4 * width, 1)
        with torch.no_grad():
            self.expand.weight.mul_(20000.0)  # outputs up to ~2e5 on inputs of size ~10

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = torch.relu(self.expand(torch.relu(self.inp(x))))
        out: torch.Tensor = self.head(hidden * 1e-4)  # scaled back down: only `expand` leaves fp16's range
        return out.squeeze(-1)


def factory(device: str | None = None) -> Workload:
    batch, width = pick_size(device)

    def inputs(step: int) -> tuple[torch.Tensor, torch.Tensor]:
        x = torch.randn(batch, width) * 10.0
        return x, x[:, :4].sum(dim=1)

    torch.manual_seed(0)
    return Workload(LargeActivationMLP(width), inputs, nn.MSELoss())
