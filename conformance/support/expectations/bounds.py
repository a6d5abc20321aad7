"""Bounds that a plausible fault crosses, for every gated number the suite records (pure, unit-tested).

Each bound sits next to the H200 value it was set from (torch 2.11 + CUDA 13.0; the H200 run kept in
evidence/gpu-sessions/h200-2026-12-04/conformance-results.json measures the same within a few %) and the fault that
crosses it.  docs/conformance-bounds.md lists them all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from conformance.support.expectations.ratios import FP32_PEAK_MARGIN, expected_ratios, fp32_upper_bound
from pytorch_cuda_contract.peaks import lookup_peak

# Throughput floors as a fraction of the datasheet dense peak.  Measured on an
# H200 (torch 2.11 + CUDA 13.0, median of 10 after 3 warm-ups): fp16 8192^3
# 745 TFLOP/s = 75%, bf16 8192^3 775 = 78%, tf32 8192^3 402 = 81%, fp32 4096^3
# 50.3 = 75%.  Floors are loose on purpose: PCIe and power-capped parts run
# below the boost-clock datasheet numbers.
THROUGHPUT_FLOOR: Final[dict[str, float]] = {"fp16": 0.60, "bf16": 0.60, "tf32": 0.50, "fp32": 0.50}
# Throughput above the datasheet peak is a broken measurement (timing without a sync, a kernel that skips
# work), not a fast GPU.
DATASHEET_CEILING: Final = FP32_PEAK_MARGIN
# AMP step speed-up vs the fp32 step (4-layer transformer, AdamW).  H200: fp16 6.38x, bf16 6.86x, with the
# fp16:fp32 GEMM ratio 14.4x of the same run (0.44 of it).  Autocast that does not reach the tensor cores
# gives about 1x: below AMP_SHARE_OF_GEMM x the GEMM ratio fails.  A step faster than the GEMMs allow
# (above AMP_CEILING_OF_GEMM x the ratio) means the fp32 reference step was slowed (or AMP skipped work).
AMP_SHARE_OF_GEMM: Final = 0.2
AMP_CEILING_OF_GEMM: Final = 1.5
AMP_MINIMUM: Final = 1.0  # without a GEMM ratio: AMP must at least be faster than fp32 on tensor cores
# Under the caching allocator off (PYTORCH_NO_CUDA_MEMORY_CACHING=1, a legitimate debugging setting) every allocation
# is a cudaMalloc and every free a device-wide cudaFree: the measured per-GPU floors and the share-of-GEMM AMP floor
# do not hold (H100, issue 52: AMP 2.47x, conv 22.8 / 301 / 354 TFLOP/s), so the checks judge these general bounds
# instead of none. AMP: must still beat fp32 (autocast a no-op gives 0.99x). SDPA: a share of the datasheet peak
# that the math backend (H100: 12.4 TFLOP/s, 1.3% of 989) stays under; not yet measured under the setting on a GPU.
UNCACHED_AMP_MINIMUM: Final = AMP_MINIMUM
UNCACHED_SDPA_FLOOR_OF_PEAK: Final = 0.05
# Peak memory saved by AMP vs fp32: 31.46 % (fp16 and bf16) in every committed run of both cards (H100, H200; torch
# 2.9.1 and 2.11; untouched, every control and every timing fault): peak memory is the allocator's bookkeeping, not a
# timing, so it does not drift.  Autocast not applied saves 0.02 %.  The old floor of 15 % let a saving halved
# (15.7 %) pass; this one sits 1.26x under the measured value and 1.6x over a halved one.
AMP_MEMORY_FLOOR_PCT: Final = 25.0
AMP_MEMORY_CEILING_PCT: Final = 100.0  # saving all of fp32's peak: the half-precision step allocated nothing
# NCCL all-reduce bus bandwidth (256 MiB, 2+ GPUs), floored by how NVML says the GPUs are linked.  NVLink 4
# (H100/H200) gives about 300-480 GB/s (2x H100: ~330), PCIe Gen3 x16 P2P about 10 GB/s, NCCL forced onto TCP
# sockets (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1) a few GB/s; without NVML the floor is the sockets' speed.
BUSBW_FLOOR_GBPS: Final = {"nvlink": 100.0, "pcie": 5.0, "unknown": 2.0}
# Above any link's speed (NVLink 5: 1.8 TB/s per GPU, both directions): a timing without work (an all_reduce
# that returns at once), not a fast interconnect.
BUSBW_CEILING_GBPS: Final = 2000.0


@dataclass(frozen=True)
class Gate:
    """``lower <= value <= upper`` (either side may be None: not gated on that side)."""

    lower: float | None
    upper: float | None
    why: str

    def violation(self, value: float) -> str | None:
        """None when the value is inside; otherwise which side it crossed, with the reason."""
        if math.isnan(value):  # NaN is never inside
            return f"{value} is not a number ({self.why})"
        if self.lower is not None and value < self.lower:
            return f"{value:.4g} is below {self.lower:.4g} ({self.why})"
        if self.upper is not None and value > self.upper:
            return f"{value:.4g} is above {self.upper:.4g} ({self.why})"
        return None

    def metric_fields(self) -> dict[str, object]:
        """The JSON fields: ``bound``/``bound_kind`` for the lower side (else the upper), ``ceiling`` for both."""
        if self.lower is not None:
            return {"bound": self.lower, "bound_kind": "min", "ceiling": self.upper}
        if self.upper is not None:
            return {"bound": self.upper, "bound_kind": "max"}
        return {"informational": True}


def throughput_gate(peak: float | None, floor_fraction: float) -> Gate:
    """A GEMM/conv throughput against its datasheet peak: a floor and a ceiling."""
    if peak is None:
        return Gate(None, None, "no datasheet peak for this GPU: the architecture ratios gate it")
    return Gate(
        floor_fraction * peak,
        DATASHEET_CEILING * peak,
        f"{100 * floor_fraction:.0f}%..{100 * DATASHEET_CEILING:.0f}% of the {peak} TFLOP/s datasheet peak",
    )


def amp_speedup_gate(gemm_ratio: float | None, tensor_cores: bool) -> Gate:
    """What the same run's GEMM ratio lets AMP give: at least a share of it, at most a bit more than it."""
    if not tensor_cores:
        return Gate(None, None, "no tensor cores for this dtype: recorded, not gated")
    if gemm_ratio is None or not math.isfinite(gemm_ratio):
        return Gate(AMP_MINIMUM, None, "no GEMM ratio measured in this run: AMP must beat fp32")
    lower = max(AMP_MINIMUM, AMP_SHARE_OF_GEMM * gemm_ratio)
    return Gate(
        lower,
        AMP_CEILING_OF_GEMM * gemm_ratio,
        f"{AMP_SHARE_OF_GEMM}x..{AMP_CEILING_OF_GEMM}x the {gemm_ratio:.2f}x GEMM ratio of the same run",
    )


