"""A small CNN (conv, batch norm, pooling) classifying synthetic 16x16 images by which
quadrant is brightest. `precision-check examples/precision_check/cnn.py:factory`"""

from __future__ import annotations

import torch
from torch import nn

from precision_check import Workload

BATCH, SIZE = 32, 16


def _block(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2))


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(_block(1, 16), _block(16, 32), _block(32, 64))
        self.classifier = nn.Linear(64 * 2 * 2, 4)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        logits: torch.Tensor = self.classifier(self.features(images).flatten(1))
        return logits


def batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    labels = torch.randint(0, 4, (BATCH,))
    images = torch.randn(BATCH, 1, SIZE, SIZE) * 0.5
    half = SIZE // 2
    for i, label in enumerate(labels.tolist()):
        row, col = divmod(label, 2)
        images[i, 0, row * half : (row + 1) * half, col * half : (col + 1) * half] += 1.0
    return images, labels


def factory() -> Workload:
    torch.manual_seed(0)
    return Workload(SmallCNN(), batch, nn.CrossEntropyLoss())
