"""pytorch-cuda conformance suite.

Proves that an image (or a bare GPU host) really delivers FP16/BF16 tensor-core
kernels, AMP, NCCL/DDP all-reduce and torch.compile.  Imports only the standard
library, torch, pytest and (optionally) pynvml.  See README.md in this folder.
"""
