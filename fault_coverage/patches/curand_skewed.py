"""Fault: a random number generator whose CUDA samples are skewed (uniforms bent towards 0 by x**1.02, normals
shifted by 0.01 sigma), as a broken cuRAND build or a wrong Philox implementation gives. Installed as
sitecustomize: it wraps torch.rand and torch.randn."""

from collections.abc import Callable
from typing import Any

import torch


def _wrap(function: Callable[..., Any], bend: Callable[[torch.Tensor], torch.Tensor]) -> Callable[..., Any]:
    def wrapped(*args: object, **kwargs: object) -> Any:
        out = function(*args, **kwargs)
        return bend(out) if isinstance(out, torch.Tensor) and out.is_cuda else out

    return wrapped


torch.rand = _wrap(torch.rand, lambda x: x.pow(1.02))
torch.randn = _wrap(torch.randn, lambda x: x + 0.01)
