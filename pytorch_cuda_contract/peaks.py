"""Datasheet dense peak throughput (TFLOP/s, no sparsity) per GPU and dtype, as read from the contract's one GPU
table (gpu_models.py: the numbers live there).

``None`` means the GPU has no tensor-core path for that dtype.  Standard library only: the suite's "% of datasheet"
and its throughput gates (conformance/support/expectations/bounds.py), the in-image summary and the host report
read the same table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pytorch_cuda_contract import gpu_models
from pytorch_cuda_contract.gpu_models import GpuModel

DTYPES: Final = ("fp16", "bf16", "tf32", "fp32")


@dataclass(frozen=True)
class PeakSpec:
    gpu: str
    match: tuple[str, ...]  # all substrings must occur in the device name
    fp32: float
    tf32: float | None
    fp16: float
    bf16: float | None

    def peak(self, dtype: str) -> float | None:
        value: float | None = getattr(self, dtype)
        return value


def peak_spec(model: GpuModel) -> PeakSpec | None:
    """The model's datasheet peaks as the suite and the report read them, or None (no datasheet number taken)."""
    p = model.peaks
    return None if p is None else PeakSpec(model.name, model.match, fp32=p.fp32, tf32=p.tf32, fp16=p.fp16, bf16=p.bf16)


def peak_table() -> tuple[PeakSpec, ...]:
    """Every model of the contract's GPU table that has datasheet peaks, in the table's order."""
    return tuple(spec for spec in map(peak_spec, gpu_models.GPU_MODELS) if spec is not None)


# Only "% of datasheet" (and the fp32 ceiling) use the peaks; the gates that must hold on any GPU come from the
# architecture (the suite's expectations/ratios.py).
PEAK_TABLE: Final[tuple[PeakSpec, ...]] = peak_table()


def lookup_peak(device_name: str) -> PeakSpec | None:
    """Datasheet entry for a ``torch.cuda.get_device_name()`` string, or None.

    Every needle must be a whole word of the name (split at spaces and dashes): "A10" is not "A100",
    "L4" is not "L40S" and "H200" is not "GH200".  A MIG instance gets None: the architecture ratios,
    which a slice keeps, gate it instead.
    """
    words = gpu_models.device_words(device_name)
    if "MIG" in words:  # a MIG slice ("... MIG 1g.10gb") has a fraction of the SMs: no datasheet number applies
        return None
    for spec in peak_table():
        if all(needle in words for needle in spec.match):
            return spec
    return None
