"""Fault: a GPU that computes float64 matrix products in float32 (a broken driver, cuBLAS or GPU silently losing
precision): results are wrong from the 8th digit on. Installed as sitecustomize: it wraps torch.matmul, torch.mm
and the @ operator for float64 CUDA tensors."""

from collections.abc import Callable
from typing import Any

import torch


def _is_fp64_cuda(value: object) -> bool:
    return isinstance(value, torch.Tensor) and value.is_cuda and value.dtype == torch.float64


def _wrap(function: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(a: Any, b: Any, *args: Any, **kwargs: Any) -> Any:
        if _is_fp64_cuda(a) and _is_fp64_cuda(b) and not args and not kwargs:
            return function(a.float(), b.float()).double()
        return function(a, b, *args, **kwargs)

    return wrapped


torch.matmul = _wrap(torch.matmul)
torch.mm = _wrap(torch.mm)
torch.Tensor.__matmul__ = _wrap(torch.Tensor.__matmul__)
