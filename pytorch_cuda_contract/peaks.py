"""Datasheet dense peak throughput (TFLOP/s, no sparsity) per GPU and dtype.

Values are NVIDIA datasheet numbers at boost clock for the SXM/PCIe part the
device name identifies; "sparsity" figures are halved to dense.  ``None``
means the GPU has no tensor-core path for that dtype.  Standard library only: the suite's "% of datasheet"
and its throughput gates (conformance/support/expectations/bounds.py), the in-image summary and the host report
read the same table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

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


# Order matters: the first entry whose words all occur in the name wins.  Only "% of datasheet" uses this
# table; the gates that must hold on any GPU come from the architecture (the suite's expectations/ratios.py).
PEAK_TABLE: Final[tuple[PeakSpec, ...]] = (
    PeakSpec("V100S PCIe", ("V100S",), fp32=16.4, tf32=None, fp16=130.0, bf16=None),
    PeakSpec("V100 PCIe", ("V100", "PCIE"), fp32=14.0, tf32=None, fp16=112.0, bf16=None),
    PeakSpec("V100 SXM2", ("V100",), fp32=15.7, tf32=None, fp16=125.0, bf16=None),
    PeakSpec("T4", ("T4",), fp32=8.1, tf32=None, fp16=65.0, bf16=None),
    PeakSpec("A100", ("A100",), fp32=19.5, tf32=156.0, fp16=312.0, bf16=312.0),
    PeakSpec("A800", ("A800",), fp32=19.5, tf32=156.0, fp16=312.0, bf16=312.0),
    PeakSpec("A10G", ("A10G",), fp32=31.2, tf32=62.5, fp16=125.0, bf16=125.0),
    PeakSpec("A10", ("A10",), fp32=31.2, tf32=62.5, fp16=125.0, bf16=125.0),
    PeakSpec("A40", ("A40",), fp32=37.4, tf32=74.8, fp16=149.7, bf16=149.7),
    PeakSpec("L40S", ("L40S",), fp32=91.6, tf32=183.0, fp16=362.05, bf16=362.05),
    PeakSpec("L40", ("L40",), fp32=90.5, tf32=90.5, fp16=181.0, bf16=181.0),
    PeakSpec("L4", ("L4",), fp32=30.3, tf32=60.0, fp16=121.0, bf16=121.0),
    PeakSpec("RTX 6000 Ada", ("RTX", "6000", "ADA"), fp32=91.1, tf32=182.1, fp16=364.2, bf16=364.2),
    PeakSpec("RTX PRO 6000 Blackwell", ("RTX", "PRO", "6000"), fp32=126.0, tf32=252.0, fp16=504.0, bf16=504.0),
    PeakSpec("H100 PCIe", ("H100", "PCIE"), fp32=51.0, tf32=378.0, fp16=756.0, bf16=756.0),
    PeakSpec("H100 NVL", ("H100", "NVL"), fp32=60.0, tf32=417.5, fp16=835.5, bf16=835.5),
    PeakSpec("H100 SXM", ("H100",), fp32=67.0, tf32=494.7, fp16=989.4, bf16=989.4),
    PeakSpec("H800 PCIe", ("H800", "PCIE"), fp32=51.0, tf32=378.0, fp16=756.0, bf16=756.0),
    PeakSpec("H800 SXM", ("H800",), fp32=67.0, tf32=494.7, fp16=989.4, bf16=989.4),
    PeakSpec("H200 NVL", ("H200", "NVL"), fp32=60.0, tf32=417.5, fp16=835.5, bf16=835.5),
    PeakSpec("H200 SXM", ("H200",), fp32=67.0, tf32=494.7, fp16=989.4, bf16=989.4),
    PeakSpec("GH200", ("GH200",), fp32=67.0, tf32=494.7, fp16=989.4, bf16=989.4),
    PeakSpec("B200", ("B200",), fp32=75.0, tf32=1125.0, fp16=2250.0, bf16=2250.0),
)


def lookup_peak(device_name: str) -> PeakSpec | None:
    """Datasheet entry for a ``torch.cuda.get_device_name()`` string, or None.

    Every needle must be a whole word of the name (split at spaces and dashes): "A10" is not "A100",
    "L4" is not "L40S" and "H200" is not "GH200".  A MIG instance gets None: the architecture ratios,
    which a slice keeps, gate it instead.
    """
    words = device_name.upper().replace("-", " ").replace("_", " ").split()
    if "MIG" in words:  # a MIG slice ("... MIG 1g.10gb") has a fraction of the SMs: no datasheet number applies
        return None
    for spec in PEAK_TABLE:
        if all(needle in words for needle in spec.match):
            return spec
    return None
