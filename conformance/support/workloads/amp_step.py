"""A transformer training step per precision: each mode's peak memory measured on its own, then the steps timed
interleaved (fp32, fp16, bf16, fp32, ...: a clock change reaches every mode alike, so the speed-ups hold)."""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from conformance.support.workloads.cuda_timing import time_cuda_interleaved
from conformance.support.workloads.gemm_bench import device_clocks
from conformance.support.workloads.numerics import backward, seeded_randn
from conformance.support.workloads.repetition import Plan, Timings

AUTOCAST = {"fp16": torch.float16, "bf16": torch.bfloat16}
# 4 encoder layers, d_model 1024, 16 heads, batch 32 x 512 tokens: ~5.4 TFLOP a step. At d_model 512 x 8192
# tokens (~0.6 TFLOP) the H200 measured fp32 10.4 ms, fp16 11.0 ms, bf16 11.7 ms: the half-precision steps were
# bound by kernel launches, not by the tensor cores, so the step must be large enough to keep the GPU busy.
LAYERS, D_MODEL, HEADS, FFN = 4, 1024, 16, 4096
BATCH, SEQUENCE = 32, 512
# A round (fp32, fp16, bf16) takes about 0.15 s on an H100: the least 8 rounds 1.2 s, the cap 4 s.
AMP_PLAN = Plan(warmup=3, least=8, cap_s=4.0)


@dataclass(frozen=True)
class StepResult:
    mode: str
    timings: Timings  # this mode's steps, timed in rounds with the other modes
    peak_mib: float  # peak allocated above what was allocated before the model existed
    final_loss: float
    clocks: dict[str, object] | None  # NVML right after the timed steps

    @property
    def times_ms(self) -> list[float]:
        return list(self.timings.times_ms)

    @property
    def median_ms(self) -> float:
        return self.timings.median_ms


@dataclass
class _Step:
    mode: str
    run: Callable[[], None]
    losses: list[torch.Tensor]
    peak_mib: float = 0.0


def make_transformer(device: torch.device, seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    layer = torch.nn.TransformerEncoderLayer(D_MODEL, HEADS, FFN, dropout=0.0, batch_first=True)
    return torch.nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False).to(device)


def _prepare(device: torch.device, mode: str) -> _Step:
    """fp32 (IEEE), fp16 (autocast + GradScaler) or bf16 (autocast): AdamW steps of a fresh model; its first two
    steps run with the peak-memory statistics reset, so the peak is this mode's own (the models made before stay)."""
    gc.collect()
    torch.cuda.synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)
    before = torch.cuda.memory_allocated(device)
    model = make_transformer(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda", enabled=mode == "fp16")
    x = seeded_randn((BATCH, SEQUENCE, D_MODEL), seed=41, device=device)
    target = seeded_randn((BATCH, SEQUENCE, D_MODEL), seed=42, device=device)
    dtype = AUTOCAST.get(mode)
    losses: list[torch.Tensor] = []

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=dtype or torch.float32, enabled=dtype is not None):
            out = model(x)
        loss = torch.nn.functional.mse_loss(out.float(), target)
        backward(scaler.scale(loss))
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.detach())

    prepared = _Step(mode, step, losses)
    for _ in range(2):  # the second step is the first with the optimizer's state in memory, as every later one
        step()
    torch.cuda.synchronize(device)
    prepared.peak_mib = (torch.cuda.max_memory_allocated(device) - before) / 2**20
    return prepared


def measure_steps(device: torch.device, modes: Sequence[str], plan: Plan = AMP_PLAN) -> dict[str, StepResult]:
    """Each mode's peak memory on its own, then every mode's step timed in rounds (A, B, C, A, B, C, ...)."""
    torch.cuda.empty_cache()
    steps = [_prepare(device, mode) for mode in modes]
    timings = time_cuda_interleaved({s.mode: s.run for s in steps}, device, plan)
    torch.cuda.synchronize(device)
    clocks = device_clocks(device)
    return {
        s.mode: StepResult(s.mode, timings[s.mode], s.peak_mib, float(s.losses[-1]), clocks) for s in steps
    }  # the models and optimizers go with this frame; the next workload empties the cache
