"""The collectives check run in each rank: every reduction op and gather against a float64 CPU reference, and the
bus bandwidth where there are two or more GPUs."""

from __future__ import annotations

import warnings

import torch
import torch.distributed as dist

from conformance.support.processes.dist_job import DistJob
from conformance.support.workloads.numerics import cuda_event


def bus_bandwidth_gbps(message_bytes: int, seconds: float, world_size: int) -> float:
    """nccl-tests all-reduce bus bandwidth: algbw * 2(n-1)/n, in GB/s (1e9)."""
    algbw = message_bytes / seconds / 1e9
    return algbw * 2.0 * (world_size - 1) / world_size


REDUCE_OPS = ("sum", "max", "avg")
DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def allreduce_inputs(rank: int, numel: int, device: torch.device) -> torch.Tensor:
    """Integer values base + rank with base in [-8, 7]: every sum/max/avg below is exact in bf16."""
    base = (torch.arange(numel, device=device) % 16) - 8
    return (base + rank).to(torch.float32)


def allreduce_expected(op: str, numel: int, world_size: int, device: torch.device) -> torch.Tensor:
    """The reference, computed another way: in float64 on the CPU, with Python's own arithmetic per op."""
    pattern = [_reduce_python(op, [(i % 16) - 8 + r for r in range(world_size)]) for i in range(16)]
    return torch.tensor(pattern, dtype=torch.float64).repeat(numel // 16).to(device)


def _reduce_python(op: str, values: list[int]) -> float:
    if op == "max":
        return float(max(values))
    if op == "avg":
        return sum(values) / len(values)
    return (PREMUL if op == "premul_sum" else 1.0) * sum(values)


PREMUL = 3.0  # NCCL's pre-multiplied sum: on one rank the result must still be 3x the input


def _gather_checks(rank: int, job: DistJob, device: torch.device, numel: int) -> list[str]:
    """all_gather / reduce_scatter into a separate NaN-filled buffer: even on one rank NCCL must write it."""
    with warnings.catch_warnings():  # torch 2.13 renames them (*_single); 2.9 and 2.11 have only these names
        warnings.simplefilter("ignore", FutureWarning)
        return _gather_checks_named(rank, job, device, numel)


def _gather_checks_named(rank: int, job: DistJob, device: torch.device, numel: int) -> list[str]:
    mismatches = []
    local = allreduce_inputs(rank, numel, device)
    gathered = torch.full((numel * job.world_size,), float("nan"), device=device)
    dist.all_gather_into_tensor(gathered, local)
    expected = torch.cat([allreduce_inputs(r, numel, torch.device("cpu")) for r in range(job.world_size)])
    if not torch.equal(gathered.cpu(), expected):
        mismatches.append(f"all_gather_into_tensor: {int((gathered.cpu() != expected).sum())} elements wrong")
    if job.backend == "nccl":
        whole = torch.cat([allreduce_inputs(rank, numel, device)] * job.world_size)
        scattered = torch.full((numel,), float("nan"), device=device)
        dist.reduce_scatter_tensor(scattered, whole, op=dist.ReduceOp.SUM)
        want = allreduce_expected("sum", numel, job.world_size, torch.device("cpu")).float()
        if not torch.equal(scattered.cpu(), want):
            mismatches.append(f"reduce_scatter_tensor SUM: {int((scattered.cpu() != want).sum())} elements wrong")
    return mismatches


def _reduce_op(op: str) -> object:
    if op == "premul_sum":  # NCCL's ncclRedOpCreatePreMulSum (what FSDP uses to average gradients)
        return dist._make_nccl_premul_sum(PREMUL)
    return {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "avg": dist.ReduceOp.AVG}[op]


def _exact_possible(op: str, world_size: int) -> bool:
    return op != "avg" or (world_size & (world_size - 1)) == 0  # dividing by a power of two is exact


def task_collectives(rank: int, job: DistJob, device: torch.device) -> dict[str, object]:
    numel = 1 << 16
    mismatches: list[str] = []
    unsupported: list[str] = []
    ops = REDUCE_OPS + (("premul_sum",) if job.backend == "nccl" else ())
    for dtype_name, dtype in DTYPES.items():
        for op in ops:
            if (dtype_name, op) == ("bf16", "premul_sum"):
                continue  # observed apart: see _bf16_premul_observation
            tensor = allreduce_inputs(rank, numel, device).to(dtype)
            before = tensor.clone()
            try:
                dist.all_reduce(tensor, op=_reduce_op(op))
            except (RuntimeError, ValueError, AttributeError) as exc:
                unsupported.append(f"{dtype_name}/{op}: {str(exc).splitlines()[0][:200]}")
                continue
            expected = allreduce_expected(op, numel, job.world_size, device).to(dtype)
            if _exact_possible(op, job.world_size):
                ok = torch.equal(tensor, expected)
            else:
                ok = torch.allclose(tensor.float(), expected.float(), rtol=1e-2, atol=1e-2)
            if not ok:
                wrong = int((tensor != expected).sum())
                mismatches.append(f"{dtype_name}/{op}: {wrong} of {numel} elements differ")
            if op == "premul_sum" and torch.equal(tensor, before):
                mismatches.append(f"{dtype_name}/premul_sum: the tensor is unchanged (the reduction did not run)")
    mismatches += _gather_checks(rank, job, device, numel)
    result: dict[str, object] = {"mismatches": mismatches, "unsupported": unsupported, "ops": list(ops)}
    if job.backend == "nccl":
        result["observations"] = [_bf16_premul_observation(rank, job, device, numel)]
    if job.backend == "nccl" and job.world_size >= 2:
        result.update(_measure_busbw(device, job.world_size))
    return result


def _bf16_premul_observation(rank: int, job: DistJob, device: torch.device, numel: int) -> str:
    """bf16 PREMUL_SUM with a Python-scalar factor, recorded, not gated. On the H200 (torch 2.11, cu130) it returned
    all zeros: the float factor is read as a bf16 (the low half of 3.0f is 0). FSDP reduces bf16 gradients with AVG,
    not PREMUL_SUM, so this is a note about the library, not a fault of the image."""
    tensor = allreduce_inputs(rank, numel, device).to(torch.bfloat16)
    try:
        dist.all_reduce(tensor, op=_reduce_op("premul_sum"))
    except (RuntimeError, ValueError, AttributeError) as exc:
        return f"bf16 PREMUL_SUM (x{PREMUL:g}) not supported: {str(exc).splitlines()[0][:200]}"
    expected = allreduce_expected("premul_sum", numel, job.world_size, device).to(torch.bfloat16)
    wrong = int((tensor != expected).sum())
    if wrong == 0:
        return f"bf16 PREMUL_SUM (x{PREMUL:g}) with a Python-scalar factor is exact"
    zeros = bool((tensor == 0).all())
    return (
        f"bf16 PREMUL_SUM (x{PREMUL:g}) with a Python-scalar factor: {wrong} of {numel} elements wrong"
        + (" (all zero: the factor is read as a bf16)" if zeros else "")
        + "; not gated: FSDP reduces bf16 gradients with AVG; do not call PREMUL_SUM on bf16 with this torch"
    )


def _measure_busbw(device: torch.device, world_size: int) -> dict[str, object]:
    message_bytes = 256 * 2**20
    tensor = torch.ones(message_bytes // 4, device=device, dtype=torch.float32)
    for _ in range(3):
        dist.all_reduce(tensor)
    torch.cuda.synchronize(device)
    iterations = 10
    start, end = cuda_event(), cuda_event()
    start.record()
    for _ in range(iterations):
        dist.all_reduce(tensor)
    end.record()
    end.synchronize()
    seconds = start.elapsed_time(end) / 1e3 / iterations
    return {
        "busbw_message_bytes": message_bytes,
        "busbw_time_s": seconds,
        "busbw_gbps": bus_bandwidth_gbps(message_bytes, seconds, world_size),
    }
