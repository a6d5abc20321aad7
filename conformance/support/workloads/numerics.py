"""Numerical helpers: seeded data, normalized error, CUDA-event timing."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable

import torch


def seeded_randn(
    shape: tuple[int, ...], seed: int, device: str | torch.device = "cpu", dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """Standard-normal data from a private generator (does not touch the global RNG)."""
    generator = torch.Generator(device="cpu").manual_seed(seed)
    return torch.randn(shape, generator=generator, dtype=torch.float32).to(device=device, dtype=dtype)


def normalized_error(actual: torch.Tensor, reference: torch.Tensor) -> float:
    """||actual - reference||_F / ||reference||_F, computed in float64."""
    ref = reference.detach().to(torch.float64)
    diff = actual.detach().to(torch.float64) - ref
    denominator = float(torch.linalg.vector_norm(ref))
    if denominator == 0.0:
        return float(torch.linalg.vector_norm(diff))
    return float(torch.linalg.vector_norm(diff)) / denominator


def flat_parameters(parameters: Iterable[torch.Tensor]) -> torch.Tensor:
    """All parameters as one detached float64 CPU vector."""
    return torch.cat([p.detach().reshape(-1).to(device="cpu", dtype=torch.float64) for p in parameters])


def time_cuda_ms(fn: Callable[[], object], warmup: int, iterations: int) -> list[float]:
    """Per-call times (ms) of ``fn`` on the current stream, measured with CUDA events."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times: list[float] = []
    for _ in range(iterations):
        start = cuda_event()
        end = cuda_event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(float(start.elapsed_time(end)))
    return times


def median(values: list[float]) -> float:
    return float(statistics.median(values))


def gemm_tflops(m: int, n: int, k: int, milliseconds: float) -> float:
    return 2.0 * m * n * k / (milliseconds * 1e-3) / 1e12


def grad_of(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor.grad``, failing loudly when backward did not reach it."""
    grad = tensor.grad
    if grad is None:
        raise AssertionError(f"no gradient reached a tensor of shape {tuple(tensor.shape)}")
    return grad


def backward(output: torch.Tensor, grad_output: torch.Tensor | None = None) -> None:
    """``output.backward(grad_output)`` through the typed autograd API."""
    torch.autograd.backward(output, grad_output)


def cuda_event() -> torch.cuda.Event:
    event: torch.cuda.Event = torch.cuda.Event(enable_timing=True)
    return event
