"""Eager vs torch.compile: first-call compile time and step time, for inference (fp16) and training (fp32),
and a small CNN compiled with mode="max-autotune". Eager and compiled calls are timed interleaved (eager,
compiled, eager, ...), so that a clock change during the measurement reaches both sides of the speed-up."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import torch

from conformance.support.workloads.cuda_timing import time_cuda_interleaved
from conformance.support.workloads.numerics import backward, normalized_error, seeded_randn
from conformance.support.workloads.repetition import EagerAndCompiled, Plan, Timings

WIDTH, BATCH, BLOCKS = 1024, 2048, 4
COMPILE_PLAN = Plan(warmup=2, least=10, cap_s=1.0)  # a round (eager, compiled) is well under 10 ms on an H100


@dataclass(frozen=True)
class CompileTiming(EagerAndCompiled):
    compile_s: float  # the first compiled call, compile included
    eager: Timings
    compiled: Timings  # timed in rounds with eager
    error: float  # normalized error of compiled vs eager (output, or worst gradient)
    code_modules: int  # Inductor output code modules seen on the first call (0: nothing was compiled)


def make_mlp(device: torch.device, dtype: torch.dtype) -> torch.nn.Module:
    torch.manual_seed(0)
    layers: list[torch.nn.Module] = []
    for _ in range(BLOCKS):
        layers += [torch.nn.Linear(WIDTH, WIDTH), torch.nn.LayerNorm(WIDTH), torch.nn.GELU()]
    return torch.nn.Sequential(*layers).to(device=device, dtype=dtype)


def make_cnn(device: torch.device) -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.Conv2d(16, 32, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(32, 10),
    ).to(device)


def _first_call(fn: Callable[[], torch.Tensor]) -> tuple[torch.Tensor, float, int]:
    from torch._inductor.utils import run_and_get_code

    started = time.monotonic()
    out, codes = run_and_get_code(fn)
    torch.cuda.synchronize()
    return out, time.monotonic() - started, len(codes)


def compare_inference(model: torch.nn.Module, x: torch.Tensor, mode: str | None = None) -> CompileTiming:
    compiled = cast(Callable[[torch.Tensor], torch.Tensor], torch.compile(model, mode=mode))
    with torch.no_grad():
        out, compile_s, codes = _first_call(lambda: compiled(x))
        error = normalized_error(out, model(x))  # before the next call: CUDA graphs reuse output memory
        timed = time_cuda_interleaved(
            {"eager": lambda: model(x), "compiled": lambda: compiled(x)}, x.device, COMPILE_PLAN
        )
    return CompileTiming(compile_s, timed["eager"], timed["compiled"], error, codes)


def compare_training(model: torch.nn.Module, x: torch.Tensor) -> CompileTiming:
    compiled = cast(Callable[[torch.Tensor], torch.Tensor], torch.compile(model))

    def step(fn: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
        model.zero_grad(set_to_none=True)
        out = fn(x)
        backward(out.float().square().mean())
        return out.detach()

    _, compile_s, codes = _first_call(lambda: step(compiled))
    compiled_grads = [p.grad.clone() for p in model.parameters() if p.grad is not None]
    step(model)
    eager_grads = [p.grad.clone() for p in model.parameters() if p.grad is not None]
    error = max((normalized_error(c, e) for c, e in zip(compiled_grads, eager_grads, strict=True)), default=0.0)
    timed = time_cuda_interleaved({"eager": lambda: step(model), "compiled": lambda: step(compiled)}, x.device,
                                  COMPILE_PLAN)  # fmt: skip
    return CompileTiming(compile_s, timed["eager"], timed["compiled"], error, codes)


def run_compile_speed(device: torch.device) -> dict[str, CompileTiming | str]:
    """Each case's timing, or (a string) why this environment cannot measure it."""
    import torch._inductor.config

    from conformance.support.probes.allocator import cuda_graphs_unavailable

    results: dict[str, CompileTiming | str] = {}
    with torch._inductor.config.patch(compile_threads=1):
        torch._dynamo.reset()
        x16 = seeded_randn((BATCH, WIDTH), seed=61, device=device, dtype=torch.float16)
        results["inference"] = compare_inference(make_mlp(device, torch.float16), x16)
        x32 = seeded_randn((BATCH, WIDTH), seed=62, device=device)
        results["training"] = compare_training(make_mlp(device, torch.float32), x32)
    no_graphs = cuda_graphs_unavailable(device)
    if no_graphs is not None:  # mode="max-autotune" captures CUDA graphs
        results["max_autotune_cnn"] = f'mode="max-autotune" (CUDA graphs) not measured: {no_graphs}'
        return results
    # Autotuning compiles its candidates in parallel (compile_threads); Triton conv templates are slow to
    # build and rarely win, so convs autotune over ATen only, matmuls over ATen and Triton.
    with torch._inductor.config.patch(max_autotune_conv_backends="ATEN"):
        torch._dynamo.reset()
        images = seeded_randn((8, 3, 32, 32), seed=63, device=device)
        results["max_autotune_cnn"] = compare_inference(make_cnn(device), images, mode="max-autotune")
    return results
