"""The FP32 matmul policy as the process sees it at startup, read so that it never raises."""

from __future__ import annotations

import os
from collections.abc import Callable

from pytorch_cuda_contract.gpu import is_native, native_from


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


def conv_fp32_math(policy: dict[str, object], capability: tuple[int, int], tf32_off: str | None) -> tuple[str, str]:
    """What an fp32 convolution computes in under the policy read at startup: ("tf32" or "ieee", why).

    PyTorch's default lets cuDNN use TF32 for fp32 convolutions (``torch.backends.cudnn.allow_tf32`` is True, unlike
    the matmul flag), so on a GPU with TF32 (compute capability 8.0 and newer) the image's fp32 conv is TF32 unless
    the new API (``torch.backends.cudnn.conv.fp32_precision``), the legacy flag or ``tf32_off``
    (``NVIDIA_TF32_OVERRIDE=0``) says otherwise. An unreadable policy is IEEE here; the policy check fails on it."""
    if not is_native("tf32", capability):
        return (
            "ieee",
            f"no TF32 before compute capability {native_from('tf32')} (this GPU: {capability[0]}.{capability[1]})",
        )
    if tf32_off is not None:
        return "ieee", tf32_off
    new_api = policy.get("cudnn_conv_fp32_precision")
    if new_api in ("tf32", "ieee"):
        return str(new_api), f"torch.backends.cudnn.conv.fp32_precision was {new_api!r} at startup"
    legacy = policy.get("cudnn_allow_tf32")
    if legacy is True:
        return "tf32", "torch.backends.cudnn.allow_tf32 was True at startup (PyTorch's default)"
    if legacy is False:
        return "ieee", "torch.backends.cudnn.allow_tf32 was False at startup (PyTorch's default is True)"
    return "ieee", f"the cuDNN fp32 policy could not be read at startup ({legacy!r})"
