"""Fault: fp16/bf16 GEMM, conv and attention kernels that lose precision (their inputs rounded to fp8 e4m3, as a
library that silently picks an fp8 kernel would). Models cuBLAS/cuDNN kernels that compute wrong low-precision
results. Installed as sitecustomize: it wraps the torch entry points the suite and a user's model call."""

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F  # noqa: N812

LOW = (torch.float16, torch.bfloat16)


def _coarse(tensor: object) -> object:
    if not isinstance(tensor, torch.Tensor) or not tensor.is_cuda or not tensor.is_floating_point():
        return tensor
    dtype = tensor.dtype
    if dtype not in LOW and torch.is_autocast_enabled("cuda"):
        dtype = torch.get_autocast_dtype("cuda")
    if dtype not in LOW:
        return tensor
    return tensor.to(torch.float8_e4m3fn).to(dtype)


def _wrap(function: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(*args: object, **kwargs: object) -> Any:
        return function(*(_coarse(a) for a in args), **kwargs)

    return wrapped


for _owner, _name in (
    (torch, "matmul"),
    (torch, "mm"),
    (torch, "bmm"),
    (F, "linear"),
    (F, "conv2d"),
    (F, "scaled_dot_product_attention"),
    (torch.Tensor, "__matmul__"),
):
    setattr(_owner, _name, _wrap(getattr(_owner, _name)))
