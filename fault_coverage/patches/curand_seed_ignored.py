"""Fault: CUDA random numbers that ignore the generator (and so its seed) they are given, drawing from the global
generator instead, as a library that replaces torch's sampling without honouring `generator=` does. The same seed
then no longer gives the same numbers. Installed as sitecustomize: it wraps torch.rand and torch.randn."""

from collections.abc import Callable
from typing import Any

import torch


def _wrap(function: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(*args: object, **kwargs: Any) -> Any:
        generator = kwargs.get("generator")
        if isinstance(generator, torch.Generator) and generator.device.type == "cuda":
            kwargs.pop("generator")
        return function(*args, **kwargs)

    return wrapped


torch.rand = _wrap(torch.rand)
torch.randn = _wrap(torch.randn)
