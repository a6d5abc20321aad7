"""Fault: cuDNN switched off at interpreter start (torch.backends.cudnn.enabled = False), as a site package or a
startup hook of a team's image can do. Convolutions then run torch's slow native kernels."""

import torch

torch.backends.cudnn.enabled = False
