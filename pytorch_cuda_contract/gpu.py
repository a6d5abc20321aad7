"""The GPU facts: compute capability -> what the architecture runs natively. One table, standard library only.

"fp16 tensor cores need compute capability 7.0 (Volta), bf16 and TF32 need 8.0 (Ampere)" lives here and nowhere
else: the suite's skips and verdicts, the report's advice, the article's claims, precision-check and the entry
banner all ask :func:`is_native`. A suite's own expectations (datasheet peaks, ratio bounds) stay in the suite.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, NamedTuple


class ComputeCapability(NamedTuple):
    """``torch.cuda.get_device_capability()``: compares like the (major, minor) tuple it is."""

    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    @property
    def sm(self) -> str:
        return f"sm_{self.major}{self.minor}"

    @classmethod
    def parse(cls, text: str | None) -> ComputeCapability | None:
        """``"9.0"`` -> (9, 0); None for anything else (absent, ``"?"``)."""
        try:
            major, minor = (text or "").split(".")
            return cls(int(major), int(minor))
        except ValueError:
            return None


@dataclass(frozen=True)
class Architecture:
    first: ComputeCapability
    name: str


# The first architecture of each generation the images care about (newest last).
ARCHITECTURES: Final = (
    Architecture(ComputeCapability(7, 0), "Volta"),
    Architecture(ComputeCapability(7, 5), "Turing"),
    Architecture(ComputeCapability(8, 0), "Ampere"),
    Architecture(ComputeCapability(8, 9), "Ada"),
    Architecture(ComputeCapability(9, 0), "Hopper"),
    Architecture(ComputeCapability(10, 0), "Blackwell"),
)
# The first compute capability whose tensor cores (or, for fp32, CUDA cores) run the dtype natively.
NATIVE_FROM: Final[Mapping[str, ComputeCapability]] = MappingProxyType(
    {
        "fp32": ComputeCapability(0, 0),
        "fp16": ComputeCapability(7, 0),
        "tf32": ComputeCapability(8, 0),
        "bf16": ComputeCapability(8, 0),
    }
)
TENSOR_CORES_FROM: Final = NATIVE_FROM["fp16"]
# From here every dtype above runs natively: a GEMM of any of them that raises is a fault, not a limit.
EVERY_DTYPE_FROM: Final = max(NATIVE_FROM.values())
# FlashAttention and memory-efficient SDPA kernels for half precision: Ampere and newer.
FLASH_ATTENTION_FROM: Final = ComputeCapability(8, 0)


@dataclass(frozen=True)
class GpuDevice:
    """One GPU as a live process sees it (torch or NVML): the entry banner's and the suite's inventory.

    A results file's record of a GPU (strings, any part may be missing) is ``results_model.Gpu``."""

    index: int
    name: str
    capability: ComputeCapability
    memory_bytes: int
    multiprocessors: int | None = None  # NVML does not say; torch does
    uuid: str | None = None

    @property
    def cc(self) -> str:
        return str(self.capability)

    @property
    def sm(self) -> str:
        return self.capability.sm

    def native(self, dtype: str) -> bool:
        return is_native(dtype, self.capability)


def native_from(dtype: str) -> ComputeCapability:
    """The first compute capability that runs ``dtype`` natively (KeyError for an unknown dtype)."""
    return NATIVE_FROM[dtype]


def is_native(dtype: str, capability: tuple[int, int]) -> bool:
    return tuple(capability) >= NATIVE_FROM[dtype]


def architecture(capability: tuple[int, int]) -> str:
    """The architecture's name (``"Ampere"``); "pre-Volta" below the table."""
    names = [a.name for a in ARCHITECTURES if tuple(capability) >= a.first]
    return names[-1] if names else "pre-Volta"


def needs(dtype: str) -> str:
    """``"compute capability >= 8.0"``: the requirement, as the checks' skip reasons say it."""
    return f"compute capability >= {NATIVE_FROM[dtype]}"


def verdict_by_capability(dtype: str, capability: tuple[int, int]) -> str:
    """What the architecture alone says: native, or emulated (unsupported for TF32, a mode that is absent)."""
    if is_native(dtype, capability):
        return "native"
    return "unsupported" if dtype == "tf32" else "emulated"