def amp_speedup_gate_uncached(gemm_ratio: float | None, tensor_cores: bool, reason: str) -> Gate:
    """The AMP speed-up's bound when allocations are uncached (``reason``): it must still beat fp32, and the
    ceiling of the same run's GEMM ratio still holds (slow allocations never make fp32 look faster)."""
    if not tensor_cores:
        return Gate(None, None, "no tensor cores for this dtype: recorded, not gated")
    full = amp_speedup_gate(gemm_ratio, tensor_cores)
    return Gate(
        UNCACHED_AMP_MINIMUM,
        full.upper,
        f"AMP must beat fp32 ({UNCACHED_AMP_MINIMUM:g}x; the share-of-GEMM floor is not judged: {reason})",
    )


def uncached_sdpa_gate(peak_tflops: float | None, reason: str) -> Gate:
    """SDPA's floor when allocations are uncached: a share of the datasheet peak the math backend stays under."""
    if peak_tflops is None:
        return Gate(None, None, f"SDPA throughput: no datasheet peak for this GPU; measured floors off ({reason})")
    floor = UNCACHED_SDPA_FLOOR_OF_PEAK * peak_tflops
    return Gate(floor, None, f"at least {UNCACHED_SDPA_FLOOR_OF_PEAK:g} x the datasheet peak (the measured floor "
                f"is not judged: {reason})")  # fmt: skip


def amp_memory_gate(tensor_cores: bool) -> Gate:
    if not tensor_cores:
        return Gate(None, None, "no tensor cores for this dtype: recorded, not gated")
    return Gate(AMP_MEMORY_FLOOR_PCT, AMP_MEMORY_CEILING_PCT,
                f"AMP must save at least {AMP_MEMORY_FLOOR_PCT:g}% of fp32's peak memory (31.46% measured; halved "
                "crosses it)")  # fmt: skip


