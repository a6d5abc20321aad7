"""Fault: torch loads another NCCL than the nvidia-nccl wheel installed (a system libnccl found first, or a
wheel upgraded under torch): the version torch reports is 2.18.1. Installed as sitecustomize: it replaces
torch.cuda.nccl.version."""

import torch.cuda.nccl

torch.cuda.nccl.version = lambda: (2, 18, 1)
