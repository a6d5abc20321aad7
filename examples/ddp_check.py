"""DDP check: train a small model a few steps with DistributedDataParallel and prove every rank ends equal.

Run it under torchrun, on one host or several (containers included):

    torchrun --nproc-per-node 8 examples/ddp_check.py                  # one GPU host: nccl
    torchrun --nnodes 2 --nproc-per-node 1 --node-rank 0 --rdzv-backend c10d \\
        --rdzv-endpoint node0:29500 /opt/pytorch-cuda/examples/ddp_check.py   # and node-rank 1 on node1

With CUDA each rank takes GPU LOCAL_RANK and the nccl backend; without, gloo on the CPU
(``--backend`` overrides). Every rank sees different data, so only DDP's gradient all-reduce keeps
their parameters equal. After ``--steps`` steps each rank hashes its parameters (sha256 over the
raw bytes, so any difference of one bit shows), prints one JSON line (rank, world size, backend,
device, loss, checksum) and all-gathers the checksums; when they differ it says so and exits 1.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import socket
import sys
from collections.abc import Sequence
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def parameter_checksum(model: nn.Module) -> str:
    """sha256 over every parameter's name, shape and bytes, in order."""
    digest = hashlib.sha256()
    for name, parameter in model.named_parameters():
        data = parameter.detach().to("cpu", torch.float32).contiguous()
        digest.update(f"{name}:{tuple(data.shape)}".encode())
        digest.update(data.numpy().tobytes())
    return digest.hexdigest()


def _checksum_word(checksum: str) -> int:
    """The checksum's first 63 bits as a non-negative int64, to all-gather as one tensor element."""
    return int(checksum[:16], 16) >> 1


def _device_and_backend(requested: str) -> tuple[torch.device, str]:
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    cuda = torch.cuda.is_available() and requested != "gloo"
    backend = requested if requested != "auto" else ("nccl" if cuda else "gloo")
    if cuda:
        torch.cuda.set_device(local_rank)
        return torch.device("cuda", local_rank), backend
    return torch.device("cpu"), backend


def train(model: nn.Module, device: torch.device, rank: int, steps: int, batch: int) -> float:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    data = torch.Generator().manual_seed(1000 + rank)  # every rank its own data
    loss = torch.zeros(())
    for _ in range(steps):
        inputs = torch.randn(batch, 32, generator=data).to(device)
        target = torch.randn(batch, 1, generator=data).to(device)
        optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(model(inputs), target)
        loss.backward()  # DDP all-reduces the gradients here
        optimizer.step()
    return float(loss.detach())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=5, help="training steps before the parameters are compared")
    parser.add_argument("--batch", type=int, default=16, help="samples per rank and step")
    parser.add_argument("--backend", choices=("auto", "nccl", "gloo"), default="auto")
    parser.add_argument("--timeout-s", type=float, default=300.0, help="collective timeout")
    parser.add_argument(
        "--break-rank",
        type=int,
        metavar="RANK",
        help="self-test: nudge this rank's parameters after training, which the check must catch (exit 1)",
    )
    args = parser.parse_args(argv)
    if "RANK" not in os.environ:
        print("ddp_check: run it under torchrun (RANK, WORLD_SIZE and MASTER_ADDR are not set)", file=sys.stderr)
        return 2
    device, backend = _device_and_backend(args.backend)
    dist.init_process_group(backend, timeout=datetime.timedelta(seconds=args.timeout_s))
    try:
        rank, world = dist.get_rank(), dist.get_world_size()
        torch.manual_seed(0)  # the same initial weights everywhere (DDP broadcasts rank 0's anyway)
        model = nn.Sequential(nn.Linear(32, 64), nn.Tanh(), nn.Linear(64, 1)).to(device)
        ddp = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
        loss = train(ddp, device, rank, args.steps, args.batch)
        if args.break_rank == rank:
            with torch.no_grad():
                next(model.parameters()).view(-1)[0] += 1e-3
        checksum = parameter_checksum(model)
        mine = torch.tensor([_checksum_word(checksum)], dtype=torch.int64, device=device)
        gathered = [torch.zeros_like(mine) for _ in range(world)]
        dist.all_gather(gathered, mine)
        words = [int(t.item()) for t in gathered]
        equal = len(set(words)) == 1
        report: dict[str, Any] = {
            "ddp_check": "ok" if equal else "parameters differ across ranks",
            "rank": rank,
            "local_rank": int(os.environ.get("LOCAL_RANK", "0")),
            "world_size": world,
            "backend": backend,
            "device": str(device),
            "host": socket.gethostname(),
            "steps": args.steps,
            "loss": round(loss, 6),
            "param_checksum": checksum,
            "all_ranks_equal": equal,
            "torch": torch.__version__,
        }
        print(json.dumps(report, sort_keys=True), flush=True)
        # Free DDP's reducer (its hooks and buckets hold the process group) before the last barrier and the group's
        # teardown: gloo aborted one rank in teardown ("terminate called without an active exception") otherwise.
        del ddp
        dist.barrier()
    finally:
        dist.destroy_process_group()
    return 0 if equal else 1


if __name__ == "__main__":
    sys.exit(main())
