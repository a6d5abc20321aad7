"""Fault: TorchScript's fuser switched off at interpreter start (torch._C._jit_set_texpr_fuser_enabled(False)), as
a framework working around a fuser bug, or an image's startup hook, can do. Scripted models then run every
elementwise op as its own kernel on the GPU: no NNC fusion group is built."""

import torch

torch._C._jit_set_texpr_fuser_enabled(False)
