"""A picklable dataset for the DataLoader check (workers may be spawned)."""

from __future__ import annotations

import torch
from torch.utils.data import Dataset


class ChunkDataset(Dataset[torch.Tensor]):
    """Item i is a float32 tensor of ``numel`` elements all equal to i."""

    def __init__(self, items: int, numel: int) -> None:
        self.items = items
        self.numel = numel

    def __len__(self) -> int:
        return self.items

    def __getitem__(self, index: int) -> torch.Tensor:
        return torch.full((self.numel,), float(index), dtype=torch.float32)
