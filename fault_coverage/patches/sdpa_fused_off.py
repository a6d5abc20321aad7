"""Fault: the fused attention kernels (flash, memory-efficient, cuDNN) switched off at interpreter start, as a
library working around a kernel bug can do. The default dispatch then falls back to the slow math backend."""

import torch

torch.backends.cuda.enable_flash_sdp(False)
torch.backends.cuda.enable_mem_efficient_sdp(False)
torch.backends.cuda.enable_cudnn_sdp(False)
