"""NVML through nvidia-ml-py (optional): driver, clocks, power limit, throttle reasons.

Every function returns None (or an empty result) when pynvml or the driver is
missing; NVML works even where CUDA cannot start, which is why the driver is
read here first.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Final

# nvmlClocksEventReason* / nvmlClocksThrottleReason* bits (nvml.h).
THROTTLE_REASONS: Final[dict[int, str]] = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
_STATE: dict[str, ModuleType | str] = {}


def nvml() -> ModuleType | None:
    """The initialised pynvml module (initialised once per process), or None."""
    if "module" in _STATE:
        module = _STATE["module"]
        return module if isinstance(module, ModuleType) else None
    try:
        pynvml = importlib.import_module("pynvml")
        pynvml.nvmlInit()
    except Exception as exc:
        _STATE["module"] = f"{type(exc).__name__}: {exc}"
        return None
    _STATE["module"] = pynvml
    return pynvml


def nvml_error() -> str | None:
    """Why NVML is unusable (after a failed ``nvml()``), else None."""
    value = _STATE.get("module")
    return value if isinstance(value, str) else None


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def driver_version() -> str | None:
    pynvml = nvml()
    if pynvml is None:
        return None
    try:
        return _text(pynvml.nvmlSystemGetDriverVersion())
    except Exception:
        return None


def cuda_driver_version() -> str | None:
    """The CUDA version the driver supports, like "13.0"."""
    pynvml = nvml()
    if pynvml is None:
        return None
    try:
        value = int(pynvml.nvmlSystemGetCudaDriverVersion())
    except Exception:
        return None
    return f"{value // 1000}.{(value % 1000) // 10}"


def _handle(cuda_uuid: str | None, index: int) -> object | None:
    pynvml = nvml()
    if pynvml is None:
        return None
    try:
        if cuda_uuid:
            uuid = cuda_uuid if cuda_uuid.startswith(("GPU-", "MIG-")) else f"GPU-{cuda_uuid}"
            handle: object = pynvml.nvmlDeviceGetHandleByUUID(uuid)
        else:
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    except Exception:
        return None
    return handle


def device_uuid(cuda_uuid: str | None, index: int) -> str | None:
    pynvml = nvml()
    handle = _handle(cuda_uuid, index)
    if pynvml is None or handle is None:
        return None
    try:
        return _text(pynvml.nvmlDeviceGetUUID(handle))
    except Exception:
        return None


def _throttle_bits(pynvml: ModuleType, handle: object) -> int:
    for name in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
        function = getattr(pynvml, name, None)
        if function is not None:
            return int(function(handle))
    return 0


def clocks(cuda_uuid: str | None, index: int) -> dict[str, object] | None:
    """SM/memory clocks (MHz), enforced power limit (W) and active throttle reasons, now."""
    pynvml = nvml()
    handle = _handle(cuda_uuid, index)
    if pynvml is None or handle is None:
        return None
    try:
        bits = _throttle_bits(pynvml, handle)
        return {
            "sm_mhz": int(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM)),
            "mem_mhz": int(pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_MEM)),
            "power_limit_w": round(int(pynvml.nvmlDeviceGetEnforcedPowerLimit(handle)) / 1000.0, 1),
            "throttle_reasons": [name for bit, name in THROTTLE_REASONS.items() if bits & bit],
        }
    except Exception:
        return None


# How the visible GPUs reach each other, for the all-reduce bandwidth floor (see expectations/bounds.busbw_gate).
NVLINK: Final = "nvlink"
PCIE: Final = "pcie"
UNKNOWN: Final = "unknown"


def interconnect_from_nvml(pynvml: object, handles: list[object]) -> tuple[str, str]:
    """(NVLINK | PCIE | UNKNOWN, why) from NVML's NVLink P2P status of every pair of ``handles`` (pure: pass a fake).

    NVLink when every pair reports NVLink P2P OK (an NVSwitch or bridged pair); PCIe when NVML answers for every
    pair and one has no NVLink (NCCL then goes over PCIe P2P or host memory); unknown when NVML cannot answer."""
    status = getattr(pynvml, "nvmlDeviceGetP2PStatus", None)
    index, ok = getattr(pynvml, "NVML_P2P_CAPS_INDEX_NVLINK", None), getattr(pynvml, "NVML_P2P_STATUS_OK", None)
    if status is None or index is None or ok is None:
        return UNKNOWN, "this pynvml has no nvmlDeviceGetP2PStatus"
    if len(handles) < 2:
        return UNKNOWN, f"{len(handles)} GPU handle(s) from NVML: no pair to read"
    without = []
    for first in range(len(handles)):
        for second in range(first + 1, len(handles)):
            try:
                answer = status(handles[first], handles[second], index)
            except Exception as exc:
                return UNKNOWN, f"nvmlDeviceGetP2PStatus(GPU {first}, GPU {second}, NVLINK) failed: {exc}"
            if answer != ok:
                without.append(f"{first}-{second}")
    if without:
        return PCIE, f"no NVLink P2P between GPUs {', '.join(without)} (NVML): PCIe or host memory"
    return NVLINK, f"NVLink P2P between all {len(handles)} GPUs (NVML)"


def interconnect(gpus: list[tuple[str | None, int]]) -> tuple[str, str]:
    """How the visible GPUs, as (CUDA uuid, CUDA index) pairs, are linked: see ``interconnect_from_nvml``."""
    pynvml = nvml()
    if pynvml is None:
        return UNKNOWN, f"NVML unavailable ({nvml_error()})"
    handles = [_handle(uuid, index) for uuid, index in gpus]
    if any(handle is None for handle in handles):
        return UNKNOWN, "NVML has no handle for every visible GPU"
    return interconnect_from_nvml(pynvml, handles)
