"""A small causal transformer on a synthetic language: each sequence counts up from a random
token in steps of 1 or 3 (mod 64); the model predicts the next token, so it must read the
stride off the context. `precision-check examples/precision_check/transformer.py:factory`
On a GPU the model and batch grow (set PRECISION_CHECK_EXAMPLE_SIZE=small or large to choose) so
that the step is compute-bound there; the small size runs on a CPU in seconds."""

from __future__ import annotations

import os

import torch
from torch import nn

from precision_check import Workload

LARGE = os.environ.get("PRECISION_CHECK_EXAMPLE_SIZE", "large" if torch.cuda.is_available() else "small") == "large"
VOCAB = 64
WIDTH, LENGTH, BATCH, LAYERS = (512, 256, 32, 4) if LARGE else (64, 32, 16, 2)


class TinyTransformer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.position = nn.Parameter(torch.randn(LENGTH, WIDTH) * 0.02)
        layer = nn.TransformerEncoderLayer(WIDTH, nhead=4, dim_feedforward=4 * WIDTH, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=LAYERS, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(WIDTH)
        self.head = nn.Linear(WIDTH, VOCAB)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(LENGTH), persistent=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens) + self.position
        x = self.encoder(x, mask=self.mask, is_causal=True)
        logits: torch.Tensor = self.head(self.norm(x))
        return logits


def batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    start = torch.randint(0, VOCAB, (BATCH, 1))
    stride = torch.randint(0, 2, (BATCH, 1)) * 2 + 1
    sequence = (start + stride * torch.arange(LENGTH + 1)) % VOCAB
    return sequence[:, :LENGTH], sequence[:, 1:]


def loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return nn.functional.cross_entropy(logits.reshape(-1, VOCAB).float(), target.reshape(-1))


def factory() -> Workload:
    torch.manual_seed(0)
    return Workload(TinyTransformer(), batch, loss, optimizer=lambda params: torch.optim.AdamW(params, lr=3e-3))
