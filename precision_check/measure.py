"""Measurements taken while training, at every step of the run: module outputs and the loss function's
output beyond fp16's range, zero and non-finite gradients per parameter, and step times (a loss curve's
agreement with fp32 is agreement.py's)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch

from precision_check.check_report import FP16_MAX, GradFault, Overflow, Timing

_MAX_OVERFLOWS = 10
LOSS_FUNCTION = "the loss function"  # how the loss function's output is named among module outputs


def _tensors(value: Any) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        if value.is_floating_point():
            yield value
    elif isinstance(value, tuple | list):
        for item in value:
            yield from _tensors(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)


class ActivationWatch:
    """Forward hooks on every module that record the largest |output| per module and step.

    Hooks fire children first, so the first module over the limit in a step is the innermost one
    whose output left fp16's range: in fp32 and bf16 runs a value above 65504 is one that fp16 could
    not hold; in an fp16 run it shows up as inf.
    With `nonfinite_only` (the fp16 run) only inf/nan counts: there an output above 65504 is one that
    autocast kept in fp32, which is fine. The maxima stay on the device until `end_step` reads them
    all with one synchronisation.
    """

    def __init__(self, model: torch.nn.Module, *, nonfinite_only: bool = False) -> None:
        self._limit = math.inf if nonfinite_only else FP16_MAX
        self._pending: list[tuple[str, torch.Tensor]] = []
        self._seen: set[str] = set()
        self.overflows: list[Overflow] = []
        self._handles = [
            module.register_forward_hook(self._hook(name or type(model).__name__))
            for name, module in model.named_modules()
        ]

    def _hook(self, name: str) -> Callable[[torch.nn.Module, Any, Any], None]:
        def hook(_module: torch.nn.Module, _inputs: Any, output: Any) -> None:
            for tensor in _tensors(output):
                if tensor.numel():
                    self._pending.append((name, tensor.detach().abs().amax().float()))

        return hook

    def observe_loss(self, loss: torch.Tensor) -> None:
        """The loss function's own output: only inf/nan counts there (autocast computes most losses in
        fp32, so a loss above 65504 is not one fp16 has to hold); named LOSS_FUNCTION."""
        self._pending.append((LOSS_FUNCTION, loss.detach().abs().amax().float()))

    def end_step(self, step: int) -> None:
        if not self._pending:
            return
        names = [name for name, _ in self._pending]
        values = torch.stack([value for _, value in self._pending]).cpu().tolist()
        self._pending.clear()
        for name, value in zip(names, values, strict=True):
            finite = math.isfinite(value)
            limit = math.inf if name == LOSS_FUNCTION else self._limit
            if (value > limit or not finite) and name not in self._seen and len(self.overflows) < _MAX_OVERFLOWS:
                self._seen.add(name)
                self.overflows.append(Overflow(name, step, value if finite else None))

    def remove(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._pending.clear()


class GradWatch:
    """After each backward pass: the fraction of gradient elements that are exactly zero (underflow shows
    here, at any step, not only the first), and the first step at which each parameter's gradient is
    inf or nan. One synchronisation per step."""

    def __init__(self, model: torch.nn.Module) -> None:
        self._params = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
        self.zero_fractions: list[float | None] = []
        self.faults: list[GradFault] = []
        self._seen: set[str] = set()

    def after_backward(self, step: int) -> None:
        # a sparse gradient (nn.Embedding(sparse=True)) is judged by the values it stores
        grads = [(n, g.coalesce().values() if g.is_sparse else g) for n, p in self._params if (g := p.grad) is not None]
        self._fill(step)
        if not grads:
            self.zero_fractions.append(None)
            return
        zeros = torch.stack([(g == 0).sum().float() for _, g in grads])
        bad = torch.stack([(~torch.isfinite(g)).any().float() for _, g in grads])
        counts = torch.cat([zeros.sum().reshape(1), bad]).cpu().tolist()
        total = sum(g.numel() for _, g in grads)
        self.zero_fractions.append(counts[0] / total if total else None)
        for (name, _), flag in zip(grads, counts[1:], strict=True):
            if flag and name not in self._seen and len(self.faults) < _MAX_OVERFLOWS:
                self._seen.add(name)
                self.faults.append(GradFault(name, step))

    def _fill(self, step: int) -> None:
        """None for the steps before `step` that had no backward pass (an optimizer step skipped)."""
        self.zero_fractions.extend([None] * (step - len(self.zero_fractions)))

    def finish(self, steps: int) -> tuple[float | None, ...]:
        self._fill(steps)
        return tuple(self.zero_fractions)


def zero_fraction(model: torch.nn.Module) -> float:
    zeros = total = 0
    for param in model.parameters():
        if param.grad is not None:
            zeros += int((param.grad == 0).sum().item())
            total += param.grad.numel()
    return zeros / total if total else 0.0


def timing(samples_ms: Sequence[float], clock: str) -> Timing:
    return Timing(
        median_ms=statistics.median(samples_ms),
        min_ms=min(samples_ms),
        max_ms=max(samples_ms),
        samples=len(samples_ms),
        clock=clock,
    )


@contextmanager
def tf32(enabled: bool) -> Iterator[None]:
    """fp32 means IEEE fp32: TF32 off unless asked for (the `tf32` run)."""
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = enabled
    torch.backends.cudnn.allow_tf32 = enabled
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved
