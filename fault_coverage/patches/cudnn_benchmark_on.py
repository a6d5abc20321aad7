"""Control: cuDNN autotuning switched on at interpreter start (torch.backends.cudnn.benchmark = True, as many
training scripts set it). A legitimate setup: cuDNN times its algorithms and picks the fastest; every check passes."""

import torch

torch.backends.cudnn.benchmark = True
