"""Device: CUDA initialises and kernels exist for every GPU (the driver checks are in test_gpu_access)."""

from __future__ import annotations

import pytest
import torch

from conformance.support.probes.devices import judge_arch, kernel_launch_problem, list_gpus
from conformance.support.results.recorder import RecordNote
from conformance.support.workloads.numerics import normalized_error, seeded_randn

pytestmark = pytest.mark.gpu
FP64_GEMM_BOUND = 1e-12  # float64 256^3 vs the CPU: reordered sums give about 1e-16


def test_cuda_initialises(record_note: RecordNote) -> None:
    """A GEMM on every visible GPU agrees with the same GEMM on the CPU in float64 (the conftest gate only
    guarantees that a GPU is visible, not that it computes)."""
    problems = []
    for gpu in list_gpus():
        device = torch.device("cuda", gpu.index)
        if gpu.memory_bytes <= 0 or not gpu.multiprocessors or gpu.multiprocessors <= 0:
            problems.append(f"cuda:{gpu.index} reports {gpu.memory_bytes} bytes and {gpu.multiprocessors} SMs")
            continue
        a = seeded_randn((256, 256), 11, torch.device("cpu"), torch.float64)
        on_gpu = (a.to(device) @ a.to(device)).cpu()
        torch.cuda.synchronize(device)
        error = normalized_error(on_gpu, a @ a)
        record_note(f"cuda:{gpu.index}: {gpu.name}, {gpu.multiprocessors} SMs, float64 GEMM error {error:.1e}")
        if not error < FP64_GEMM_BOUND:
            problems.append(f"cuda:{gpu.index} {gpu.name}: float64 GEMM differs from the CPU by {error:.2e}")
    assert not problems, "; ".join(problems) + ": the GPU, its driver or cuBLAS computes wrong results"


def test_every_gpu_arch_has_kernels(record_note: RecordNote) -> None:
    """Fails when no `sm_XY` cubin, no binary-compatible `sm_XZ` (same major, lower minor) and no `compute_AB` PTX ≤
    XY (the last two pass with a note), or when the driver finds no kernel image it can run (the arch list is what
    torch was built for, not what this driver and GPU can load)."""
    arch_list = torch.cuda.get_arch_list()
    problems = []
    for gpu in list_gpus():
        verdict = judge_arch(gpu.capability, arch_list)
        if not verdict.exact:
            record_note(f"cuda:{gpu.index} {gpu.name}: {verdict.message}")
        if not verdict.ok:
            problems.append(f"cuda:{gpu.index} {gpu.name}: {verdict.message}")
        elif (launch := kernel_launch_problem(gpu.index)) is not None:
            problems.append(f"cuda:{gpu.index} {gpu.name}: no kernel of this image runs here: {launch}")
    assert not problems, "; ".join(problems)
