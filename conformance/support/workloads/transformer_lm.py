"""A transformer language-model training step, eager against torch.compile: the workload users train.

GPT-2 small's shape (12 blocks, d=768, 12 heads, 1024 tokens, a 50304-entry vocabulary), pre-norm, causal SDPA,
bf16 autocast over fp32 weights, fused AdamW: the step of nanoGPT-style training. The compiled model compiles each
block (``Module.compile()``, default mode): PyTorch's "regional compilation" recipe for repeated blocks, which
compiles one block's graph once and reuses it for the other eleven, so the compile time stays that of one block.

The compile time is amortised over ``AMORTISED_STEPS``; ``break_even_steps`` says after how many steps compiling
has paid for itself.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F  # noqa: N812 (the usual alias)

from conformance.support.workloads.cuda_timing import time_cuda_interleaved
from conformance.support.workloads.numerics import median
from conformance.support.workloads.repetition import EagerAndCompiled, Plan, Timings

AMORTISED_STEPS = 1000  # a short fine-tune; a pre-training run is 100x longer and amortises further
LM_PLAN = Plan(warmup=2, least=8, cap_s=3.0)  # eager and compiled steps in rounds


@dataclass(frozen=True)
class LmShape:
    blocks: int = 12
    width: int = 768
    heads: int = 12
    tokens: int = 1024
    vocabulary: int = 50304  # GPT-2's 50257, padded to a multiple of 64 as nanoGPT does
    batch: int = 16  # 16k tokens a step: every GEMM has m = 16384, enough to fill an H100's tensor cores


class Block(torch.nn.Module):
    def __init__(self, shape: LmShape) -> None:
        super().__init__()
        self.heads = shape.heads
        self.norm1 = torch.nn.LayerNorm(shape.width)
        self.qkv = torch.nn.Linear(shape.width, 3 * shape.width)
        self.proj = torch.nn.Linear(shape.width, shape.width)
        self.norm2 = torch.nn.LayerNorm(shape.width)
        self.up = torch.nn.Linear(shape.width, 4 * shape.width)
        self.down = torch.nn.Linear(4 * shape.width, shape.width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, width = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(width, dim=2)
        q, k, v = (t.view(batch, tokens, self.heads, width // self.heads).transpose(1, 2) for t in (q, k, v))
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attended.transpose(1, 2).reshape(batch, tokens, width))
        return x + self.down(F.gelu(self.up(self.norm2(x)), approximate="tanh"))


class LanguageModel(torch.nn.Module):
    def __init__(self, shape: LmShape) -> None:
        super().__init__()
        self.tokens = torch.nn.Embedding(shape.vocabulary, shape.width)
        self.positions = torch.nn.Embedding(shape.tokens, shape.width)
        self.blocks = torch.nn.ModuleList(Block(shape) for _ in range(shape.blocks))
        self.norm = torch.nn.LayerNorm(shape.width)
        self.head = torch.nn.Linear(shape.width, shape.vocabulary, bias=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(ids.shape[1], device=ids.device)
        x = self.tokens(ids) + self.positions(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


@dataclass(frozen=True)
class LmTiming(EagerAndCompiled):
    eager: Timings
    compiled: Timings  # timed in rounds with eager
    compile_s: float  # the first compiled step's wall time less one eager step
    tokens_per_step: int
    dynamo_graphs: int  # graphs Dynamo captured (0: nothing was compiled)

    @property
    def speedup(self) -> float:
        return median(self.eager_ms) / median(self.compiled_ms)

    def amortised_speedup(self, steps: int = AMORTISED_STEPS) -> float:
        return steps * median(self.eager_ms) / (steps * median(self.compiled_ms) + 1e3 * self.compile_s)

    @property
    def break_even_steps(self) -> float | None:
        saved_ms = median(self.eager_ms) - median(self.compiled_ms)
        return 1e3 * self.compile_s / saved_ms if saved_ms > 0 else None


LmStep = tuple[LanguageModel, torch.optim.Optimizer]


def build(shape: LmShape, device: torch.device) -> LmStep:
    torch.manual_seed(0)
    model = LanguageModel(shape).to(device)
    fused = device.type == "cuda"
    return model, torch.optim.AdamW(model.parameters(), lr=3e-4, fused=fused)


def train_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer, ids: torch.Tensor) -> torch.Tensor:
    with torch.autocast(ids.device.type, dtype=torch.bfloat16):
        logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.float().flatten(0, 1), ids[:, 1:].flatten())
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.detach()


def token_batch(shape: LmShape, device: torch.device) -> torch.Tensor:
    generator = torch.Generator(device="cpu").manual_seed(7)
    ids = torch.randint(0, shape.vocabulary, (shape.batch, shape.tokens + 1), generator=generator)
    return ids.to(device)


def _dynamo_graphs() -> int:
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"])


def _compiled_model(shape: LmShape, device: torch.device, ids: torch.Tensor) -> tuple[LmStep, float]:
    """A model compiled per block, and the wall seconds of its first step (compile included)."""
    model, optimizer = build(shape, device)
    for block in model.blocks:
        block.compile()
    started = time.monotonic()
    train_step(model, optimizer, ids)
    torch.cuda.synchronize(device)
    return (model, optimizer), time.monotonic() - started


def compare_lm_training(device: torch.device, shape: LmShape | None = None) -> LmTiming:
    """Eager and compiled steps of two models of one initialisation, timed interleaved (eager, compiled, ...)."""
    shape = shape or LmShape()
    ids = token_batch(shape, device)
    eager_model, eager_optimizer = build(shape, device)
    torch._dynamo.reset()
    graphs_before = _dynamo_graphs()
    (model, optimizer), first_s = _compiled_model(shape, device, ids)
    graphs = _dynamo_graphs() - graphs_before
    timed = time_cuda_interleaved(
        {
            "eager": lambda: train_step(eager_model, eager_optimizer, ids),
            "compiled": lambda: train_step(model, optimizer, ids),
        },
        device,
        LM_PLAN,
    )
    torch.cuda.empty_cache()
    compile_s = max(0.0, first_s - timed["eager"].median_ms / 1e3)
    return LmTiming(timed["eager"], timed["compiled"], compile_s, shape.batch * shape.tokens, graphs)
