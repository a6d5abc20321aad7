"""Expected tensor-core speed-up over FP32 (non-tensor FMA) per architecture, dense, from NVIDIA's
architecture whitepapers and datasheets.  ``None``: no tensor-core path for the dtype.

GeForce parts run FP16/BF16 with FP32 accumulation at half the rate of the datacenter parts of
the same architecture (RTX 4090: 165 / 82.6 = 2x; L40S: 362 / 91.6 = 4x) and TF32 at the FP32
rate.  The suite fails a measured ratio below half the expected one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

RATIO_DTYPES: Final = ("tf32", "fp16", "bf16")
GATE_FRACTION: Final = 0.5  # fail below half the expected ratio
FP32_PEAK_MARGIN: Final = 1.15  # fp32 "highest" may not exceed 1.15x the datasheet fp32 peak
SEVERAL_TIMES: Final = 4.0  # "TF32 is several times FP32": then fp32 must stay well below measured TF32


@dataclass(frozen=True)
class ExpectedRatios:
    family: str
    fp16: float | None
    bf16: float | None
    tf32: float | None

    def ratio(self, dtype: str) -> float | None:
        value: float | None = getattr(self, dtype)
        return value

    def bound(self, dtype: str) -> float | None:
        expected = self.ratio(dtype)
        return None if expected is None else GATE_FRACTION * expected


# compute capability -> (datacenter / workstation, GeForce)
BY_CAPABILITY: Final[dict[tuple[int, int], tuple[ExpectedRatios, ExpectedRatios]]] = {
    (7, 0): (ExpectedRatios("Volta (V100 125/15.7)", 8.0, None, None),) * 2,
    (7, 5): (
        ExpectedRatios("Turing (T4 65/8.1)", 8.0, None, None),
        ExpectedRatios("Turing GeForce (2080 Ti 53.8/13.4)", 4.0, None, None),
    ),
    (8, 0): (ExpectedRatios("Ampere GA100 (A100 312/156/19.5)", 16.0, 16.0, 8.0),) * 2,
    (8, 6): (
        ExpectedRatios("Ampere GA10x (A10 125/62.5/31.2, A40)", 4.0, 4.0, 2.0),
        ExpectedRatios("Ampere GeForce (3090 71/35.6)", 2.0, 2.0, 1.0),
    ),
    (8, 9): (
        ExpectedRatios("Ada (L40S 362/183/91.6, L4)", 4.0, 4.0, 2.0),
        ExpectedRatios("Ada GeForce (4090 165/82.6)", 2.0, 2.0, 1.0),
    ),
    (9, 0): (ExpectedRatios("Hopper (H100/H200 SXM 989/495/67)", 14.8, 14.8, 7.4),) * 2,
    (10, 0): (ExpectedRatios("Blackwell (B200 2250/1125/75)", 30.0, 30.0, 15.0),) * 2,
    (10, 3): (ExpectedRatios("Blackwell Ultra (B300)", 30.0, 30.0, 15.0),) * 2,
    (12, 0): (
        ExpectedRatios("Blackwell RTX PRO (6000: 504/252/126)", 4.0, 4.0, 2.0),
        ExpectedRatios("Blackwell GeForce (5090 209.5/104.8)", 2.0, 2.0, 1.0),
    ),
}
# Cut-down parts whose ratios differ from their architecture's flagship (matched as a word in the name).
BY_NAME: Final[dict[str, ExpectedRatios]] = {
    "H20": ExpectedRatios("Hopper H20 (148/74/44)", 3.4, 3.4, 1.7),
}


def is_geforce(device_name: str) -> bool:
    upper = device_name.upper()
    return "GEFORCE" in upper or "TITAN" in upper


def expected_ratios(capability: tuple[int, int], device_name: str) -> ExpectedRatios | None:
    """What the architecture promises for this device, or None when the suite does not know it."""
    words = device_name.upper().replace("-", " ").split()
    for token, ratios in BY_NAME.items():
        if token in words:
            return ratios
    pair = BY_CAPABILITY.get(capability)
    if pair is None:
        return None
    return pair[1] if is_geforce(device_name) else pair[0]


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
