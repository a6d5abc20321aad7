"""A small CNN (conv, batch norm, pooling) classifying synthetic images by which
quadrant is brightest. `precision-check examples/precision_check/cnn.py:factory`
On a GPU the model and batch grow (set PRECISION_CHECK_EXAMPLE_SIZE=small or large to choose) so
that the step is compute-bound there; the small size runs on a CPU in seconds."""

from __future__ import annotations

import os

import torch
from torch import nn

from precision_check import Workload

LARGE = os.environ.get("PRECISION_CHECK_EXAMPLE_SIZE", "large" if torch.cuda.is_available() else "small") == "large"
BATCH, SIZE, WIDTH = (256, 32, 64) if LARGE else (32, 16, 16)


def _block(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2))


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(_block(1, WIDTH), _block(WIDTH, 2 * WIDTH), _block(2 * WIDTH, 4 * WIDTH))
        side = SIZE // 8
        self.classifier = nn.Linear(4 * WIDTH * side * side, 4)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        logits: torch.Tensor = self.classifier(self.features(images).flatten(1))
        return logits


def batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    labels = torch.randint(0, 4, (BATCH,))
    rows = torch.arange(SIZE).view(1, SIZE, 1) >= SIZE // 2
    cols = torch.arange(SIZE).view(1, 1, SIZE) >= SIZE // 2
    bright = (rows == (labels // 2).view(-1, 1, 1).bool()) & (cols == (labels % 2).view(-1, 1, 1).bool())
    return torch.randn(BATCH, 1, SIZE, SIZE) * 0.5 + bright.unsqueeze(1).float(), labels


def factory() -> Workload:
    torch.manual_seed(0)
    return Workload(SmallCNN(), batch, nn.CrossEntropyLoss())