def busbw_gate(interconnect: str = "unknown", how: str = "no topology read") -> Gate:
    """The all-reduce bus bandwidth floor for the GPUs' link (nvml.interconnect: nvlink, pcie or unknown, and how
    that was read), and a ceiling no link reaches."""
    floor = BUSBW_FLOOR_GBPS.get(interconnect, BUSBW_FLOOR_GBPS["unknown"])
    if interconnect == "nvlink":
        why = f"NVLink: at least {floor:g} GB/s, NVLink 4 gives 300-480; {how}"
    elif interconnect == "pcie":
        why = f"PCIe: at least {floor:g} GB/s, PCIe Gen3 x16 P2P gives about 10; {how}"
    else:
        why = f"topology unknown ({how}): only the old {floor:g} GB/s TCP-socket floor, NVLink is not verified"
    return Gate(floor, BUSBW_CEILING_GBPS, why)


def fp32_kernel_gate(
    device_name: str,
    capability: tuple[int, int],
    measured_tf32: float | None,
    floor_fraction: float | None = None,
    allowance: float = 1.0,
) -> Gate:
    """An IEEE fp32 kernel (conv, attention): at least ``floor_fraction`` of the fp32 datasheet peak, and no
    faster than ``allowance`` x what fp32 can do (the datasheet peak, or the measured TF32 GEMM / half the
    architecture's TF32 ratio on a GPU outside the peak table)."""
    spec = lookup_peak(device_name)
    datasheet = spec.fp32 if spec is not None else None
    upper, why = fp32_upper_bound(datasheet, measured_tf32, expected_ratios(capability, device_name))
    lower = floor_fraction * datasheet if floor_fraction is not None and datasheet is not None else None
    if upper is None:
        return Gate(lower, None, why)
    shown = why if allowance == 1.0 else f"{allowance}x ({why})"
    return Gate(lower, allowance * upper, f"fp32 kernel at most {shown}")


# An fp32 kernel's normalized error against float64, on IEEE fp32 vs on TF32 (10-bit mantissa inputs).  H100,
# torch 2.11: attention 2x4x256x64 by the default dispatch (efficient) 5.7e-7, the math backend 4.0e-7, the math
# backend with TF32 in its matmuls 4.2e-4; conv 3x3 (8,64,32,32)->64 channels IEEE 4.2e-7, TF32 2.9e-4.  The GEMM's
# band (test_precision.py): IEEE 1.15e-6, TF32 2.9e-4.  The bound sits 17x above IEEE and 29x below TF32.
FP32_IEEE_ERROR_BOUND: Final = 1e-5
TF32_ERROR_RANGE: Final = (1e-4, 1e-3)


def tf32_error_gate(kernel: str) -> Gate:
    """An fp32 kernel that runs in TF32 by the policy in effect (cuDNN's conv by PyTorch's default): its error
    against float64 lies in TF32_ERROR_RANGE. Below it, TF32 was allowed and not used (a conv outside cuDNN: torch's
    native kernels with cuDNN off give IEEE 4.2e-7); above it, worse than TF32 (inputs rounded to bf16)."""
    low, high = TF32_ERROR_RANGE
    return Gate(low, high, f"TF32 {kernel} (10-bit mantissa inputs) has an error of {low:.0e}..{high:.0e} against "
                "float64; IEEE fp32 gives about 4e-7")  # fmt: skip


def fp32_ieee_error_gate(kernel: str) -> Gate:
    """An fp32 kernel that must compute in IEEE fp32: its error against float64 stays below FP32_IEEE_ERROR_BOUND;
    TF32 (1e-4..1e-3) crosses it."""
    low, high = TF32_ERROR_RANGE
    return Gate(
        None,
        FP32_IEEE_ERROR_BOUND,
        f"IEEE fp32 {kernel} has an error below {FP32_IEEE_ERROR_BOUND:.0e} against float64; "
        f"TF32 gives {low:.0e}..{high:.0e}",
    )


# The fp16 loss-scaling check's gradient, after unscaling, against its exact value: the upstream gradient and the
# weight gradient are each rounded to fp16 once (2 x 2^-11 = 9.8e-4 at worst); measured 2.8e-4 on the H100 and the
# H200 alike. A gradient path in bf16 (2^-8 = 3.9e-3 a rounding) gives 1.2e-3 here; the old bound (5 %) had 176x
# slack.
SCALED_GRADIENT_TOLERANCE: Final = 1e-3


def scaled_gradient_gate(expected: float) -> Gate:
    """The unscaled weight gradient of the fp16 loss-scaling check: within two fp16 roundings of ``expected``."""
    margin = SCALED_GRADIENT_TOLERANCE * expected
    return Gate(
        expected - margin,
        expected + margin,
        f"within {SCALED_GRADIENT_TOLERANCE:.0e} of {expected:.3e}: two fp16 roundings; a bf16 gradient path or a "
        "lossy loss scale crosses it",
    )
