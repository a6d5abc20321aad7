"""A small pre-LayerNorm causal transformer (a GPT-style decoder) learning a fixed random Markov chain.

The teacher is a first-order Markov chain over VOCAB tokens, drawn once from its own seed: each
token has a few likely successors. The model reads sequences sampled from the chain and predicts
every next token, so its loss falls steadily from ln(VOCAB) toward the chain's entropy rate
(`Teacher.entropy_rate()`), the best any model can do. Pre-LayerNorm blocks, GPT-2's small
initialisation, AdamW at 3e-4 and gradient clipping at norm 1.0 keep fp32 training steady, so the
check compares precisions on a model that is not chaotic in fp32 itself.

    precision-check examples/precision_check/transformer.py:factory

The factory takes the device the check runs on: on a GPU the model and batch are large enough that
the step is compute-bound and half precision pays; on the CPU a small size runs in seconds.
PRECISION_CHECK_EXAMPLE_SIZE=small or large overrides the choice.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional

from precision_check import Workload


@dataclass(frozen=True)
class Size:
    vocab: int
    width: int
    heads: int
    layers: int
    length: int
    batch: int


SMALL = Size(vocab=64, width=64, heads=4, layers=2, length=64, batch=16)
LARGE = Size(vocab=1024, width=768, heads=12, layers=6, length=512, batch=32)


def pick_size(device: str | None) -> Size:
    default = "large" if (device or ("cuda" if torch.cuda.is_available() else "cpu")) == "cuda" else "small"
    return LARGE if os.environ.get("PRECISION_CHECK_EXAMPLE_SIZE", default) == "large" else SMALL


class Teacher:
    """A random Markov chain: row i of `transitions` is the distribution of the token after token i."""

    def __init__(self, vocab: int, sharpness: float = 3.0, seed: int = 1234) -> None:
        generator = torch.Generator().manual_seed(seed)
        self.transitions = torch.softmax(sharpness * torch.randn(vocab, vocab, generator=generator), dim=-1)
        self.cumulative = self.transitions.cumsum(dim=-1)

    def sample(self, batch: int, length: int) -> torch.Tensor:
        """`batch` sequences of `length` tokens from a uniform start (torch's global RNG: seeded per step).

        Inverse-CDF sampling from one uniform draw per token: a chain is sequential, but each position
        is one gather and one searchsorted (about 20x faster than torch.multinomial per position)."""
        vocab = self.transitions.shape[0]
        uniform = torch.rand(length, batch, 1)  # position-major: uniform[t] is contiguous for searchsorted
        tokens = torch.empty(length, batch, dtype=torch.long)
        tokens[0] = (uniform[0, :, 0] * vocab).long().clamp_(max=vocab - 1)
        for t in range(1, length):
            rows = self.cumulative[tokens[t - 1]]
            tokens[t] = torch.searchsorted(rows, uniform[t]).squeeze(1).clamp_(max=vocab - 1)
        return tokens.t().contiguous()

    def entropy_rate(self) -> float:
        """The chain's entropy per token in nats under its stationary distribution: the lowest reachable loss."""
        p = self.transitions.double()
        stationary = torch.full((p.shape[0],), 1.0 / p.shape[0], dtype=torch.float64)
        for _ in range(200):
            stationary = stationary @ p
        rows = -(p * p.log()).sum(dim=1)
        return float((stationary * rows).sum())


class Attention(nn.Module):
    def __init__(self, size: Size) -> None:
        super().__init__()
        self.heads = size.heads
        self.qkv = nn.Linear(size.width, 3 * size.width)
        self.proj = nn.Linear(size.width, size.width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, width = x.shape
        q, k, v = self.qkv(x).view(batch, length, 3, self.heads, width // self.heads).permute(2, 0, 3, 1, 4)
        y = functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        out: torch.Tensor = self.proj(y.transpose(1, 2).reshape(batch, length, width))
        return out


class Block(nn.Module):
    """Pre-LayerNorm: x + attn(norm(x)), then x + mlp(norm(x)); the residual stream is never normalised away."""

    def __init__(self, size: Size) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(size.width)
        self.attn = Attention(size)
        self.norm2 = nn.LayerNorm(size.width)
        self.mlp = nn.Sequential(
            nn.Linear(size.width, 4 * size.width), nn.GELU(), nn.Linear(4 * size.width, size.width)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        out: torch.Tensor = x + self.mlp(self.norm2(x))
        return out


class Decoder(nn.Module):
    def __init__(self, size: Size) -> None:
        super().__init__()
        self.embed = nn.Embedding(size.vocab, size.width)
        self.position = nn.Embedding(size.length, size.width)
        self.blocks = nn.ModuleList(Block(size) for _ in range(size.layers))
        self.norm = nn.LayerNorm(size.width)
        self.head = nn.Linear(size.width, size.vocab)
        for name, param in self.named_parameters():  # GPT-2: N(0, 0.02), residual projections scaled down by depth
            if name.endswith("bias"):
                nn.init.zeros_(param)
            elif param.dim() == 2:
                std = 0.02 / math.sqrt(2 * size.layers) if name.endswith(("proj.weight", "mlp.2.weight")) else 0.02
                nn.init.normal_(param, std=std)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.embed(tokens) + self.position(positions)
        for block in self.blocks:
            x = block(x)
        logits: torch.Tensor = self.head(self.norm(x))
        return logits


def factory(device: str | None = None) -> Workload:
    size = pick_size(device)
    teacher = Teacher(size.vocab)
    torch.manual_seed(0)

    def batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
        sequence = teacher.sample(size.batch, size.length + 1)
        return sequence[:, :-1], sequence[:, 1:]

    def loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return functional.cross_entropy(logits.reshape(-1, size.vocab).float(), target.reshape(-1))

    return Workload(
        Decoder(size),
        batch,
        loss,
        optimizer=lambda params: torch.optim.AdamW(params, lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1),
        clip_grad_norm=1.0,
    )
