"""Why there is (or is not) a usable GPU, told from the driver stack up, without needing CUDA to start.

The probe runs in a fresh subprocess (``gpu_probe.py``).  ``diagnose`` is pure so
that every case can be tested on a CPU machine.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pytorch_cuda_contract.driver import DriverRequirement

GPU_PROBE: Final = Path(__file__).resolve().parent / "gpu_probe.py"
CU_ERRORS: Final[dict[int, str]] = {
    2: "CUDA_ERROR_OUT_OF_MEMORY",
    3: "CUDA_ERROR_NOT_INITIALIZED",
    35: "CUDA_ERROR_INSUFFICIENT_DRIVER",
    46: "CUDA_ERROR_DEVICES_UNAVAILABLE",
    100: "CUDA_ERROR_NO_DEVICE",
    101: "CUDA_ERROR_INVALID_DEVICE",
    803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
    804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
    999: "CUDA_ERROR_UNKNOWN",
}
DRIVER_TOO_OLD_CODES: Final = frozenset({35, 803, 804})
TOOLKIT_HINT: Final = "run the container with --gpus all (and install the NVIDIA Container Toolkit on the host)"


@dataclass(frozen=True)
class GpuAccess:
    status: str  # "ok" | "no_gpu" (nothing passed in) | "broken" (a GPU is there but unusable)
    case: str  # ok, no_device_nodes, hidden, no_libcuda, driver_too_old, cuda_init_failed, probe_failed
    message: str


def _int(value: object) -> int | None:
    return value if isinstance(value, int) else None


def _cuda_text(version: int | None) -> str:
    return f"{version // 1000}.{(version % 1000) // 10}" if version else "unknown"


def _too_old(probe: Mapping[str, object], runtime: str | None, requirement: DriverRequirement | None) -> str:
    code = _int(probe.get("cu_init")) or 0
    driver = probe.get("nvml_driver") or "unknown (NVML unavailable)"
    need = (
        f"CUDA {runtime} needs driver >= {requirement.min_driver} (>= {requirement.compat_driver} with the "
        "cuda-compat forward-compatibility package, datacenter GPUs only)"
        if requirement is not None and runtime
        else f"this CUDA runtime ({runtime or 'unknown'}) needs a newer driver"
    )
    return (
        f"NVML reports driver {driver} (its libcuda supports CUDA {_cuda_text(_int(probe.get('cuda_driver_api')))}), "
        f"but cuInit failed with {code} ({CU_ERRORS.get(code, 'error')}): the driver is too old. {need}. "
        "Fix: upgrade the NVIDIA driver, or install the forward-compat package (cuda-compat), or use an image "
        "built for an older CUDA"
    )


def diagnose(
    probe: Mapping[str, object],
    runtime: str | None,
    requirement: DriverRequirement | None,
    visible_devices: str | None,
) -> GpuAccess:
    found = probe.get("device_nodes")
    nodes = found if isinstance(found, list) else []
    code = _int(probe.get("cu_init"))
    if probe.get("error"):
        return GpuAccess("broken", "probe_failed", f"the GPU probe itself failed: {probe['error']}")
    if probe.get("libcuda") is None:
        if not nodes:
            return GpuAccess(
                "no_gpu",
                "no_device_nodes",
                "no /dev/nvidia* device and no libcuda.so.1: no GPU was passed in; " + TOOLKIT_HINT,
            )
        return GpuAccess(
            "broken",
            "no_libcuda",
            f"{len(nodes)} /dev/nvidia* device node(s) but libcuda.so.1 cannot be loaded "
            f"({probe.get('libcuda_error')}): "
            "the driver's user-space library was not mounted; with Docker use --gpus all through the NVIDIA "
            "Container Toolkit (NVIDIA_DRIVER_CAPABILITIES must include compute), or install the NVIDIA driver",
        )
    if code == 0 and (_int(probe.get("device_count")) or 0) > 0:
        return GpuAccess("ok", "ok", f"driver {probe.get('nvml_driver')}, {probe.get('device_count')} CUDA device(s)")
    if code in DRIVER_TOO_OLD_CODES:
        return GpuAccess("broken", "driver_too_old", _too_old(probe, runtime, requirement))
    if code in {100, 0}:
        if visible_devices is not None and (visible_devices.strip() in ("", "-1", "none", "void") or nodes):
            return GpuAccess(
                "no_gpu", "hidden", f"CUDA_VISIBLE_DEVICES={visible_devices!r} hides every GPU; unset it or name a GPU"
            )
        if not nodes:
            return GpuAccess(
                "no_gpu", "no_device_nodes", f"libcuda.so.1 loads but there is no /dev/nvidia* device; {TOOLKIT_HINT}"
            )
    name = CU_ERRORS.get(code or 0, "unknown error")
    return GpuAccess(
        "broken",
        "cuda_init_failed",
        f"cuInit failed with {code} ({name}) although {len(nodes)} /dev/nvidia* node(s) exist and NVML says driver "
        f"{probe.get('nvml_driver') or 'unavailable'}; check `nvidia-smi`, dmesg (Xid errors) and that no MIG/"
        "persistence setting hides the GPU",
    )


@functools.lru_cache(maxsize=1)
def run_probe() -> dict[str, object]:
    try:
        result = subprocess.run(
            [sys.executable, str(GPU_PROBE)], capture_output=True, text=True, timeout=60, check=False
        )
        lines = result.stdout.strip().splitlines()
        if result.returncode != 0 or not lines:
            return {"error": f"exit {result.returncode}: {result.stderr.strip()[-500:]}"}
        probe: dict[str, object] = json.loads(lines[-1])
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    return probe
