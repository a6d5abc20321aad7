"""The probe boundary: read the real environment (torch, NVML, /dev/shm, the manifest, nvcc).

Each probe is small and tolerant: a missing piece becomes None and a reason, never a traceback.
Tests replace :func:`probe_environment` with fakes; everything downstream is pure.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import platform
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from pytorch_cuda_contract import paths
from pytorch_cuda_contract.driver import read_driver_version
from pytorch_cuda_contract.gpu import ComputeCapability, GpuDevice
from pytorch_cuda_contract.known_settings import KNOWN_SETTING_VARIABLES
from pytorch_cuda_contract.shared_memory import shm_size_bytes
from pytorch_cuda_contract.versions import cudnn_version_string, nccl_version_string
from pytorch_cuda_entry.facts import Environment, ImageFacts


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def probe_gpus() -> tuple[tuple[GpuDevice, ...], str | None]:
    """GPUs through NVML (pynvml, from nvidia-ml-py): no CUDA context, so it is quick and safe."""
    try:
        pynvml: Any = importlib.import_module("pynvml")
        pynvml.nvmlInit()
    except Exception as exc:
        return (), f"NVML: {exc}"
    try:
        gpus = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(handle)
            memory = pynvml.nvmlDeviceGetMemoryInfo(handle).total
            capability = ComputeCapability(int(major), int(minor))
            gpus.append(GpuDevice(index, _text(pynvml.nvmlDeviceGetName(handle)), capability, int(memory)))
        return tuple(gpus), None
    except Exception as exc:
        return (), f"NVML: {exc}"
    finally:
        with contextlib.suppress(Exception):
            pynvml.nvmlShutdown()


def probe_torch() -> dict[str, str | None]:
    try:
        torch: Any = importlib.import_module("torch")
    except Exception as exc:
        return {"torch": f"not importable ({type(exc).__name__})", "cuda": None, "cudnn": None, "nccl": None}
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    try:
        nccl: str | None = nccl_version_string(torch.cuda.nccl.version())
    except Exception:
        nccl = None
    return {
        "torch": str(torch.__version__),
        "cuda": torch.version.cuda,
        "cudnn": cudnn_version_string(int(cudnn)) if cudnn else None,
        "nccl": nccl,
    }


def probe_image() -> ImageFacts:
    path = Path(os.environ.get(paths.MANIFEST_ENV, paths.MANIFEST_PATH))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ImageFacts()
    pins = data.get("pins", {}) if isinstance(data, dict) else {}
    return ImageFacts(
        target=data.get("target"),
        flavour=data.get("flavour"),
        cuda=pins.get("cuda"),
        min_driver=data.get("min_driver"),
        compat_driver=data.get("cuda_compat_driver"),
    )


def probe_nvcc() -> tuple[str | None, str | None]:
    """CUDA_HOME and `nvcc --version`'s release, when a compiler is there (the devel flavour)."""
    nvcc = shutil.which("nvcc")
    home = os.environ.get("CUDA_HOME")
    if nvcc is None:
        return home, None
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return home, None
    match = re.search(r"release (\d+\.\d+), V([\d.]+)", out)
    return home, (match.group(2) if match else None)


def probe_environment() -> Environment:
    versions = probe_torch()
    gpus, problem = probe_gpus()
    driver, _ = read_driver_version()
    cuda_home, nvcc = probe_nvcc()
    return Environment(
        torch=versions["torch"],
        cuda=versions["cuda"],
        cudnn=versions["cudnn"],
        nccl=versions["nccl"],
        python=platform.python_version(),
        gpus=gpus,
        gpu_problem=problem,
        driver=driver,
        shm_bytes=shm_size_bytes(),
        image=probe_image(),
        cuda_home=cuda_home,
        nvcc=nvcc,
        settings=tuple((name, os.environ[name]) for name in KNOWN_SETTING_VARIABLES if name in os.environ),
    )
