"""GPU access, diagnosed without a visible GPU (cpu marker): device nodes, libcuda, cuInit, the driver.

These run in CPU-only CI too: that is where a container started without ``--gpus all``,
or on a driver too old for the image, must be told apart.
"""

from __future__ import annotations

import os
import warnings

import pytest
import torch

from conformance.support.probes.gpu_access import diagnose, run_probe
from conformance.support.results.recorder import RecordNote
from pytorch_cuda_contract.driver import DriverRequirement, judge_driver, read_driver_version, requirement_for_cuda
from pytorch_cuda_contract.manifest import Manifest

pytestmark = pytest.mark.cpu


def cuda_runtime(manifest: Manifest | None) -> str | None:
    """The CUDA runtime the image promises (manifest pin), else the one torch was built with."""
    pinned = manifest.pins.cuda if manifest is not None else None
    return pinned or torch.version.cuda


def driver_requirement(manifest: Manifest | None, runtime: str | None) -> DriverRequirement | None:
    if manifest is not None and manifest.min_driver and manifest.cuda_compat_driver:
        return DriverRequirement(manifest.min_driver, manifest.cuda_compat_driver, "manifest")
    return requirement_for_cuda(runtime) if runtime else None


def _gpu_required(config: pytest.Config) -> bool:
    return bool(config.getoption("require_gpu")) or int(config.getoption("require_gpus") or 0) > 0


def test_cuda_driver_stack_is_usable(
    optional_manifest: Manifest | None, pytestconfig: pytest.Config, record_note: RecordNote
) -> None:
    """Fails when a fresh subprocess probes `/dev/nvidia*`, `libcuda.so.1`, `cuInit` and NVML without torch, and names
    the case: `[no_device_nodes]` (pass `--gpus all` / install the NVIDIA Container Toolkit; a skip unless a GPU is
    required), `[hidden]` (CUDA_VISIBLE_DEVICES), `[no_libcuda]` (device nodes but no driver library: fails),
    `[driver_too_old]` (NVML works, cuInit says CUDA_ERROR_INSUFFICIENT_DRIVER / SYSTEM_DRIVER_MISMATCH: names the
    minimum driver and cuda-compat; fails), `[cuda_init_failed]`. Then torch must see the GPU."""
    runtime = cuda_runtime(optional_manifest)
    probe = run_probe()
    record_note(f"probe: {probe}")
    access = diagnose(
        probe, runtime, driver_requirement(optional_manifest, runtime), os.environ.get("CUDA_VISIBLE_DEVICES")
    )
    required = _gpu_required(pytestconfig)
    assert access.status != "broken", f"[{access.case}] {access.message}"
    if access.status == "no_gpu":
        if required:
            pytest.fail(f"GPU required but [{access.case}] {access.message}", pytrace=False)
        pytest.skip(f"no GPU: [{access.case}] {access.message}")
    record_note(access.message)
    if torch.version.cuda is None:
        message = f"the driver stack works ({access.message}) but torch {torch.__version__} is a CPU-only build"
        assert not required, message
        pytest.skip(message)
    wanted = int(pytestconfig.getoption("require_gpus") or 0)
    if wanted > 1:
        found = torch.cuda.device_count() if torch.cuda.is_available() else 0
        assert found >= wanted, f"--require-gpus {wanted}: only {found} GPU(s) visible ({access.message})"
    assert torch.cuda.is_available(), (
        f"the driver stack works ({access.message}) but torch.cuda.is_available() is False for torch "
        f"{torch.__version__} (CUDA {torch.version.cuda}): a broken torch install or CUDA_VISIBLE_DEVICES"
    )


def test_driver_supports_cuda_runtime(
    optional_manifest: Manifest | None, pytestconfig: pytest.Config, record_note: RecordNote
) -> None:
    """The driver version read from NVML first (it works where CUDA cannot start), then /proc."""
    runtime = cuda_runtime(optional_manifest)
    driver, source = read_driver_version()
    if driver is None:
        message = f"cannot read the NVIDIA driver version: {source}"
        if _gpu_required(pytestconfig):
            pytest.fail(f"GPU required: {message}; {diagnose(run_probe(), runtime, None, None).message}", pytrace=False)
        pytest.skip(message)
    if runtime is None:
        pytest.skip(f"driver {driver} (from {source}); torch is a CPU-only build and no manifest pins CUDA")
    record_note(f"driver {driver} (from {source}), CUDA runtime {runtime}")
    requirement = driver_requirement(optional_manifest, runtime)
    if requirement is None:
        pytest.skip(
            f"no driver requirement known for CUDA {runtime}; not gated: add it to the table in "
            "pytorch_cuda_contract/driver.py (or min_driver and cuda_compat_driver to the manifest)"
        )
    verdict = judge_driver(driver, runtime, requirement)
    if verdict.status == "compat":
        record_note(verdict.message)
        warnings.warn(verdict.message, stacklevel=1)
    assert verdict.status != "too_old", verdict.message
