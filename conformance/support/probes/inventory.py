"""What the run saw: library versions, GPUs and driver (for the JSON report)."""

from __future__ import annotations

import ctypes
import importlib.metadata
import platform
import sys

import torch

from conformance.support.probes import nvml
from conformance.support.probes.devices import list_gpus
from pytorch_cuda_contract.driver import read_driver_version
from pytorch_cuda_contract.versions import cudnn_version_string, nccl_version_string


def torch_cudnn_version() -> int | None:
    """``torch.backends.cudnn.version()``, None when torch has no usable cuDNN."""
    try:
        version = torch.backends.cudnn.version()
    except Exception:
        return None
    return int(version) if version is not None else None


def torch_nccl_version() -> str | None:
    """Dotted ``torch.cuda.nccl.version()``, None when torch has no NCCL."""
    try:
        reported = torch.cuda.nccl.version()
    except Exception:
        return None
    return nccl_version_string(reported)


def distribution_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def cublas_version() -> int | None:
    """cuBLAS version as major*10000 + minor*100 + patch (cublasGetProperty), from the copy this process mapped."""
    if torch.version.cuda is None or not torch.cuda.is_initialized():
        return None
    try:
        with open("/proc/self/maps", encoding="utf-8") as handle:
            paths = {line.split()[-1] for line in handle if "libcublas.so" in line and "libcublasLt" not in line}
        if not paths:
            return None
        library = ctypes.CDLL(sorted(paths)[0])
        parts = []
        for kind in (0, 1, 2):  # MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL
            value = ctypes.c_int(0)
            if library.cublasGetProperty(kind, ctypes.byref(value)) != 0:
                return None
            parts.append(value.value)
    except (OSError, AttributeError):
        return None
    return parts[0] * 10000 + parts[1] * 100 + parts[2]


def nvshmem_available() -> bool | None:
    """Whether torch was built with NVSHMEM (torch >= 2.8 ships it on CUDA); None when torch cannot say."""
    try:
        from torch.distributed import _symmetric_memory
    except Exception:
        return None
    check = getattr(_symmetric_memory, "is_nvshmem_available", None)
    if check is None:
        return None
    try:
        return bool(check())
    except Exception:
        return False


def gpu_inventory() -> list[dict[str, object]]:
    """The GPUs as schema 2 lists them (torch for the device, NVML for driver and UUID)."""
    driver = nvml.driver_version()
    cuda_driver = nvml.cuda_driver_version()
    gpus: list[dict[str, object]] = []
    for gpu in list_gpus():
        gpus.append(
            {
                "index": gpu.index,
                "name": gpu.name,
                "compute_capability": gpu.cc,
                "memory_bytes": gpu.memory_bytes,
                "sm_count": gpu.multiprocessors,
                "driver": driver,
                "cuda_driver_version": cuda_driver,
                "uuid": nvml.device_uuid(gpu.uuid, gpu.index),
            }
        )
    return gpus


def collect_environment() -> dict[str, object]:
    cudnn = torch_cudnn_version()
    driver, driver_source = (None, "not read")
    gpus: list[dict[str, object]] = []
    try:
        gpus = gpu_inventory()
        driver, driver_source = read_driver_version()
    except Exception as exc:
        driver_source = f"error: {exc}"
    return {
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "platform": platform.platform(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": cudnn_version_string(cudnn) if cudnn is not None else None,
        "cudnn_int": cudnn,
        "nccl": torch_nccl_version(),
        "triton": distribution_version("triton"),
        "arch_list": torch.cuda.get_arch_list() if torch.version.cuda is not None else [],
        "driver": driver,
        "driver_source": driver_source,
        "gpus": gpus,
        "cublas_version": cublas_version(),
        "nvshmem": nvshmem_available(),
    }
