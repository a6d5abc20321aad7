"""Fault: torch loads a cuDNN older than the one it was built with and than the wheel installed (a CUDA base
image's libcudnn found first): the runtime version torch reports is <major>.0.0. Installed as sitecustomize: it
replaces torch._C._cudnn.getRuntimeVersion and torch.backends.cudnn.version."""

import torch

_cudnn = getattr(torch._C, "_cudnn", None)
if _cudnn is not None:
    _major = int(_cudnn.getCompileVersion()[0])
    _cudnn.getRuntimeVersion = lambda: (_major, 0, 0)
    torch.backends.cudnn.version = lambda: _major * 10000 if _major >= 9 else _major * 1000
