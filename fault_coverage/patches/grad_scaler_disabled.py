"""Fault: a GradScaler that is silently disabled. Models an image or a library in which torch.amp.GradScaler
(and torch.cuda.amp.GradScaler, its subclass) ignores enabled=True: scale() returns the loss unscaled, get_scale()
is 1.0, update() does nothing and step() never skips an inf/NaN step, so fp16 gradients underflow and overflows
corrupt the weights."""

import inspect
from typing import Any

import torch

_init = torch.amp.GradScaler.__init__
_signature = inspect.signature(_init)


def _disabled_init(self: torch.amp.GradScaler, *args: Any, **kwargs: Any) -> None:
    bound = _signature.bind(self, *args, **kwargs)
    bound.arguments["enabled"] = False
    _init(*bound.args, **bound.kwargs)


torch.amp.GradScaler.__init__ = _disabled_init
