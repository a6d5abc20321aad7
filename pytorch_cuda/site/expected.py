"""'Can I use bf16 on X?' for a GPU never measured: the answer the contract's architecture table gives.

Every answer here is **expected, not measured**: it comes from the GPU's compute capability through
pytorch_cuda_contract.gpu (is_native, architecture, FLASH_ATTENTION_FROM), never from a run.  The GPUs listed are
the contract's one GPU table (pytorch_cuda_contract/gpu_models.py): a new GPU there is a new row here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from pytorch_cuda_contract import gpu_models
from pytorch_cuda_contract.gpu import FLASH_ATTENTION_FROM, ComputeCapability, architecture, is_native, needs


def known_gpus() -> tuple[tuple[str, ComputeCapability, str], ...]:
    """The rows of the page: each model of the contract's GPU table that has a ``listed_as`` name, in its order,
    as (name as NVIDIA writes it, compute capability, interconnect)."""
    return tuple((m.listed_as, m.capability, m.interconnect) for m in gpu_models.GPU_MODELS if m.listed_as)


# The tensor-core generation of each architecture of the contract's table.
TENSOR_CORE_GENERATION: Final = {"Volta": 1, "Turing": 2, "Ampere": 3, "Ada": 4, "Hopper": 4, "Blackwell": 5}


@dataclass(frozen=True)
class Expected:
    gpu: str
    slug: str
    cc: ComputeCapability
    architecture: str
    tensor_cores: int | None  # generation
    bf16: bool
    fp16: bool
    tf32: bool
    flash_attention: bool
    interconnect: str  # nvlink, pcie or either (the contract's GPU table)
    measured_as: str | None  # the measured GPU it is (a link to its page), or None: expected, not measured
    kernels: tuple[tuple[str, bool], ...] = ()  # (image variant, whether its CUDA arch list runs on this GPU)

    @property
    def answer(self) -> str:
        missing = [variant for variant, has in self.kernels if not has]
        if self.kernels and len(missing) == len(self.kernels):
            return (
                f"Not with these images: none has kernels for compute capability {self.cc} "
                f"({', '.join(missing)}); build one whose arch list includes sm_{self.cc.major}{self.cc.minor}."
            )
        if self.bf16:
            return (
                f"Yes: compute capability {self.cc} ({self.architecture}, tensor cores gen {self.tensor_cores}) "
                "runs bf16 on its tensor cores; train in bf16 autocast, no GradScaler."
            )
        fp16 = "fp16 autocast with a GradScaler" if self.fp16 else "fp32 (no tensor cores)"
        return (
            f"No: bf16 needs {needs('bf16')}; {self.cc} ({self.architecture}) emulates it, slower than fp32. "
            f"Use {fp16}."
        )


def slug(name: str) -> str:
    return "-".join(name.lower().split())


def _measured(name: str, measured: Iterable[str]) -> str | None:
    """The measured GPU whose name holds every word of ``name`` (NVIDIA H100 80GB HBM3 is an H100)."""
    needles = name.upper().split()
    for gpu in measured:
        words = gpu.upper().replace("-", " ").split()
        if all(n in words for n in needles):
            return gpu
    return None


def runs_on(cc: ComputeCapability, arch_list: Iterable[str]) -> bool:
    """Whether a torch build with this arch list has kernels for the GPU: a cubin of the same major and a minor
    no higher (sm_80 runs on 8.6), or PTX of a capability no higher (compute_90 is JIT-compiled on 10.0)."""
    for arch in arch_list:
        kind, _, digits = arch.partition("_")
        if not digits.rstrip("a").isdigit() or len(digits.rstrip("a")) < 2:
            continue
        number = digits.rstrip("a")
        major, minor = int(number[:-1]), int(number[-1])
        if kind == "sm" and major == cc.major and minor <= cc.minor:
            return True
        if kind == "compute" and (major, minor) <= (cc.major, cc.minor):
            return True
    return False


def expected_table(measured: Iterable[str], arch_lists: Mapping[str, Sequence[str]] | None = None) -> list[Expected]:
    """Each known GPU's expected answer, with whether each image variant (its CUDA arch list) has kernels for it,
    so an image is never advised for a GPU it cannot run on."""
    names = list(measured)
    rows = []
    for name, cc, interconnect in known_gpus():
        arch = architecture(cc)
        rows.append(
            Expected(
                gpu=name,
                slug=slug(name),
                cc=cc,
                architecture=arch,
                tensor_cores=TENSOR_CORE_GENERATION.get(arch),
                bf16=is_native("bf16", cc),
                fp16=is_native("fp16", cc),
                tf32=is_native("tf32", cc),
                flash_attention=cc >= FLASH_ATTENTION_FROM,
                interconnect=interconnect,
                measured_as=_measured(name, names),
                kernels=tuple((v, runs_on(cc, archs)) for v, archs in sorted((arch_lists or {}).items()) if archs),
            )
        )
    return rows
