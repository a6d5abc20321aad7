"""A linear regression fitted exactly: the targets are a fixed linear function of the inputs, with no
noise, so fp32 drives the loss down by orders of magnitude (Adam, 300 steps: from ~1e2 to ~1e-8). Under
bf16 autocast the matmul rounds its inputs to 8 significant bits (relative error ~2^-9), so the
prediction cannot get closer than that and the loss stalls near 5e-4: a precision-limited model.
Its final loss is tiny next to the initial one, which a rule scaled by the initial loss calls noise;
precision-check judges the end against fp32's end and says so:
`precision-check examples/precision_check/linear_regression.py:factory --steps 300`
The same size runs on the CPU and on a GPU (it is launch-bound there: speed is not its point)."""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import nn

from precision_check import Workload

FEATURES = 64
BATCH = 256
LEARNING_RATE = 0.04  # fp32 falls to ~1e-8 in 300 steps; bf16 stalls near 5e-4 from about step 200


def factory(device: str | None = None) -> Workload:
    """`device` is accepted (the check passes it) and not needed: one size fits both."""
    torch.manual_seed(0)
    weight, bias = torch.randn(FEATURES, 1), torch.randn(1)

    def batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
        x = torch.randn(BATCH, FEATURES)
        return x, x @ weight + bias

    def adam(params: Iterable[nn.Parameter]) -> torch.optim.Optimizer:
        return torch.optim.Adam(params, lr=LEARNING_RATE)

    return Workload(nn.Linear(FEATURES, 1), batch, nn.MSELoss(), adam)
