"""Device and driver: CUDA initialises, the driver is new enough, kernels exist for every GPU."""

from __future__ import annotations

import warnings

import pytest
import torch

from conformance._devices import judge_arch, list_gpus
from conformance._driver import DriverRequirement, judge_driver, read_driver_version, requirement_for_cuda
from conformance._manifest import Manifest
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


def test_driver_supports_cuda_runtime(optional_manifest: Manifest | None, record_note: RecordNote) -> None:
    cuda = torch.version.cuda
    assert cuda is not None
    driver, source = read_driver_version()
    if driver is None:
        pytest.skip(f"cannot read the NVIDIA driver version: {source}")
    record_note(f"driver {driver} (from {source}), CUDA runtime {cuda}")
    requirement: DriverRequirement | None
    if optional_manifest is not None and optional_manifest.min_driver and optional_manifest.cuda_compat_driver:
        requirement = DriverRequirement(optional_manifest.min_driver, optional_manifest.cuda_compat_driver, "manifest")
    else:
        requirement = requirement_for_cuda(cuda)
    if requirement is None:
        record_note(f"no driver requirement known for CUDA {cuda}; not gated")
        return
    verdict = judge_driver(driver, cuda, requirement)
    if verdict.status == "compat":
        record_note(verdict.message)
        warnings.warn(verdict.message, stacklevel=1)
    assert verdict.status != "too_old", verdict.message


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


def _bf16_native() -> bool:
    try:
        return bool(torch.cuda.is_bf16_supported(including_emulation=False))
    except TypeError:  # torch without the keyword: the plain call does not emulate
        return bool(torch.cuda.is_bf16_supported())


def test_bf16_native_exactly_on_ampere_and_newer(record_note: RecordNote) -> None:
    problems = []
    for gpu in list_gpus():
        with torch.cuda.device(gpu.index):
            native = _bf16_native()
            reported_default = bool(torch.cuda.is_bf16_supported())
        expected = gpu.capability >= (8, 0)
        record_note(f"cuda:{gpu.index} cc {gpu.capability}: native bf16 {native}, default API says {reported_default}")
        if native != expected:
            problems.append(
                f"cuda:{gpu.index} {gpu.name} (cc {gpu.capability[0]}.{gpu.capability[1]}): "
                f"is_bf16_supported(including_emulation=False) is {native}, expected {expected}"
            )
    assert not problems, "; ".join(problems)
