"""The collectives check run in each rank: every reduction op and gather against a float64 CPU reference, and the
bus bandwidth where there are two or more GPUs."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import partial
from typing import Final

import torch
import torch.distributed as dist

from conformance.support.workloads.dist_job import DistJob
from conformance.support.workloads.numerics import cuda_event


def bus_bandwidth_gbps(message_bytes: int, seconds: float, world_size: int) -> float:
    """nccl-tests all-reduce bus bandwidth: algbw * 2(n-1)/n, in GB/s (1e9)."""
    algbw = message_bytes / seconds / 1e9
    return algbw * 2.0 * (world_size - 1) / world_size


REDUCE_OPS = ("sum", "max", "avg")
# The errors torch raises for an op the backend does not implement (ProcessGroupGloo.cpp / ProcessGroupNCCL.cpp):
# the only exceptions that are a documented gap, not a fault.  gloo implements AVG since torch 2.8 (2.7 raised;
# https://github.com/pytorch/pytorch/pull/149781).
UNSUPPORTED_OP_ERRORS: Final = (
    "Cannot use ReduceOp.AVG with Gloo",
    "Cannot use ReduceOp.PREMUL_SUM with Gloo",
    "AVG requires NCCL 2.10+",
    "PreMulSum requires NCCL>=2.11.1",
    "PreMulSum Data type must be",  # a torch whose NCCL PREMUL_SUM lacks the dtype (bf16 before 2.x)
)
COLLECTIVE_DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


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


def unsupported_op_error(exc: BaseException) -> bool:
    """Whether ``exc`` is the backend's documented refusal of an op (see UNSUPPORTED_OP_ERRORS)."""
    return any(text in str(exc) for text in UNSUPPORTED_OP_ERRORS)


def _first_line(exc: BaseException) -> str:
    lines = str(exc).splitlines()
    return f"{type(exc).__name__}: {lines[0][:200] if lines else ''}"


def _attempt(label: str, call: Callable[[], object], unsupported: list[str], failures: list[str]) -> bool:
    """Run one collective: True when it returned; a documented refusal goes to ``unsupported``, any other
    exception is a failure with its message."""
    try:
        call()
    except Exception as exc:
        if unsupported_op_error(exc):
            unsupported.append(f"{label}: {_first_line(exc)}")
        else:
            failures.append(f"{label} raised {_first_line(exc)}")
        return False
    return True


def _gather_checks(rank: int, job: DistJob, device: torch.device, numel: int, unsupported: list[str]) -> list[str]:
    """all_gather / reduce_scatter into a separate NaN-filled buffer: even on one rank NCCL must write it."""
    # A workaround: torch 2.13 renames them (*_single) and warns on the old names, which 2.9 and 2.11 alone have
    # (https://github.com/pytorch/pytorch/pull/186123).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return _gather_checks_named(rank, job, device, numel, unsupported)


def _gather_checks_named(
    rank: int, job: DistJob, device: torch.device, numel: int, unsupported: list[str]
) -> list[str]:
    mismatches: list[str] = []
    local = allreduce_inputs(rank, numel, device)
    gathered = torch.full((numel * job.world_size,), float("nan"), device=device)
    expected = torch.cat([allreduce_inputs(r, numel, torch.device("cpu")) for r in range(job.world_size)])
    name = "all_gather_into_tensor"
    ran = _attempt(name, lambda: dist.all_gather_into_tensor(gathered, local), unsupported, mismatches)
    if ran and not torch.equal(gathered.cpu(), expected):
        mismatches.append(f"{name}: {int((gathered.cpu() != expected).sum())} elements wrong")
    if job.backend == "nccl":
        whole = torch.cat([allreduce_inputs(rank, numel, device)] * job.world_size)
        scattered = torch.full((numel,), float("nan"), device=device)
        name = "reduce_scatter_tensor SUM"
        call = partial(dist.reduce_scatter_tensor, scattered, whole, op=dist.ReduceOp.SUM)
        if _attempt(name, call, unsupported, mismatches):
            want = allreduce_expected("sum", numel, job.world_size, torch.device("cpu")).float()
            if not torch.equal(scattered.cpu(), want):
                mismatches.append(f"{name}: {int((scattered.cpu() != want).sum())} elements wrong")
    return mismatches


def _reduce_op(op: str) -> object:
    if op == "premul_sum":  # NCCL's ncclRedOpCreatePreMulSum (what FSDP uses to average gradients)
        return dist._make_nccl_premul_sum(PREMUL)
    return {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "avg": dist.ReduceOp.AVG}[op]


def _exact_possible(op: str, world_size: int) -> bool:
    return op != "avg" or (world_size & (world_size - 1)) == 0  # dividing by a power of two is exact


