"""Floors measured on the GPUs the project runs every night, tighter than the datasheet floors that must hold on
any host (bounds.py).  Keyed by the peak table's SKU (pytorch_cuda_contract.peaks.PeakSpec.gpu); a GPU outside
this table keeps the general floors.

Each floor sits below the lowest value of every untouched full-suite run committed for that SKU (evidence/fleet-runs,
evidence/fault-coverage/*/runs/untouched.json, evidence/gpu-sessions/h200-*) and above what a real fault gives on it
(evidence/decay-faults.md has the fault runs).  ``slack`` in docs/conformance-bounds.md is lowest untouched / floor.
Timed floors are not judged where the allocator is uncached (a legitimate setting: env_limits.timing_unreliable).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pytorch_cuda_contract.peaks import lookup_peak


@dataclass(frozen=True)
class MeasuredFloor:
    metric: str
    floor: float
    lowest_untouched: float  # the lowest value of the committed untouched runs of the SKU
    fault: str  # a real fault that crosses it, with what it gave


_HOPPER_SXM_FAULTS: Final = {  # measured on an H100 (docs/decay.md, evidence/decay-faults/h100)
    "conv.fp32.tflops": "TORCH_CUDNN_V8_API_DISABLED=1: 24.9; cuDNN off: 27.7",
    "conv.fp16.tflops": "TORCH_CUDNN_V8_API_DISABLED=1: 394; cuDNN off: 86",
    "conv.bf16.tflops": "TORCH_CUDNN_V8_API_DISABLED=1: 86; CUDA_LAUNCH_BLOCKING=1: 496; cuDNN off: 84",
    "amp.speedup.fp16": "CUDA_LAUNCH_BLOCKING=1: 4.63",
    "amp.speedup.bf16": "CUDA_LAUNCH_BLOCKING=1: 4.22",
    "sdpa.fp16.tflops": "the fused attention kernels off: 13-16",
    "sdpa.bf16.tflops": "the fused attention kernels off: 13-16",
}


def _floors(rows: dict[str, tuple[float, float]]) -> dict[str, MeasuredFloor]:
    return {
        metric: MeasuredFloor(metric, floor, low, _HOPPER_SXM_FAULTS[metric]) for metric, (floor, low) in rows.items()
    }


# metric: (floor, lowest untouched value committed)
MEASURED_FLOORS: Final[dict[str, dict[str, MeasuredFloor]]] = {
    "H100 SXM": _floors(
        {
            "conv.fp32.tflops": (34.0, 39.2),
            "conv.fp16.tflops": (520.0, 614.0),
            "conv.bf16.tflops": (540.0, 657.0),
            "amp.speedup.fp16": (5.0, 5.97),
            "amp.speedup.bf16": (5.2, 6.24),
            "sdpa.fp16.tflops": (220.0, 303.0),
            "sdpa.bf16.tflops": (220.0, 305.0),
        },
    ),
    "H200 SXM": _floors(
        {
            "conv.fp32.tflops": (34.0, 42.7),
            "conv.fp16.tflops": (500.0, 594.0),
            "conv.bf16.tflops": (480.0, 567.0),
            "amp.speedup.fp16": (5.3, 6.46),
            "amp.speedup.bf16": (5.6, 6.81),
            "sdpa.fp16.tflops": (220.0, 310.0),
            "sdpa.bf16.tflops": (220.0, 313.0),
        },
    ),
}


def tighter(lower: float | None, why: str, device_name: str, metric: str) -> tuple[float | None, str]:
    """The higher of a general floor and the SKU's measured floor, and the reason shown with it."""
    spec = lookup_peak(device_name)
    measured = None if spec is None else MEASURED_FLOORS.get(spec.gpu, {}).get(metric)
    if spec is None or measured is None or (lower is not None and lower >= measured.floor):
        return lower, why
    return measured.floor, (
        f"measured floor {measured.floor:g} for {spec.gpu} (lowest untouched run {measured.lowest_untouched:g}; "
        f"crossed by {measured.fault}); {why}"
    )


def floor_rows() -> list[tuple[str, str, str, str]]:
    """docs/conformance-bounds.md's rows: each measured floor, the lowest untouched run, its slack and its fault."""
    return [
        (f"`{f.metric}` on {sku}", f"lowest untouched {f.lowest_untouched:g}",
         f"≥ {f.floor:g} (slack {f.lowest_untouched / f.floor:.2f}×)", f.fault)
        for sku, floors in MEASURED_FLOORS.items() for f in floors.values()
    ]  # fmt: skip
