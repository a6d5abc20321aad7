"""A model that is chaotic in fp32 itself, for the noise-floor tests: the transformer example as it
was before it was made stable (post-LayerNorm encoder layers, no clipping), at the CPU size, with AdamW
at lr 3e-2. Its loss still falls, but two fp32 runs whose initial weights differ by one bf16
rounding end up tens of percent apart: half precision must not be blamed for that.

    python -m precision_check tests/precision_check/chaotic_transformer.py:factory --device cpu \\
        --dtypes fp32,fp16,bf16 --json tests/precision_check/recorded/chaotic_transformer.cpu.json
"""

from __future__ import annotations

import torch
from torch import nn

from precision_check import Workload

VOCAB, WIDTH, LENGTH, BATCH, LAYERS = 64, 64, 32, 16, 2
LEARNING_RATE = 3e-2


class PostNormTransformer(nn.Module):
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
    """Sequences counting up from a random token in steps of 1 or 3 (mod VOCAB)."""
    start = torch.randint(0, VOCAB, (BATCH, 1))
    stride = torch.randint(0, 2, (BATCH, 1)) * 2 + 1
    sequence = (start + stride * torch.arange(LENGTH + 1)) % VOCAB
    return sequence[:, :LENGTH], sequence[:, 1:]


def loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return nn.functional.cross_entropy(logits.reshape(-1, VOCAB).float(), target.reshape(-1))


def factory() -> Workload:
    torch.manual_seed(0)
    return Workload(
        PostNormTransformer(), batch, loss, optimizer=lambda params: torch.optim.AdamW(params, lr=LEARNING_RATE)
    )
