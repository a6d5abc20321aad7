"""Bodies run in each spawned rank.  Must stay importable by a fresh interpreter
(the spawn start method pickles ``run_rank`` by module name)."""

from __future__ import annotations

import json
import math
import traceback
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from conformance.support.processes.env import apply_safe_distributed_env
from conformance.support.workloads.collectives import task_collectives
from conformance.support.workloads.dist_job import DistJob
from conformance.support.workloads.numerics import flat_parameters, normalized_error, seeded_randn
from conformance.support.workloads.training import make_mlp


def _ddp_train(
    rank: int, device: torch.device, hook: Callable[..., object] | None, steps: int = 10
) -> tuple[torch.Tensor, torch.Tensor]:
    model = make_mlp(32, 64, 1, seed=0).to(device)
    initial = flat_parameters(model.parameters())
    ddp = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
    if hook is not None:
        ddp.register_comm_hook(state=None, hook=hook)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05)
    x = seeded_randn((64, 32), seed=1000 + rank, device=device)
    y = seeded_randn((64, 1), seed=2000 + rank, device=device)
    for _ in range(steps):
        optimizer.zero_grad(set_to_none=True)
        torch.autograd.backward(torch.nn.functional.mse_loss(ddp(x), y))
        optimizer.step()
    return initial, flat_parameters(model.parameters())


def _max_cross_rank_difference(vector: torch.Tensor, device: torch.device) -> float:
    """The largest difference of any rank's ``vector`` from rank 0's; NaN when the gather did not write its
    NaN-filled buffers (a collective that does nothing)."""
    local = vector.to(device=device, dtype=torch.float32)
    gathered = [torch.full_like(local, float("nan")) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, local)
    return max(float((g - gathered[0]).abs().max()) for g in gathered)


def task_ddp_hooks(rank: int, job: DistJob, device: torch.device) -> dict[str, object]:
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    hooks: dict[str, Callable[..., object] | None] = {
        "none": None,
        "fp16": default_hooks.fp16_compress_hook,
    }
    unsupported = []
    if job.backend == "nccl":
        hooks["bf16"] = default_hooks.bf16_compress_hook
    else:  # DDP refuses bf16_compress_hook without CUDA + NCCL >= 2.10
        unsupported.append("bf16_compress_hook needs NCCL (CUDA)")
    finals: dict[str, torch.Tensor] = {}
    initial = torch.empty(0)
    cross_rank: dict[str, float] = {}
    for name, hook in hooks.items():
        initial, finals[name] = _ddp_train(rank, device, hook)
        cross_rank[name] = _max_cross_rank_difference(finals[name], device)
    update_errors = {
        name: normalized_error(finals[name] - initial, finals["none"] - initial) for name in hooks if name != "none"
    }
    return {
        "update_error_vs_no_hook": update_errors,
        "max_cross_rank_param_difference": cross_rank,
        "unsupported": unsupported,
    }


class _UserModel(torch.nn.Module):
    """A forward in the suite's own code.  Dynamo starts compiling only at frames outside torch, and DDP's forward
    breaks the graph (its logger) before it calls the module: a bare torch.nn.Sequential inside DDP runs eager
    (torch 2.9: 0 graphs), a user model's forward is compiled by DDPOptimizer, as in a real training script."""

    def __init__(self, net: torch.nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.net(x)
        return out


def task_ddp_amp_compile(rank: int, job: DistJob, device: torch.device) -> dict[str, object]:
    model = _UserModel(make_mlp(64, 256, 8, seed=0)).to(device)
    ddp = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
    compiled = torch.compile(ddp)
    optimizer = torch.optim.AdamW(ddp.parameters(), lr=1e-3)
    x = seeded_randn((128, 64), seed=3000 + rank, device=device)
    y = seeded_randn((128, 8), seed=4000 + rank, device=device)
    losses = []
    for _ in range(5):
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device.type, dtype=torch.bfloat16):
            out = compiled(x)
        loss = torch.nn.functional.mse_loss(out.float(), y)
        torch.autograd.backward(loss)
        optimizer.step()
        losses.append(float(loss.detach()))
    difference = _max_cross_rank_difference(flat_parameters(model.parameters()), device)
    return {
        "losses": losses,
        "losses_finite": all(math.isfinite(v) for v in losses),
        "max_cross_rank_param_difference": difference,
        **compile_counters(),
    }


def compile_counters() -> dict[str, object]:
    """What torch.compile did in this process: the graphs dynamo captured (0 when TORCHDYNAMO_DISABLE=1 or a
    disabled dynamo turns torch.compile into eager) and Inductor's FX-graph cache lookups (hit, miss or bypass:
    each one is a graph Inductor compiled or loaded compiled)."""
    from torch._dynamo.utils import counters

    lookups = ("fxgraph_cache_hit", "fxgraph_cache_miss", "fxgraph_cache_bypass")
    inductor = {key: int(counters["inductor"][key]) for key in lookups}
    return {"dynamo_unique_graphs": int(counters["stats"]["unique_graphs"]), "inductor_graphs": inductor}


TASKS: dict[str, Callable[[int, DistJob, torch.device], dict[str, object]]] = {
    "collectives": task_collectives,
    "ddp_hooks": task_ddp_hooks,
    "ddp_amp_compile": task_ddp_amp_compile,
}


def run_rank(rank: int, job: DistJob) -> None:
    """Entry point of each spawned rank."""
    apply_safe_distributed_env()
    out_dir = Path(job.out_dir)
    try:
        if job.backend == "nccl":
            torch.cuda.set_device(rank)
            device = torch.device("cuda", rank)
        else:
            device = torch.device("cpu")
        kwargs: dict[str, object] = {"device_id": device} if job.backend == "nccl" else {}
        dist.init_process_group(
            job.backend,
            init_method=f"tcp://127.0.0.1:{job.port}",
            rank=rank,
            world_size=job.world_size,
            timeout=timedelta(seconds=job.timeout_s),
            **kwargs,
        )
        try:
            results = {task: TASKS[task](rank, job, device) for task in job.tasks}
            # written before the teardown: gloo can abort a rank while its peers close their sockets
            # ("Connection reset by peer" in gloo's I/O thread), after every measurement is done
            written = out_dir / f".rank{rank}.json.tmp"
            written.write_text(json.dumps(results))
            written.replace(out_dir / f"rank{rank}.json")  # whole or absent for the parent that reads it
            if job.backend == "nccl":
                dist.barrier(device_ids=[rank])
            else:
                dist.barrier()
        finally:
            dist.destroy_process_group()
    except BaseException:
        (out_dir / f"rank{rank}.error").write_text(traceback.format_exc())
        raise
