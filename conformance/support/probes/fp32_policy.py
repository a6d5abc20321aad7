"""The FP32 matmul policy as the process sees it at startup, read so that it never raises."""

from __future__ import annotations

import os
from collections.abc import Callable


def _read(getter: Callable[[], object]) -> object:
    try:
        value = getter()
    except Exception as exc:  # e.g. mixing the legacy and the new TF32 API raises
        return {"error": f"{type(exc).__name__}: {str(exc)[:160]}"}
    return value if isinstance(value, str | None) else bool(value) if isinstance(value, bool) else str(value)


def fp32_policy_snapshot() -> dict[str, object]:
    """The FP32 matmul policy as the process sees it (taken before any test runs); never raises.

    A value that cannot be read is recorded as ``{"error": ...}``; the policy check fails on it.
    """
    try:
        import torch
    except Exception as exc:  # reported by the failing test modules
        return {"error": f"import torch failed: {type(exc).__name__}: {exc}"}
    backends = torch.backends
    return {
        "float32_matmul_precision": _read(torch.get_float32_matmul_precision),
        "cuda_matmul_allow_tf32": _read(lambda: bool(backends.cuda.matmul.allow_tf32)),
        "cudnn_allow_tf32": _read(lambda: bool(backends.cudnn.allow_tf32)),
        "fp32_precision": _read(lambda: getattr(backends, "fp32_precision", None)),
        "cuda_matmul_fp32_precision": _read(lambda: getattr(backends.cuda.matmul, "fp32_precision", None)),
        "cudnn_conv_fp32_precision": _read(
            lambda: getattr(getattr(backends.cudnn, "conv", None), "fp32_precision", None)
        ),
        "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE": os.environ.get("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"),
        "NVIDIA_TF32_OVERRIDE": os.environ.get("NVIDIA_TF32_OVERRIDE"),
    }
