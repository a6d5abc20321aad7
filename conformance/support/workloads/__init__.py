"""The work a check runs and times: GEMM, AMP and training steps, torch.compile, collectives, numerics."""
