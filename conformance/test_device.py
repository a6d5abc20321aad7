"""Device: CUDA initialises and kernels exist for every GPU (the driver checks are in test_gpu_access)."""

from __future__ import annotations

import pytest
import torch

from conformance._devices import judge_arch, list_gpus
from conformance._results import RecordNote

pytestmark = pytest.mark.gpu


def test_cuda_initialises(record_note: RecordNote) -> None:
    assert torch.cuda.is_available(), "torch.cuda.is_available() is False"
    count = torch.cuda.device_count()
    assert count >= 1, "no CUDA device"
    for index in range(count):
        value = torch.ones(4, device=torch.device("cuda", index)).sum()
        torch.cuda.synchronize(index)
        assert float(value) == 4.0, f"cuda:{index} computed {float(value)} for ones(4).sum()"
        record_note(f"cuda:{index}: {torch.cuda.get_device_name(index)}")


def test_every_gpu_arch_has_kernels(record_note: RecordNote) -> None:
    arch_list = torch.cuda.get_arch_list()
    problems = []
    for gpu in list_gpus():
        verdict = judge_arch(gpu.capability, arch_list)
        if not verdict.exact:
            record_note(f"cuda:{gpu.index} {gpu.name}: {verdict.message}")
        if not verdict.ok:
            problems.append(f"cuda:{gpu.index} {gpu.name}: {verdict.message}")
    assert not problems, "; ".join(problems)
