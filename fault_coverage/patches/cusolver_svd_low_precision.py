"""Fault: cuSOLVER's float64 SVD computed in float32 (a library or a GPU that silently drops to single precision):
the factors reconstruct the matrix only to about 1e-6. Installed as sitecustomize: it wraps torch.linalg.svd."""

from typing import Any

import torch

_svd = torch.linalg.svd


def svd(a: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
    if a.is_cuda and a.dtype == torch.float64:
        u, s, vh = _svd(a.float(), *args, **kwargs)
        return torch.return_types.linalg_svd((u.double(), s.double(), vh.double()))
    return _svd(a, *args, **kwargs)


torch.linalg.svd = svd
