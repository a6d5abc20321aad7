"""Legitimate settings under which some measurements cannot be made: the checks skip them with this reason.

NVIDIA_TF32_OVERRIDE=0 turns TF32 off in cuBLAS and cuDNN for the whole process (a user's deliberate choice):
TF32's speed and error band cannot be measured, and TF32 cannot serve as the reference for fp32's upper bound.
CUDA_LAUNCH_BLOCKING=1 (debugging) synchronises after every kernel: left set in an image or a job, it slows
every training step (H100: AMP 6.1x -> 4.5x), so it is a fault the floors fail on, and the failure names it
(``launch_blocking_hint``).  Forcing TF32 *on* (NVIDIA_TF32_OVERRIDE=1,
TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1) is not in this list: it makes fp32 lie, and the checks fail on it.
"""

from __future__ import annotations

import os

TF32_OFF = (
    "NVIDIA_TF32_OVERRIDE=0 turns TF32 off in cuBLAS and cuDNN for this process: TF32 speed and accuracy "
    "cannot be measured (unset it to check TF32)"
)
LAUNCH_BLOCKING = (
    "CUDA_LAUNCH_BLOCKING=1 is set: every kernel launch waits for the GPU, which slows training steps; it is a "
    "debugging setting, unset it (docker run -e CUDA_LAUNCH_BLOCKING=0, or remove it from the image's ENV)"
)


def _when_set(variable: str, value: str, reason: str) -> str | None:
    return reason if os.environ.get(variable, "").strip() == value else None


def tf32_disabled() -> str | None:
    return _when_set("NVIDIA_TF32_OVERRIDE", "0", TF32_OFF)


def launch_blocking() -> str | None:
    return _when_set("CUDA_LAUNCH_BLOCKING", "1", LAUNCH_BLOCKING)


def launch_blocking_hint() -> str:
    """Appended to a timed floor's failure: CUDA_LAUNCH_BLOCKING=1 is the likely cause when it is set."""
    blocking = launch_blocking()
    return f" ({blocking})" if blocking is not None else ""


def timing_unreliable(device: object) -> str | None:
    """Why step-time floors cannot be judged here: the caching allocator disabled (every allocation becomes
    cudaMalloc and every free a device-wide cudaFree), a legitimate setting.  Upper bounds still hold: an
    environment that slows kernels never makes fp32 look like TF32.  CUDA_LAUNCH_BLOCKING=1 is not a reason:
    it is a fault (launch_blocking_hint)."""
    import torch

    from conformance.support.probes.allocator import memory_stats_missing

    if isinstance(device, torch.device) and device.type == "cuda":
        missing = memory_stats_missing(device)
        if missing is not None:
            return f"allocations are uncached, so kernel timings include cudaMalloc/cudaFree ({missing})"
    return None
