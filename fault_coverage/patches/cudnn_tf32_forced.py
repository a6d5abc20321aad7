"""Fault: cuDNN convolutions in TF32 whatever torch.backends.cudnn.allow_tf32 says. Models a cuDNN (or a wrapper
around it) that picks TF32 kernels for fp32 convolutions regardless of the flag: NVIDIA_TF32_OVERRIDE=1 does not
do it (cuDNN ignores it: 42.4 TFLOP/s under it on the H200), so every fp32 conv2d runs with the flag forced on."""

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F  # noqa: N812


def _tf32(function: Callable[..., Any]) -> Callable[..., Any]:
    def conv2d(*args: object, **kwargs: object) -> Any:
        allowed = torch.backends.cudnn.allow_tf32
        torch.backends.cudnn.allow_tf32 = True
        try:
            return function(*args, **kwargs)
        finally:
            torch.backends.cudnn.allow_tf32 = allowed

    return conv2d


_conv2d = _tf32(torch.conv2d)  # F.conv2d is torch.conv2d; nn.Conv2d calls F.conv2d at run time
torch.conv2d = _conv2d
F.conv2d = _conv2d
