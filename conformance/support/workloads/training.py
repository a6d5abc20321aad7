"""A tiny regression task and training loop for the AMP and DDP checks."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from conformance.support.workloads.numerics import seeded_randn


@dataclass(frozen=True)
class TrainingResult:
    losses: tuple[float, ...]

    @property
    def first(self) -> float:
        return self.losses[0]

    @property
    def last(self) -> float:
        return self.losses[-1]

    @property
    def all_finite(self) -> bool:
        return all(torch.isfinite(torch.tensor(self.losses)).tolist())


def make_mlp(in_features: int, hidden: int, out_features: int, seed: int) -> torch.nn.Sequential:
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(in_features, hidden),
        torch.nn.GELU(),
        torch.nn.Linear(hidden, hidden),
        torch.nn.GELU(),
        torch.nn.Linear(hidden, out_features),
    )


def regression_data(samples: int, features: int, seed: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and targets of a fixed smooth teacher function."""
    x = seeded_randn((samples, features), seed=seed, device=device)
    teacher = seeded_randn((features, 1), seed=seed + 1, device=device) / features**0.5
    y = torch.sin(3.0 * (x @ teacher)) + 0.5 * (x[:, :1] ** 2 - 1.0)
    return x, y


def train_regression(
    device: torch.device, mode: str, steps: int = 100, seed: int = 0, lr: float = 3e-3
) -> TrainingResult:
    """Train the MLP full-batch with Adam. ``mode``: "fp32", "fp16" (autocast + GradScaler) or "bf16" (autocast)."""
    x, y = regression_data(2048, 32, seed=seed + 100, device=device)
    model = make_mlp(32, 256, 1, seed=seed).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    autocast_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(mode)
    scaler = torch.amp.GradScaler(device.type, enabled=mode == "fp16")
    losses = []
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device.type, dtype=autocast_dtype or torch.float32, enabled=autocast_dtype is not None):
            prediction = model(x)
            loss = torch.nn.functional.mse_loss(prediction.float(), y)
        torch.autograd.backward(scaler.scale(loss))
        scaler.step(optimizer)
        scaler.update()
        losses.append(float(loss.detach()))
    return TrainingResult(tuple(losses))
