"""Fault: fp16/bf16 GEMMs that run on the CUDA cores instead of the tensor cores (a cuBLAS, or a torch build,
without tensor-core kernels for this architecture): they compute in fp32 and round the result back. Installed as
sitecustomize: it wraps torch.mm, torch.matmul and the @ operator for fp16/bf16 CUDA tensors."""

from collections.abc import Callable
from typing import Any

import torch

LOW = (torch.float16, torch.bfloat16)


def _on_cuda_cores(function: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(a: Any, b: Any, *args: Any, out: Any = None, **kwargs: Any) -> Any:
        if isinstance(a, torch.Tensor) and a.is_cuda and a.dtype in LOW:
            result = function(a.float(), b.float(), *args, **kwargs).to(a.dtype)
            return result if out is None else out.copy_(result)
        return function(a, b, *args, **kwargs) if out is None else function(a, b, *args, out=out, **kwargs)

    return wrapped


torch.mm = _on_cuda_cores(torch.mm)
torch.matmul = _on_cuda_cores(torch.matmul)
torch.Tensor.__matmul__ = _on_cuda_cores(torch.Tensor.__matmul__)
