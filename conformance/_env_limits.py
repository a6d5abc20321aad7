"""Legitimate settings under which some measurements cannot be made: the checks skip them with this reason.

NVIDIA_TF32_OVERRIDE=0 turns TF32 off in cuBLAS and cuDNN for the whole process (a user's deliberate choice):
TF32's speed and error band cannot be measured, and TF32 cannot serve as the reference for fp32's upper bound.
CUDA_LAUNCH_BLOCKING=1 (debugging) synchronises after every kernel: step-time ratios of small, launch-bound
steps (AMP, torch.compile) say nothing about the image.  Forcing TF32 *on* (NVIDIA_TF32_OVERRIDE=1,
TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1) is not in this list: it makes fp32 lie, and the checks fail on it.
"""

from __future__ import annotations

import os


def tf32_disabled() -> str | None:
    if os.environ.get("NVIDIA_TF32_OVERRIDE", "").strip() == "0":
        return (
            "NVIDIA_TF32_OVERRIDE=0 turns TF32 off in cuBLAS and cuDNN for this process: TF32 speed and accuracy "
            "cannot be measured (unset it to check TF32)"
        )
    return None


def launch_blocking() -> str | None:
    if os.environ.get("CUDA_LAUNCH_BLOCKING", "").strip() == "1":
        return (
            "CUDA_LAUNCH_BLOCKING=1 synchronises after every kernel: launch-bound step-time ratios are not "
            "measurable (unset it to gate them)"
        )
    return None
