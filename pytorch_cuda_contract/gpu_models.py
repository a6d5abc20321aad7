"""The GPU models the project knows, one entry each: a new GPU is one entry here plus its test.

Each entry says what the model is called, which words of ``torch.cuda.get_device_name()`` identify it, its compute
capability (so its architecture, :func:`pytorch_cuda_contract.gpu.architecture`), its dense datasheet peaks and how
its GPUs are linked.  Standard library only.  Who reads it:

- the suite's "% of datasheet" and throughput gates (peaks.lookup_peak) and its architecture ratios
  (conformance/support/expectations/ratios.py derives every ratio from a reference model's peaks here);
- the host report's advice table (advice.py, through lookup_peak);
- the site's "can I use bf16?" page (pytorch_cuda/site/expected.py lists each entry with ``listed_as``);
- fault_coverage's page header (the model and architecture of the card it ran on).

docs/how-it-works.md ("A new GPU") shows an entry being added.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pytorch_cuda_contract.gpu import ComputeCapability, architecture

INTERCONNECTS: Final = ("nvlink", "pcie", "either")  # "either": the model is sold as SXM (NVLink) and PCIe


@dataclass(frozen=True)
class Peaks:
    """NVIDIA datasheet dense TFLOP/s (no sparsity: "with sparsity" figures halved) at boost clock.
    ``None``: no tensor-core path for the dtype."""

    fp32: float
    tf32: float | None
    fp16: float
    bf16: float | None


@dataclass(frozen=True)
class GpuModel:
    name: str  # the model (SKU) as NVIDIA writes it; measured_floors.py keys its floors by it
    match: tuple[str, ...]  # every needle is a whole word of the device name (upper case)
    capability: ComputeCapability
    interconnect: str  # one of INTERCONNECTS
    peaks: Peaks | None = None  # None: no datasheet number taken (no "% of datasheet" for it)
    listed_as: str | None = None  # its row on the site's "can I use bf16?" page; None: not a row of its own

    @property
    def architecture(self) -> str:
        return architecture(self.capability)


def _cc(text: str) -> ComputeCapability:
    major, minor = text.split(".")
    return ComputeCapability(int(major), int(minor))


def _m(name: str, match: str, cc: str, link: str, peaks: tuple[float, float | None, float, float | None] | None,
       *, listed: str | None = None) -> GpuModel:  # fmt: skip
    """One row: peaks as (fp32, tf32, fp16, bf16)."""
    return GpuModel(name, tuple(match.split()), _cc(cc), link, Peaks(*peaks) if peaks else None, listed)


# Order matters where one entry's words are a subset of another's: the first entry whose words all occur wins
# (the PCIe and NVL parts before the SXM part of the same name).  The site lists the ``listed_as`` rows in this order.
GPU_MODELS: Final[tuple[GpuModel, ...]] = (
    _m("V100S PCIe", "V100S", "7.0", "pcie", (16.4, None, 130.0, None)),
    _m("V100 PCIe", "V100 PCIE", "7.0", "pcie", (14.0, None, 112.0, None)),
    _m("V100 SXM2", "V100", "7.0", "nvlink", (15.7, None, 125.0, None), listed="V100"),
    _m("T4", "T4", "7.5", "pcie", (8.1, None, 65.0, None), listed="T4"),
    _m("RTX 2080 Ti", "2080 TI", "7.5", "pcie", None, listed="RTX 2080 Ti"),
    _m("A100", "A100", "8.0", "either", (19.5, 156.0, 312.0, 312.0), listed="A100"),
    _m("A30", "A30", "8.0", "pcie", None, listed="A30"),
    _m("A800", "A800", "8.0", "either", (19.5, 156.0, 312.0, 312.0)),
    _m("A10", "A10", "8.6", "pcie", (31.2, 62.5, 125.0, 125.0), listed="A10"),
    _m("A10G", "A10G", "8.6", "pcie", (31.2, 62.5, 125.0, 125.0), listed="A10G"),
    _m("A40", "A40", "8.6", "pcie", (37.4, 74.8, 149.7, 149.7), listed="A40"),
    _m("RTX 3090", "3090", "8.6", "pcie", None, listed="RTX 3090"),
    _m("L4", "L4", "8.9", "pcie", (30.3, 60.0, 121.0, 121.0), listed="L4"),
    _m("L40S", "L40S", "8.9", "pcie", (91.6, 183.0, 362.05, 362.05), listed="L40S"),
    _m("L40", "L40", "8.9", "pcie", (90.5, 90.5, 181.0, 181.0)),
    _m("RTX 4090", "4090", "8.9", "pcie", None, listed="RTX 4090"),
    _m("RTX 6000 Ada", "RTX 6000 ADA", "8.9", "pcie", (91.1, 182.1, 364.2, 364.2), listed="RTX 6000 Ada"),
    _m("H100 PCIe", "H100 PCIE", "9.0", "pcie", (51.0, 378.0, 756.0, 756.0)),
    _m("H100 NVL", "H100 NVL", "9.0", "nvlink", (60.0, 417.5, 835.5, 835.5)),
    _m("H100 SXM", "H100", "9.0", "nvlink", (67.0, 494.7, 989.4, 989.4), listed="H100"),
    _m("H800 PCIe", "H800 PCIE", "9.0", "pcie", (51.0, 378.0, 756.0, 756.0)),
    _m("H800 SXM", "H800", "9.0", "nvlink", (67.0, 494.7, 989.4, 989.4)),
    _m("H200 NVL", "H200 NVL", "9.0", "nvlink", (60.0, 417.5, 835.5, 835.5)),
    _m("H200 SXM", "H200", "9.0", "nvlink", (67.0, 494.7, 989.4, 989.4), listed="H200"),
    _m("GH200", "GH200", "9.0", "nvlink", (67.0, 494.7, 989.4, 989.4), listed="GH200"),
    _m("B200", "B200", "10.0", "nvlink", (75.0, 1125.0, 2250.0, 2250.0), listed="B200"),
    _m("RTX 5090", "5090", "12.0", "pcie", None, listed="RTX 5090"),
    _m(
        "RTX PRO 6000 Blackwell",
        "RTX PRO 6000",
        "12.0",
        "pcie",
        (126.0, 252.0, 504.0, 504.0),
        listed="RTX PRO 6000 Blackwell",
    ),
)


def device_words(device_name: str) -> list[str]:
    """The words of a device name as the table matches them: upper case, split at spaces, dashes and underscores."""
    return device_name.upper().replace("-", " ").replace("_", " ").split()


def find_model(device_name: str) -> GpuModel | None:
    """The first entry whose needles are all whole words of the name ("A10" is not "A100", "H200" not "GH200")."""
    words = device_words(device_name)
    return next((m for m in GPU_MODELS if all(needle in words for needle in m.match)), None)


def model_named(name: str) -> GpuModel:
    """The entry called ``name`` (KeyError for a name the table does not hold)."""
    for model in GPU_MODELS:
        if model.name == name:
            return model
    raise KeyError(name)
