"""Fault: autocast that is silently a no-op. Models an image or a library (a framework's compatibility shim, a
patched torch) in which torch.autocast / torch.amp.autocast / torch.cuda.amp.autocast accept their arguments and
do nothing: every autocast region is entered with enabled=False, so "mixed precision" runs everything in fp32."""

import inspect
from typing import Any

from torch.amp.autocast_mode import autocast

_init = autocast.__init__
_signature = inspect.signature(_init)


def _disabled_init(self: autocast, *args: Any, **kwargs: Any) -> None:
    bound = _signature.bind(self, *args, **kwargs)
    bound.arguments["enabled"] = False
    _init(*bound.args, **bound.kwargs)


autocast.__init__ = _disabled_init  # torch.autocast and torch.cuda.amp's subclass too
