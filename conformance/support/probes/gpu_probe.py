"""Subprocess probe of the GPU driver stack, without torch: device nodes, libcuda, cuInit, NVML.

Run as ``python gpu_probe.py``; prints one JSON object.  A fresh process, so
that cuInit never touches the test process.  Standard library only (pynvml optional).
"""

from __future__ import annotations

import ctypes
import glob
import importlib
import json
import sys


def _driver_from_nvml() -> tuple[str | None, str | None]:
    try:
        pynvml = importlib.import_module("pynvml")
        pynvml.nvmlInit()
        version = pynvml.nvmlSystemGetDriverVersion()
        pynvml.nvmlShutdown()
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}"
    return (version.decode() if isinstance(version, bytes) else str(version)), None


def probe() -> dict[str, object]:
    result: dict[str, object] = {"device_nodes": sorted(glob.glob("/dev/nvidia[0-9]*") + glob.glob("/dev/nvidiactl"))}
    result["nvml_driver"], result["nvml_error"] = _driver_from_nvml()
    try:
        libcuda = ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        result.update(libcuda=None, libcuda_error=str(exc), cu_init=None, cuda_driver_api=None, device_count=None)
        return result
    result["libcuda"] = "libcuda.so.1"
    result["libcuda_error"] = None
    version = ctypes.c_int(0)
    result["cuda_driver_api"] = int(version.value) if libcuda.cuDriverGetVersion(ctypes.byref(version)) == 0 else None
    result["cu_init"] = int(libcuda.cuInit(0))
    count = ctypes.c_int(0)
    ok = result["cu_init"] == 0 and libcuda.cuDeviceGetCount(ctypes.byref(count)) == 0
    result["device_count"] = int(count.value) if ok else None
    return result


if __name__ == "__main__":
    print(json.dumps(probe()))
    sys.exit(0)
