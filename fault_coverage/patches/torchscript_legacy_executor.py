"""Fault: TorchScript's profiling executor switched off at interpreter start (torch._C._jit_set_profiling_executor(
False)), as older training code and frameworks did to skip the profiling runs. Scripted models then run on the
legacy executor: no profiling, no shape specialisation, no NNC fusion."""

import torch

torch._C._jit_set_profiling_executor(False)
