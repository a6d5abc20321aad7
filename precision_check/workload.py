"""The factory contract: what `precision-check MODULE:FACTORY` expects FACTORY() to return.

FACTORY takes no arguments, or a keyword ``device`` (``"cuda"`` or ``"cpu"``: where the check runs,
e.g. to pick a larger model on a GPU), and returns a `Workload` (or a dict with the same keys, or a
tuple ``(model, batch, loss)`` / ``(model, batch, loss, optimizer)``):

- ``model``: a ``torch.nn.Module`` in fp32, on the CPU; the check moves it to the device.
- ``batch(step: int) -> (inputs, target)``: the training batch for ``step``. ``inputs`` is a
  tensor or a tuple of tensors (called as ``model(*inputs)``); ``target`` is a tensor. The
  check seeds torch's RNG with the step before each call, so random batches repeat exactly
  for every dtype; the tensors are moved to the device for you.
- ``loss(output, target) -> scalar tensor``: e.g. ``torch.nn.CrossEntropyLoss()``.
- ``optimizer(params) -> torch.optim.Optimizer`` (optional; default AdamW, lr 1e-3).
- ``clip_grad_norm``: a number (optional): clip the gradients to this total norm before each
  optimizer step (fp16: after GradScaler unscales them), as ``torch.nn.utils.clip_grad_norm_`` does.

Example::

    def factory():
        model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
        return Workload(model, lambda step: (torch.randn(16, 32), torch.randint(0, 10, (16,))),
                        torch.nn.CrossEntropyLoss())
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import torch

from precision_check.bad_input import PrecisionCheckError

BatchFn = Callable[[int], Any]
LossFn = Callable[[Any, Any], torch.Tensor]
OptimizerFn = Callable[[Iterable[torch.nn.Parameter]], torch.optim.Optimizer]

_KEYS = ("model", "batch", "loss", "optimizer", "clip_grad_norm")


def default_optimizer(params: Iterable[torch.nn.Parameter]) -> torch.optim.Optimizer:
    return torch.optim.AdamW(params, lr=1e-3)


@dataclass(frozen=True)
class Workload:
    model: torch.nn.Module
    batch: BatchFn
    loss: LossFn
    optimizer: OptimizerFn = default_optimizer
    clip_grad_norm: float | None = None


_FIX = (
    "make FACTORY return Workload(model, batch, loss) from precision_check.workload, a dict with "
    "those keys, or a tuple (model, batch, loss[, optimizer]); see `python -m precision_check --help`"
)


def coerce_workload(value: object, target: str) -> Workload:
    """Check what FACTORY returned and turn it into a Workload, or raise a PrecisionCheckError."""
    parts: dict[str, object]
    if isinstance(value, Workload):
        parts = {key: getattr(value, key) for key in _KEYS}
    elif isinstance(value, dict):
        unknown = sorted(set(map(str, value)) - set(_KEYS))
        if unknown:
            raise PrecisionCheckError(f"{target} returned a dict with unknown keys {unknown}", _FIX)
        parts = dict(value)
    elif isinstance(value, tuple | list) and len(value) in (3, 4):
        parts = dict(zip(_KEYS, value, strict=False))
    else:
        shown = f"a {type(value).__name__}" + (f" of length {len(value)}" if isinstance(value, tuple | list) else "")
        raise PrecisionCheckError(f"{target} returned {shown}, not a model, a batch function and a loss", _FIX)
    model = parts.get("model")
    if not isinstance(model, torch.nn.Module):
        raise PrecisionCheckError(
            f"{target} returned a model that is a {type(model).__name__}, not a torch.nn.Module", _FIX
        )
    if not any(p.requires_grad for p in model.parameters()):
        raise PrecisionCheckError(f"{target} returned a model with no trainable parameters", _FIX)
    for key in ("batch", "loss"):
        if not callable(parts.get(key)):
            raise PrecisionCheckError(
                f"{target} returned a {key} that is a {type(parts.get(key)).__name__}, not a function", _FIX
            )
    optimizer = parts.get("optimizer") or default_optimizer
    if not callable(optimizer):
        raise PrecisionCheckError(f"{target} returned an optimizer that is not a function of the parameters", _FIX)
    clip = parts.get("clip_grad_norm")
    if clip is not None and (isinstance(clip, bool) or not isinstance(clip, int | float) or not clip > 0):
        raise PrecisionCheckError(
            f"{target} returned a clip_grad_norm of {clip!r}, not a positive number", "give e.g. 1.0, or None"
        )
    return Workload(
        model,
        parts["batch"],  # type: ignore[arg-type]
        parts["loss"],  # type: ignore[arg-type]
        optimizer,
        None if clip is None else float(clip),
    )
