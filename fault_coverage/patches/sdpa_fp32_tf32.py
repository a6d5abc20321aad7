"""Fault: fp32 attention computed in TF32. Models an attention implementation that silently rounds fp32 inputs to
TF32 (a library's replacement SDPA, or the fused kernels off with TF32 let into cuBLAS): fp32
scaled_dot_product_attention on CUDA runs the math backend with torch.backends.cuda.matmul.allow_tf32 = True.
NVIDIA_TF32_OVERRIDE=1 alone does not reach the default fp32 dispatch (the efficient kernel does its own 3xTF32
GEMMs, not cuBLAS's): measured 5.7e-7 under it on an H100, against 4.2e-4 here."""

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F  # noqa: N812
from torch.nn.attention import SDPBackend, sdpa_kernel


def _tf32(function: Callable[..., Any]) -> Callable[..., Any]:
    def attention(query: torch.Tensor, *args: object, **kwargs: object) -> Any:
        if not (query.is_cuda and query.dtype == torch.float32):
            return function(query, *args, **kwargs)
        allowed = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = True
        try:
            with sdpa_kernel([SDPBackend.MATH]):
                return function(query, *args, **kwargs)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = allowed

    return attention


F.scaled_dot_product_attention = _tf32(F.scaled_dot_product_attention)
