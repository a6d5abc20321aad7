"""Subprocess probe: exercise cuBLAS, cuBLASLt, cuDNN and NCCL, then dump mapped files.

Run as a script (``python probe_libs.py STORE_FILE``) so the process starts
fresh.  Prints one JSON object: {"maps": [paths...], "steps": [...]}.
Imports only the standard library and torch.
"""

from __future__ import annotations

import json
import sys


def main(store_file: str) -> int:
    import torch
    import torch.distributed as dist

    steps: list[str] = []
    device = torch.device("cuda", 0)
    a = torch.randn(256, 256, device=device, dtype=torch.float16)
    float((a @ a).float().sum())
    b = torch.randn(256, 256, device=device, dtype=torch.float32)
    float(torch.addmm(b, b, b).sum())
    steps.append("matmul")
    x = torch.randn(4, 8, 32, 32, device=device, dtype=torch.float16, requires_grad=True)
    w = torch.randn(16, 8, 3, 3, device=device, dtype=torch.float16, requires_grad=True)
    torch.autograd.backward(torch.nn.functional.conv2d(x, w, padding=1).float().sum())
    torch.cuda.synchronize()
    steps.append("conv")
    store = dist.FileStore(store_file, 1)
    dist.init_process_group("nccl", store=store, rank=0, world_size=1)
    t = torch.ones(1024, device=device)
    dist.all_reduce(t)
    torch.cuda.synchronize()
    dist.destroy_process_group()
    steps.append("all_reduce")
    with open("/proc/self/maps", encoding="utf-8") as handle:
        maps = handle.read()
    print(json.dumps({"maps": maps, "steps": steps}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