def _all_reduce_check(
    rank: int, job: DistJob, device: torch.device, *, dtype_name: str, op: str, unsupported: list[str]
) -> list[str]:
    """One all_reduce against the float64 reference: the mismatches (an unexpected exception is one)."""
    numel, dtype, label = NUMEL, COLLECTIVE_DTYPES[dtype_name], f"{dtype_name}/{op}"
    tensor = allreduce_inputs(rank, numel, device).to(dtype)
    before = tensor.clone()
    failures: list[str] = []
    if not _attempt(label, lambda: dist.all_reduce(tensor, op=_reduce_op(op)), unsupported, failures):
        return failures
    expected = allreduce_expected(op, numel, job.world_size, device).to(dtype)
    if _exact_possible(op, job.world_size):
        ok = torch.equal(tensor, expected)
    else:
        ok = torch.allclose(tensor.float(), expected.float(), rtol=1e-2, atol=1e-2)
    if not ok:
        failures.append(f"{label}: {int((tensor != expected).sum())} of {numel} elements differ")
    if op == "premul_sum" and torch.equal(tensor, before):
        failures.append(f"{label}: the tensor is unchanged (the reduction did not run)")
    return failures


NUMEL: Final = 1 << 16


def task_collectives(rank: int, job: DistJob, device: torch.device) -> dict[str, object]:
    """``reduction_mismatches``: SUM/MAX/AVG, identities on one rank; ``op_mismatches``: the ops that change or
    write their output even on one rank (PREMUL_SUM, all_gather, reduce_scatter); ``unsupported``: documented
    refusals of the backend."""
    reductions: list[str] = []
    op_runs: list[str] = []
    unsupported: list[str] = []
    ops = REDUCE_OPS + (("premul_sum",) if job.backend == "nccl" else ())
    for dtype_name in COLLECTIVE_DTYPES:
        for op in ops:
            if (dtype_name, op) == ("bf16", "premul_sum"):
                continue  # judged apart: see _bf16_premul_observation and test_nccl_bf16_premul_sum_exact
            found = _all_reduce_check(rank, job, device, dtype_name=dtype_name, op=op, unsupported=unsupported)
            (op_runs if op == "premul_sum" else reductions).extend(found)
    op_runs += _gather_checks(rank, job, device, NUMEL, unsupported)
    result: dict[str, object] = {
        "reduction_mismatches": reductions,
        "op_mismatches": op_runs,
        "unsupported": unsupported,
        "ops": list(ops),
    }
    if job.backend == "nccl":
        result["bf16_premul"] = _bf16_premul_observation(rank, job, device, NUMEL, op_runs)
    if job.backend == "nccl" and job.world_size >= 2:
        result.update(_measure_busbw(device, job.world_size))
    return result


# What bf16 PREMUL_SUM with a Python-scalar factor gave in a rank: the test judges these (test_distributed.py)
BF16_PREMUL_OUTCOMES: Final = ("exact", "all_zero", "unchanged", "wrong", "refused", "raised")


def judge_bf16_premul(result: torch.Tensor, expected: torch.Tensor, before: torch.Tensor) -> tuple[str, str]:
    """bf16 PREMUL_SUM with a Python-scalar factor: (the outcome, one of BF16_PREMUL_OUTCOMES, and what it was).
    All zeros is what the H200 and the H100 gave on one rank (torch 2.11, cu130): the float factor read as a bf16
    (the low half of 3.0f is 0). It is wrong, and the check fails on it where it can judge (2+ ranks)."""
    label = f"bf16 PREMUL_SUM (x{PREMUL:g})"
    wrong = int((result != expected).sum())
    if wrong == 0:
        return "exact", f"{label} with a Python-scalar factor is exact"
    if bool((result == 0).all()):
        return "all_zero", (
            f"{label} with a Python-scalar factor: all {result.numel()} elements zero, not {PREMUL:g} x the sum (the "
            "factor read as a bf16: the low half of 3.0f is 0)"
        )
    if torch.equal(result, before):
        return "unchanged", f"{label}: the tensor is unchanged (the reduction did not run)"
    return "wrong", f"{label}: {wrong} of {result.numel()} elements wrong"


def _bf16_premul_observation(
    rank: int, job: DistJob, device: torch.device, numel: int, failures: list[str]
) -> dict[str, str]:
    """bf16 PREMUL_SUM, judged by judge_bf16_premul: ``{"outcome", "note"}``. An unchanged tensor or an exception
    other than the documented refusal also goes to ``failures`` (a collective that did not run, on any rank count)."""
    tensor = allreduce_inputs(rank, numel, device).to(torch.bfloat16)
    before = tensor.clone()
    refused: list[str] = []
    raised: list[str] = []
    label = f"bf16 PREMUL_SUM (x{PREMUL:g})"
    if not _attempt(label, lambda: dist.all_reduce(tensor, op=_reduce_op("premul_sum")), refused, raised):
        failures.extend(raised)
        if refused:
            return {"outcome": "refused", "note": f"{refused[0]} (not supported)"}
        return {"outcome": "raised", "note": raised[0]}
    expected = allreduce_expected("premul_sum", numel, job.world_size, device).to(torch.bfloat16)
    outcome, note = judge_bf16_premul(tensor, expected, before)
    if outcome == "unchanged":
        failures.append(note)
    return {"outcome": outcome, "note": note}


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
