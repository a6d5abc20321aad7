"""An unnormalised MLP whose `expand` layer puts out activations of ~1e5, beyond fp16's
largest value (65504): fp16 overflows there, bf16 (fp32's range) does not. Built to fail
in fp16. `precision-check examples/precision_check/overflow_mlp.py:factory`
On a GPU the model and batch grow (set PRECISION_CHECK_EXAMPLE_SIZE=small or large to choose) so
that the step is compute-bound there; the small size runs on a CPU in seconds."""

from __future__ import annotations

import os

import torch
from torch import nn

from precision_check import Workload

LARGE = os.environ.get("PRECISION_CHECK_EXAMPLE_SIZE", "large" if torch.cuda.is_available() else "small") == "large"
BATCH, WIDTH = (8192, 1024) if LARGE else (64, 32)


class LargeActivationMLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inp = nn.Linear(WIDTH, WIDTH)
        self.expand = nn.Linear(WIDTH, 4 * WIDTH)  # no normalisation anywhere: large weights stay large
        self.head = nn.Linear(4 * WIDTH, 1)
        with torch.no_grad():
            self.expand.weight.mul_(20000.0)  # outputs up to ~2e5 on inputs of size ~10

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = torch.relu(self.expand(torch.relu(self.inp(x))))
        out: torch.Tensor = self.head(hidden * 1e-4)  # scaled back down: only `expand` leaves fp16's range
        return out.squeeze(-1)


def batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randn(BATCH, WIDTH) * 10.0
    return x, x[:, :4].sum(dim=1)


def factory() -> Workload:
    torch.manual_seed(0)
    return Workload(LargeActivationMLP(), batch, nn.MSELoss())
