"""Fault: cuBLAS reducing fp16 GEMMs in fp16 even when torch forbids it (allow_fp16_reduced_precision_reduction =
False ignored, a split-K kernel whose partial sums are fp16): partial sums past 65504 overflow to inf. Installed as
sitecustomize: torch.addmm on fp16 CUDA tensors sums K in chunks of 256 whose running total is kept in fp16."""

from typing import Any

import torch

_addmm = torch.addmm
CHUNK = 256


def addmm(bias: Any, a: Any, b: Any, *args: Any, **kwargs: Any) -> Any:
    fp16_cuda = all(isinstance(t, torch.Tensor) and t.is_cuda and t.dtype == torch.float16 for t in (bias, a, b))
    if args or kwargs or not fp16_cuda:
        return _addmm(bias, a, b, *args, **kwargs)
    total = bias.clone()
    for start in range(0, a.shape[-1], CHUNK):
        total = total + (a[..., start : start + CHUNK] @ b[start : start + CHUNK]).to(torch.float16)
    return total


torch.addmm = addmm
