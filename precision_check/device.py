"""Which device the check runs on, and which dtypes it runs there."""

from __future__ import annotations

import platform
from collections.abc import Sequence

import torch

from precision_check.bad_input import PrecisionCheckError
from precision_check.check_report import Device
from pytorch_cuda_contract.gpu import architecture, is_native, native_from

DTYPES = ("fp32", "tf32", "fp16", "bf16")
BF16_FROM = native_from("bf16")
DEFAULT_DTYPES = ("fp32", "fp16", "bf16")

CPU_DTYPES = ("fp32", "bf16")
CPU_FP16_NOTE = (
    "fp16 is not run on the CPU unless --dtypes names it: CPU fp16 autocast is slow and says nothing about a "
    "GPU. fp16's range is still checked: a module output above 65504 (fp16's largest value) in the fp32 or "
    "bf16 run is one that fp16 could not hold"
)
CPU_FP16_ASKED_NOTE = "fp16 ran on the CPU because --dtypes asked for it: its numerics count, its speed does not"


def pick_device(requested: str | None) -> tuple[Device, list[str]]:
    available = torch.cuda.is_available()
    if requested == "cuda" and not available:
        raise PrecisionCheckError(
            "--device cuda was asked for but no CUDA GPU is visible (torch.cuda.is_available() is False)",
            "run the container with `--gpus all` on a GPU host, or pass --device cpu to check fp32 and bf16 "
            "numerics on the CPU",
        )
    version = torch.__version__
    if requested == "cpu" or not available:
        notes = [] if requested == "cpu" else ["no CUDA GPU is visible: ran on the CPU"]
        return Device("cpu", platform.processor() or platform.machine() or "CPU", None, None, version), notes
    props = torch.cuda.get_device_properties(0)
    capability = f"{props.major}.{props.minor}"
    native_bf16 = is_native("bf16", (props.major, props.minor))
    device = Device("cuda", props.name, capability, native_bf16, version, torch.version.cuda)
    return device, []


def plan_dtypes(requested: Sequence[str] | None, device: Device) -> tuple[tuple[str, ...], list[str]]:
    """The dtypes to run, fp32 first. Unasked, the CPU runs fp32 and bf16 only (see CPU_FP16_NOTE)."""
    notes: list[str] = []
    if requested is None:
        requested = CPU_DTYPES if device.kind == "cpu" else DEFAULT_DTYPES
        if device.kind == "cpu":
            notes.append(CPU_FP16_NOTE)
    elif device.kind == "cpu" and "fp16" in requested:
        notes.append(CPU_FP16_ASKED_NOTE)
    unknown = [d for d in requested if d not in DTYPES]
    if unknown:
        raise PrecisionCheckError(
            f"unknown dtype {', '.join(map(repr, unknown))} in --dtypes",
            f"choose from {','.join(DTYPES)} (comma-separated)",
        )
    wanted = list(dict.fromkeys(requested))
    if "fp32" not in wanted:
        wanted.insert(0, "fp32")
        notes.append("fp32 was added: it is the reference every other dtype is compared with")
    wanted.sort(key=DTYPES.index)
    if device.kind == "cpu":
        if "tf32" in wanted:
            wanted.remove("tf32")
            notes.append("tf32 is not run on the CPU: TF32 is a GPU tensor-core mode")
    elif device.bf16_native is False and "bf16" in wanted:
        notes.append(
            f"{device.name} (compute capability {device.compute_capability}) has no native bf16 "
            f"(it needs {BF16_FROM}, {architecture(BF16_FROM)}): bf16 runs emulated and is not recommended"
        )
    return tuple(wanted), notes
