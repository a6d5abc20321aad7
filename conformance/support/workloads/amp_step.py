"""A transformer training step timed per precision, each in isolation with the peak-memory stats reset."""

from __future__ import annotations

import gc
from dataclasses import dataclass

import torch

from conformance.support.workloads.gemm_bench import device_clocks
from conformance.support.workloads.numerics import backward, seeded_randn, time_cuda_ms
from pytorch_cuda_contract.metrics import spread

AUTOCAST = {"fp16": torch.float16, "bf16": torch.bfloat16}
# 4 encoder layers, d_model 1024, 16 heads, batch 32 x 512 tokens: ~5.4 TFLOP a step. At d_model 512 x 8192
# tokens (~0.6 TFLOP) the H200 measured fp32 10.4 ms, fp16 11.0 ms, bf16 11.7 ms: the half-precision steps were
# bound by kernel launches, not by the tensor cores, so the step must be large enough to keep the GPU busy.
LAYERS, D_MODEL, HEADS, FFN = 4, 1024, 16, 4096
BATCH, SEQUENCE = 32, 512
WARMUP, ITERATIONS = 3, 8


@dataclass(frozen=True)
class StepResult:
    mode: str
    times_ms: list[float]
    peak_mib: float  # peak allocated above what was allocated before the model existed
    final_loss: float
    clocks: dict[str, object] | None  # NVML right after the timed steps

    @property
    def median_ms(self) -> float:
        return float(spread(self.times_ms)["median"])  # type: ignore[arg-type]


def make_transformer(device: torch.device, seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    layer = torch.nn.TransformerEncoderLayer(D_MODEL, HEADS, FFN, dropout=0.0, batch_first=True)
    return torch.nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False).to(device)


def measure_step(device: torch.device, mode: str) -> StepResult:
    """fp32 (IEEE), fp16 (autocast + GradScaler) or bf16 (autocast): AdamW steps, CUDA-event timed."""
    gc.collect()
    torch.cuda.synchronize(device)
    torch.cuda.empty_cache()
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

    times = time_cuda_ms(step, warmup=WARMUP, iterations=ITERATIONS)
    torch.cuda.synchronize(device)
    peak = (torch.cuda.max_memory_allocated(device) - before) / 2**20
    # The model and optimizer go with this frame; the next measurement collects and empties the cache.
    return StepResult(mode, times, peak, float(losses[-1]), device_clocks(device))
