"""Fault: cuFFT computing at a lower precision than asked (float64 transforms in float32, float32 ones in float16),
as a library that silently picks a faster, coarser plan would. Installed as sitecustomize: it wraps
torch.fft.rfft."""

from typing import Any

import torch

_rfft = torch.fft.rfft
_LOWER = {torch.float64: torch.float32, torch.float32: torch.float16}


def rfft(x: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
    if x.is_cuda and x.dtype in _LOWER:
        wanted = torch.complex128 if x.dtype == torch.float64 else torch.complex64
        return _rfft(x.to(_LOWER[x.dtype]), *args, **kwargs).to(wanted)
    return _rfft(x, *args, **kwargs)


torch.fft.rfft = rfft
