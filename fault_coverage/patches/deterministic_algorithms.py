"""Control: reproducible training as PyTorch's reproducibility notes advise, torch.use_deterministic_algorithms(True)
at interpreter start (with CUBLAS_WORKSPACE_CONFIG=:4096:8 in the environment). A legitimate setup: every check
passes, or skips naming the setting and why (an operation PyTorch refuses under it)."""

import torch

torch.use_deterministic_algorithms(True)
