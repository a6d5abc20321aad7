"""What the run saw: library versions, GPUs and driver (for the JSON report)."""

from __future__ import annotations

import importlib.metadata
import platform
import sys

import torch

from conformance._devices import list_gpus
from conformance._driver import read_driver_version
from conformance._versions import cudnn_version_string, nccl_version_string


def torch_cudnn_version() -> int | None:
    """``torch.backends.cudnn.version()``, None when torch has no usable cuDNN."""
    try:
        version = torch.backends.cudnn.version()  # type: ignore[no-untyped-call]
    except Exception:
        return None
    return int(version) if version is not None else None


def torch_nccl_version() -> str | None:
    """Dotted ``torch.cuda.nccl.version()``, None when torch has no NCCL."""
    try:
        reported = torch.cuda.nccl.version()  # type: ignore[no-untyped-call]
    except Exception:
        return None
    return nccl_version_string(reported)


def distribution_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def collect_environment() -> dict[str, object]:
    cudnn = torch_cudnn_version()
    driver, driver_source = (None, "not read")
    gpus: list[dict[str, object]] = []
    try:
        gpus = [gpu.as_json() for gpu in list_gpus()]
        if gpus:
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
    }
