"""A small CNN (conv, batch norm, pooling) classifying synthetic images by which quadrant is
brightest. `precision-check examples/precision_check/cnn.py:factory`
The factory takes the device the check runs on: on a GPU the model and batch grow so that the step
is compute-bound there; on the CPU the small size runs in seconds. PRECISION_CHECK_EXAMPLE_SIZE=small
or large overrides the choice."""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
from torch import nn

from precision_check import Workload

CONTRAST = 0.5  # the bright quadrant's offset; the noise has standard deviation 1: the loss falls steadily


@dataclass(frozen=True)
class Size:
    batch: int
    side: int
    width: int


SMALL = Size(batch=32, side=16, width=16)
LARGE = Size(batch=256, side=32, width=64)


def pick_size(device: str | None) -> Size:
    default = "large" if (device or ("cuda" if torch.cuda.is_available() else "cpu")) == "cuda" else "small"
    return LARGE if os.environ.get("PRECISION_CHECK_EXAMPLE_SIZE", default) == "large" else SMALL


def _block(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2))


class SmallCNN(nn.Module):
    def __init__(self, size: Size) -> None:
        super().__init__()
        w = size.width
        self.features = nn.Sequential(_block(1, w), _block(w, 2 * w), _block(2 * w, 4 * w))
        side = size.side // 8
        self.classifier = nn.Linear(4 * w * side * side, 4)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        logits: torch.Tensor = self.classifier(self.features(images).flatten(1))
        return logits


def images(size: Size) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch of noisy images, each brighter in one quadrant, and that quadrant's number (0-3)."""
    n, s = size.batch, size.side
    labels = torch.randint(0, 4, (n,))
    rows = torch.arange(s).view(1, s, 1) >= s // 2
    cols = torch.arange(s).view(1, 1, s) >= s // 2
    bright = (rows == (labels // 2).view(-1, 1, 1).bool()) & (cols == (labels % 2).view(-1, 1, 1).bool())
    return torch.randn(n, 1, s, s) + CONTRAST * bright.unsqueeze(1).float(), labels


def factory(device: str | None = None) -> Workload:
    size = pick_size(device)
    torch.manual_seed(0)
    return Workload(SmallCNN(size), lambda step: images(size), nn.CrossEntropyLoss())
