"""Fault: TF32 switched on at interpreter start through torch's flags (what `torch.backends.cuda.matmul.allow_tf32 =
True` in a site package or a framework's import does): fp32 matmuls and convs silently run as TF32."""

import torch

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
