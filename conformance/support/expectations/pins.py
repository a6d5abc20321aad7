"""Pure comparisons behind the pin and library-consistency checks.

Each function returns ``None`` when things agree, else a failure message that
names both values and the fix.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from pytorch_cuda_contract.versions import cudnn_version_int, cudnn_version_string, release_prefix

# Wheel names tried on a bare host (no manifest), newest CUDA major first.
CANDIDATE_WHEELS: Final[dict[str, tuple[str, ...]]] = {
    "cudnn": ("nvidia-cudnn-cu13", "nvidia-cudnn-cu12", "nvidia-cudnn-cu11"),
    "nccl": ("nvidia-nccl-cu13", "nvidia-nccl-cu12", "nvidia-nccl-cu11"),
}
REBUILD_HINT: Final = "rebuild the image (or fix the manifest) so they agree"


def compare_exact(what: str, pinned: str, seen: str | None, source: str) -> str | None:
    if seen is None:
        return f"{what}: manifest pins {pinned} but {source} reports none; {REBUILD_HINT}"
    if seen != pinned:
        return f"{what}: manifest pins {pinned} but {source} is {seen}; {REBUILD_HINT}"
    return None


def compare_cudnn(pinned: str, torch_cudnn: int | None, source: str = "torch.backends.cudnn.version()") -> str | None:
    """``pinned`` is the wheel version (9.10.2.21); torch reports 91002."""
    expected = cudnn_version_int(pinned)
    if torch_cudnn is None:
        return (
            f"cuDNN: expected {pinned} ({expected}) but {source} is None: torch cannot load libcudnn "
            "(nvidia-cudnn wheel missing or its library deleted?); reinstall the pinned nvidia-cudnn wheel"
        )
    if torch_cudnn != expected:
        return (
            f"cuDNN: expected {pinned} ({expected}) but {source} is {torch_cudnn} "
            f"({cudnn_version_string(torch_cudnn)}); {REBUILD_HINT}"
        )
    return None


def compare_nccl(pinned: str, torch_nccl: str | None, source: str = "torch.cuda.nccl.version()") -> str | None:
    expected = release_prefix(pinned, 3)
    if torch_nccl is None:
        return (
            f"NCCL: expected {expected} but {source} is unavailable: torch has no NCCL "
            "(CPU-only torch, or libnccl missing); install the CUDA torch build with the pinned nvidia-nccl wheel"
        )
    if torch_nccl != expected:
        return f"NCCL: expected {expected} but {source} is {torch_nccl}; {REBUILD_HINT}"
    return None


def pick_wheel(
    library: str, manifest_wheels: Mapping[str, str] | None, version_of: Callable[[str], str | None]
) -> tuple[str | None, str | None]:
    """(wheel name, installed version) for ``library``; manifest name first, else auto-detect."""
    if manifest_wheels is not None and library in manifest_wheels:
        name = manifest_wheels[library]
        return name, version_of(name)
    for name in CANDIDATE_WHEELS.get(library, ()):
        version = version_of(name)
        if version is not None:
            return name, version
    return None, None
