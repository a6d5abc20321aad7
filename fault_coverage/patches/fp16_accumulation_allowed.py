"""Fault: fp16 GEMMs accumulated in fp16, switched on through torch's public flag at interpreter start (as a
framework chasing speed or a startup hook can do): torch.backends.cuda.matmul.allow_fp16_accumulation = True lets
cuBLAS keep fp16 partial sums, which lose precision and overflow past 65504."""

import torch

torch.backends.cuda.matmul.allow_fp16_accumulation = True
