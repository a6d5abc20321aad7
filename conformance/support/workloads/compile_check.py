"""Compile a module with Inductor, prove it compiled (no fallback) and compare with eager."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import torch
import torch._dynamo

from conformance.support.workloads.numerics import backward as run_backward
from conformance.support.workloads.numerics import grad_of, normalized_error


@dataclass(frozen=True)
class CompileOutcome:
    graph_count: int
    graph_break_count: int
    break_reasons: tuple[str, ...]
    generated_code: tuple[str, ...]
    errors: dict[str, float]  # "output", "grad:<param>" -> normalized error vs eager
    explain_s: float
    compile_and_run_s: float


def _autocast(device: torch.device, dtype: torch.dtype | None) -> torch.autocast:
    return torch.autocast(device.type, dtype=dtype or torch.float32, enabled=dtype is not None)


def _forward_backward(module: torch.nn.Module, x: torch.Tensor, autocast: torch.dtype | None) -> torch.Tensor:
    with _autocast(x.device, autocast):
        out: torch.Tensor = module(x)
    run_backward(out.float().square().mean())
    return out.detach()


def _forward(module: torch.nn.Module, x: torch.Tensor, autocast: torch.dtype | None) -> torch.Tensor:
    with torch.no_grad(), _autocast(x.device, autocast):
        out: torch.Tensor = module(x)
    return out


# One compile thread: the run compiles a handful of kernels, and a fresh
# machine pays more for starting Inductor's worker pool than it saves.
COMPILE_THREADS = 1


def compile_and_compare(
    make_module: Callable[[], torch.nn.Module],
    x: torch.Tensor,
    autocast: torch.dtype | None,
    backward: bool = True,
) -> CompileOutcome:
    """Eager vs ``torch.compile(backend="inductor", fullgraph=True)`` with suppress_errors off."""
    import torch._inductor.config  # imported here: slow, and only these checks need it
    from torch._inductor.utils import run_and_get_code

    eager = make_module()
    compiled_source = copy.deepcopy(eager)
    step = _forward_backward if backward else _forward
    with (
        torch._dynamo.config.patch(suppress_errors=False),
        torch._inductor.config.patch(compile_threads=COMPILE_THREADS),
    ):
        started = time.monotonic()
        torch._dynamo.reset()
        with _autocast(x.device, autocast):
            explanation = torch._dynamo.explain(compiled_source)(x)
        explained = time.monotonic()
        torch._dynamo.reset()
        compiled = cast(torch.nn.Module, torch.compile(compiled_source, backend="inductor", fullgraph=True))
        compiled_out, codes = run_and_get_code(step, compiled, x, autocast)
        finished = time.monotonic()
    eager_out = step(eager, x, autocast)
    errors = {"output": normalized_error(compiled_out, eager_out)}
    if backward:
        for (name, p_eager), p_compiled in zip(eager.named_parameters(), compiled_source.parameters(), strict=True):
            errors[f"grad:{name}"] = normalized_error(grad_of(p_compiled), grad_of(p_eager))
    reasons = tuple(str(reason) for reason in getattr(explanation, "break_reasons", []))
    return CompileOutcome(
        graph_count=int(explanation.graph_count),
        graph_break_count=int(explanation.graph_break_count),
        break_reasons=reasons,
        generated_code=tuple(codes),
        errors=errors,
        explain_s=explained - started,
        compile_and_run_s=finished - explained,
    )


def has_triton_kernel(code: str) -> bool:
    return "@triton.jit" in code or "triton_" in code


def has_cpp_kernel(code: str) -> bool:
    return "cpp_fused" in code or 'extern "C"' in code


class PointwiseNet(torch.nn.Module):
    """One fused C++ kernel: a cold C++ compile is slow, so the CPU check compiles only one."""

    def __init__(self, width: int = 32) -> None:
        super().__init__()
        self.scale = torch.nn.Parameter(torch.linspace(0.5, 1.5, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = torch.nn.functional.gelu(x * self.scale) + x.cos()
        return out
