"""NVIDIA driver version: reading it and judging it against a CUDA runtime."""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pytorch_cuda_contract.versions import is_at_least, version_tuple

# Minimum Linux driver per CUDA toolkit release (GA), from the CUDA Toolkit
# release notes, table "CUDA Toolkit and Corresponding Driver Versions".
# Used only when no manifest names min_driver.
MIN_DRIVER_FOR_CUDA: Final[dict[str, str]] = {
    "11.8": "520.61.05",
    "12.0": "525.60.13",
    "12.1": "530.30.02",
    "12.2": "535.54.03",
    "12.3": "545.23.06",
    "12.4": "550.54.14",
    "12.5": "555.42.02",
    "12.6": "560.28.03",
    "12.8": "570.26",
    "12.9": "575.51.03",
    "13.0": "580.65.06",
}
# Minimum driver under CUDA minor-version compatibility, per CUDA major.
COMPAT_DRIVER_FOR_CUDA_MAJOR: Final[dict[int, str]] = {
    11: "450.80.02",
    12: "525.60.13",
    13: "580.65.06",
}
FALLBACK_IMAGE_HINT: Final = "the cu126 image"


@dataclass(frozen=True)
class DriverRequirement:
    min_driver: str
    compat_driver: str
    source: str  # "manifest" or "built-in table"


@dataclass(frozen=True)
class DriverVerdict:
    status: str  # "ok" | "compat" | "too_old"
    message: str


def requirement_for_cuda(cuda: str) -> DriverRequirement | None:
    """Built-in requirement for a CUDA runtime version like ``"12.8"``. A release newer than the table (a minor or
    a major not in it yet) is judged against the newest older release in it: a lower bound that still holds (a
    newer CUDA never runs on an older driver than its predecessor did); only a CUDA older than the table is None."""
    wanted = version_tuple(cuda)[:2]
    key = ".".join(str(n) for n in wanted)
    minimum = MIN_DRIVER_FOR_CUDA.get(key)
    compat = COMPAT_DRIVER_FOR_CUDA_MAJOR.get(wanted[0])
    if minimum is not None and compat is not None:
        return DriverRequirement(min_driver=minimum, compat_driver=compat, source="built-in table")
    older = [release for release in MIN_DRIVER_FOR_CUDA if version_tuple(release)[:2] < wanted]
    if not older:
        return None
    nearest = max(older, key=version_tuple)
    floor = MIN_DRIVER_FOR_CUDA[nearest]
    same_major = version_tuple(nearest)[0] == wanted[0]
    return DriverRequirement(
        min_driver=floor,
        compat_driver=compat if same_major and compat is not None else floor,
        source=f"built-in table, which stops at CUDA {nearest}: its driver is a lower bound for CUDA {key}",
    )


def judge_driver(driver: str, cuda: str, requirement: DriverRequirement) -> DriverVerdict:
    """Classify ``driver`` for CUDA runtime ``cuda``.

    >= min_driver: ok.  Between cuda_compat_driver and min_driver: runs under
    minor-version compatibility (pass with a note; PTX JIT of newer PTX and some
    features are unavailable).  Below cuda_compat_driver: fails.
    """
    if is_at_least(driver, requirement.min_driver):
        return DriverVerdict(
            "ok", f"driver {driver} >= {requirement.min_driver} required by CUDA {cuda} ({requirement.source})"
        )
    if is_at_least(driver, requirement.compat_driver):
        return DriverVerdict(
            "compat",
            f"driver {driver} is older than {requirement.min_driver} (CUDA {cuda} release driver) but >= "
            f"{requirement.compat_driver}: running under CUDA minor-version compatibility "
            "(no JIT of newer PTX); upgrade the driver for full support",
        )
    return DriverVerdict(
        "too_old",
        f"driver {driver} is too old for CUDA {cuda}: needs >= {requirement.compat_driver} "
        f"(minor-version compatibility) and >= {requirement.min_driver} for full support ({requirement.source}). "
        f"Fix: upgrade the NVIDIA driver to >= {requirement.min_driver} or use {FALLBACK_IMAGE_HINT}",
    )


def read_driver_version() -> tuple[str | None, str]:
    """The NVIDIA driver version and where it came from (NVML, then /proc)."""
    try:
        pynvml = importlib.import_module("pynvml")
        pynvml.nvmlInit()
        try:
            version = pynvml.nvmlSystemGetDriverVersion()
        finally:
            pynvml.nvmlShutdown()
        text = version.decode() if isinstance(version, bytes) else str(version)
        return text, "nvml"
    except Exception as exc:
        nvml_problem = f"{type(exc).__name__}: {exc}"
    proc = Path("/proc/driver/nvidia/version")
    if proc.exists():
        match = re.search(r"Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)", proc.read_text())
        if match:
            return match.group(1), "/proc/driver/nvidia/version"
    return None, f"no NVML ({nvml_problem}) and no /proc/driver/nvidia/version"
