"""Expected tensor-core speed-up over FP32 (non-tensor FMA), keyed by ARCHITECTURE (compute capability),
dense, from NVIDIA's architecture whitepapers and datasheets.  ``None``: no tensor-core path for the dtype.

The per-SKU datasheet peaks (peaks.py) only give "% of datasheet"; every gate that must hold on a GPU the
suite has never seen comes from here.  GeForce parts run FP16/BF16 with FP32 accumulation at half the rate
of the datacenter parts of the same architecture (RTX 4090: 165 / 82.6 = 2x; L40S: 362 / 91.6 = 4x) and
TF32 at the FP32 rate.  A GPU newer than the table gets the most conservative tensor-core ratios of any
generation (GeForce: 2x / 2x / 1x) and a note.  The suite fails a measured ratio below half the expected one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pytorch_cuda_contract.gpu import TENSOR_CORES_FROM

RATIO_DTYPES: Final = ("tf32", "fp16", "bf16")
GATE_FRACTION: Final = 0.5  # fail below half the expected ratio
RATIO_CEILING: Final = 2.5  # fail above 2.5x the expected ratio: fp32 itself is crippled (or the table is wrong)
FP32_PEAK_MARGIN: Final = 1.15  # fp32 "highest" may not exceed 1.15x the datasheet fp32 peak
SEVERAL_TIMES: Final = 4.0  # "TF32 is several times FP32": then fp32 must stay well below measured TF32


@dataclass(frozen=True)
class ExpectedRatios:
    family: str
    fp16: float | None
    bf16: float | None
    tf32: float | None
    conservative: bool = False  # not from a datasheet: the weakest tensor-core generation's ratios

    def ratio(self, dtype: str) -> float | None:
        value: float | None = getattr(self, dtype)
        return value

    def bound(self, dtype: str) -> float | None:
        expected = self.ratio(dtype)
        return None if expected is None else GATE_FRACTION * expected

    def ceiling(self, dtype: str) -> float | None:
        expected = self.ratio(dtype)
        return None if expected is None or self.conservative else RATIO_CEILING * expected


def _same(ratios: ExpectedRatios) -> tuple[ExpectedRatios, ExpectedRatios]:
    return ratios, ratios


# compute capability -> (datacenter / workstation / embedded, GeForce)
BY_CAPABILITY: Final[dict[tuple[int, int], tuple[ExpectedRatios, ExpectedRatios]]] = {
    (7, 0): _same(ExpectedRatios("Volta (V100 125/15.7)", 8.0, None, None)),
    (7, 2): _same(ExpectedRatios("Volta Xavier (embedded)", 8.0, None, None)),
    (7, 5): (
        ExpectedRatios("Turing (T4 65/8.1)", 8.0, None, None),
        ExpectedRatios("Turing GeForce (2080 Ti 53.8/13.4)", 4.0, None, None),
    ),
    (8, 0): _same(ExpectedRatios("Ampere GA100 (A100/A800 312/156/19.5)", 16.0, 16.0, 8.0)),
    (8, 6): (
        ExpectedRatios("Ampere GA10x (A10 125/62.5/31.2, A40 150/75/37.4)", 4.0, 4.0, 2.0),
        ExpectedRatios("Ampere GeForce (3090 71/35.6)", 2.0, 2.0, 1.0),
    ),
    (8, 7): _same(ExpectedRatios("Ampere Orin (embedded; GA10x ratios)", 4.0, 4.0, 2.0)),
    (8, 9): (
        ExpectedRatios("Ada (L40S 362/183/91.6, L4, RTX 6000 Ada 364/182/91.1)", 4.0, 4.0, 2.0),
        ExpectedRatios("Ada GeForce (4090 165/82.6)", 2.0, 2.0, 1.0),
    ),
    (9, 0): _same(ExpectedRatios("Hopper (H100/H200/H800/GH200 SXM 989/495/67)", 14.8, 14.8, 7.4)),
    (10, 0): _same(ExpectedRatios("Blackwell (B200 2250/1125/75)", 30.0, 30.0, 15.0)),
    (10, 1): _same(ExpectedRatios("Blackwell Thor (sm_101; no dense datasheet: GeForce ratios)", 2.0, 2.0, 1.0)),
    (10, 3): _same(ExpectedRatios("Blackwell Ultra (B300)", 30.0, 30.0, 15.0)),
    (11, 0): _same(ExpectedRatios("Blackwell Thor (sm_110; no dense datasheet: GeForce ratios)", 2.0, 2.0, 1.0)),
    (12, 0): (
        ExpectedRatios("Blackwell RTX PRO (6000: 504/252/126)", 4.0, 4.0, 2.0),
        ExpectedRatios("Blackwell GeForce (5090 209.5/104.8)", 2.0, 2.0, 1.0),
    ),
    (12, 1): _same(ExpectedRatios("Blackwell GB10 (DGX Spark; no dense datasheet: GeForce ratios)", 2.0, 2.0, 1.0)),
}
# Parts whose ratios differ from their architecture's flagship (matched as a whole word in the name).
BY_NAME: Final[dict[str, ExpectedRatios]] = {
    "H20": ExpectedRatios("Hopper H20 (148/74/44)", 3.4, 3.4, 1.7),
    "L40": ExpectedRatios("Ada L40 (181/90.5/90.5)", 2.0, 2.0, 1.0),
}
NEWEST: Final = max(BY_CAPABILITY)
NEWER_THAN_TABLE: Final = ExpectedRatios("newer than the suite's table", 2.0, 2.0, 1.0, conservative=True)
FIRST_TENSOR_CORES: Final = TENSOR_CORES_FROM


def is_geforce(device_name: str) -> bool:
    upper = device_name.upper()
    return "GEFORCE" in upper or "TITAN" in upper


def name_words(device_name: str) -> list[str]:
    return device_name.upper().replace("-", " ").replace("_", " ").split()


def expected_ratios(capability: tuple[int, int], device_name: str) -> ExpectedRatios | None:
    """What the architecture promises for this device; None before tensor cores (cc < 7.0)."""
    words = name_words(device_name)
    for token, ratios in BY_NAME.items():
        if token in words:
            return ratios
    pair = BY_CAPABILITY.get(capability)
    if pair is not None:
        return pair[1] if is_geforce(device_name) else pair[0]
    if capability > NEWEST:
        return NEWER_THAN_TABLE
    if capability < FIRST_TENSOR_CORES:
        return None
    # An unlisted minor revision of a known generation: the same major's weakest entry (conservative).
    same_major = [r for cc, pair in BY_CAPABILITY.items() if cc[0] == capability[0] for r in pair]
    weakest = min(same_major, key=lambda r: r.fp16 or 0.0, default=NEWER_THAN_TABLE)
    return ExpectedRatios(f"unlisted cc {capability[0]}.{capability[1]}, as {weakest.family}",
                          weakest.fp16, weakest.bf16, weakest.tf32, conservative=True)  # fmt: skip


def ratio_note(ratios: ExpectedRatios, capability: tuple[int, int], dtype: str) -> str:
    expected, bound = ratios.ratio(dtype), ratios.bound(dtype)
    text = f"{ratios.family}: expected {dtype}:fp32 about {expected}x, fail below {bound:g}x"
    if ratios.conservative:
        text += (
            f" (cc {capability[0]}.{capability[1]} is not in the suite's architecture table: conservative "
            "GeForce-level floors; add the architecture to conformance/support/expectations/ratios.py)"
        )
    return text


def fp32_upper_bound(
    datasheet_fp32: float | None, measured_tf32: float | None, ratios: ExpectedRatios | None
) -> tuple[float | None, str]:
    """The most fp32 "highest" may reach, and why: 1.15x the datasheet peak, and where TF32 is several
    times FP32, no more than the measured TF32 divided by half the expected TF32 ratio."""
    bounds: list[tuple[float, str]] = []
    if datasheet_fp32 is not None:
        bounds.append((FP32_PEAK_MARGIN * datasheet_fp32, f"{FP32_PEAK_MARGIN}x the {datasheet_fp32} datasheet peak"))
    expected_tf32 = ratios.tf32 if ratios is not None else None
    if measured_tf32 is not None and expected_tf32 is not None and expected_tf32 >= SEVERAL_TIMES:
        divisor = GATE_FRACTION * expected_tf32
        bounds.append((measured_tf32 / divisor, f"measured TF32 {measured_tf32:.1f} / {divisor:g}"))
    if not bounds:
        return None, "no datasheet peak and no TF32 reference"
    return min(bounds)
