"""Floors measured on the GPUs the project runs every night, tighter than the datasheet floors that must hold on
any host (bounds.py).  Keyed by the peak table's SKU (pytorch_cuda_contract.peaks.PeakSpec.gpu); a GPU outside
this table keeps the general floors.

Each floor is measured on a stack: torch's release line, since the kernels a torch build ships are what moves the
numbers (torch 2.9.1's flash attention runs about 25% under torch 2.11's on an H100).  ``MEASURED_FLOORS`` holds a
SKU's floors for every stack, learned on the bare hosts' torch 2.11 and held against the shipped stack's runs too;
``STACK_FLOORS`` gives a stack its own floor for a metric where the stacks differ, with the reason.  No floor is
widened for all stacks.

Each floor sits at least 10% below the lowest value of every untouched full-suite run committed for that SKU
(evidence/fleet-runs, evidence/fault-coverage/*/runs/untouched.json, evidence/gpu-sessions/h200-*; the first run of
a fresh lease can be the slowest) and above what each real fault it names gives on it (evidence/decay-faults.md has
the fault runs); tests/repo/test_measured_floors.py holds these claims to the committed runs.  ``slack`` in
docs/conformance-bounds.md is lowest untouched / floor.
Timed floors are not judged where the allocator is uncached (a legitimate setting: env_limits.timing_unreliable).
A floor keyed METRIC.deterministic holds under torch.use_deterministic_algorithms(True) instead (its "untouched"
runs are the deterministic-algorithms control's, evidence/fault-coverage/*/runs/deterministic-algorithms*.json).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pytorch_cuda_contract.peaks import lookup_peak


@dataclass(frozen=True)
class MeasuredFloor:
    metric: str
    floor: float
    # the lowest value of the committed runs it is measured on: the SKU's untouched runs, or for a
    # METRIC.deterministic floor the deterministic-algorithms control's
    lowest_run: float
    fault: str  # a real fault that crosses it, with what it gave


_H100_FAULTS: Final = {  # measured on an H100 (docs/decay.md, evidence/decay-faults/h100)
    "conv.fp32.tflops": "TORCH_CUDNN_V8_API_DISABLED=1: 24.9-26.0; cuDNN off: 27.7",
    "conv.fp16.tflops": "TORCH_CUDNN_V8_API_DISABLED=1: 394-515; cuDNN off: 86",
    "conv.bf16.tflops": "TORCH_CUDNN_V8_API_DISABLED=1: 86; cuDNN off: 84",
    "amp.speedup.fp16": "CUDA_LAUNCH_BLOCKING=1: 3.89-4.73",
    "amp.speedup.bf16": "CUDA_LAUNCH_BLOCKING=1: 4.05-4.82",
    "sdpa.fp16.tflops": "the fused attention kernels off: 13-16",
    "sdpa.bf16.tflops": "the fused attention kernels off: 13-16",
    "amp.speedup.fp16.deterministic": "CUDA_LAUNCH_BLOCKING=1: 3.89; autocast off: 0.99",
    "amp.speedup.bf16.deterministic": "CUDA_LAUNCH_BLOCKING=1: 4.05; autocast off: 1.00",
    "sdpa.fp16.tflops.deterministic": "the fused attention kernels off: 13-16",
    "sdpa.bf16.tflops.deterministic": "the fused attention kernels off: 13-16",
}


_H200_FAULTS: Final = {  # measured on an H200 (docs/decay.md, evidence/fault-coverage/h200/runs)
    "conv.fp32.tflops": "TORCH_CUDNN_V8_API_DISABLED=1: 25.8; cuDNN off: 28.2",
    "conv.fp16.tflops": "TORCH_CUDNN_V8_API_DISABLED=1: 417; cuDNN off: 91.7",
    "conv.bf16.tflops": "TORCH_CUDNN_V8_API_DISABLED=1: 90.2",
    "amp.speedup.fp16": "CUDA_LAUNCH_BLOCKING=1: 3.80",
    "amp.speedup.bf16": "CUDA_LAUNCH_BLOCKING=1: 3.96",
    "sdpa.fp16.tflops": "the fused attention kernels off: 15.5",
    "sdpa.bf16.tflops": "the fused attention kernels off: 15.6",
}


def _floors(rows: dict[str, tuple[float, float]], faults: dict[str, str]) -> dict[str, MeasuredFloor]:
    return {metric: MeasuredFloor(metric, floor, low, faults[metric]) for metric, (floor, low) in rows.items()}


# metric: (floor, lowest untouched value committed)
MEASURED_FLOORS: Final[dict[str, dict[str, MeasuredFloor]]] = {
    "H100 SXM": _floors(
        {
            # conv fp32 and bf16 were 34 and 540 until the first runs of two fresh leases gave 35.1 and 556
            "conv.fp32.tflops": (31.0, 35.1),
            "conv.fp16.tflops": (520.0, 602.0),
            "conv.bf16.tflops": (480.0, 556.0),
            "amp.speedup.fp16": (5.0, 5.9),
            "amp.speedup.bf16": (5.2, 6.19),
            "sdpa.fp16.tflops": (220.0, 295.0),
            "sdpa.bf16.tflops": (220.0, 288.0),
            # under torch.use_deterministic_algorithms(True) (the deterministic-algorithms control's runs): attention
            # by flash, not cuDNN; the AMP step's kernels slower
            "amp.speedup.fp16.deterministic": (4.3, 5.24),
            "amp.speedup.bf16.deterministic": (4.7, 5.46),
            "sdpa.fp16.tflops.deterministic": (130.0, 210.0),
            "sdpa.bf16.tflops.deterministic": (130.0, 201.0),
        },
        _H100_FAULTS,
    ),
    "H200 SXM": _floors(
        {
            "conv.fp32.tflops": (34.0, 42.4),
            "conv.fp16.tflops": (500.0, 587.0),
            "conv.bf16.tflops": (480.0, 567.0),
            "amp.speedup.fp16": (5.3, 6.38),
            "amp.speedup.bf16": (5.6, 6.8),
            "sdpa.fp16.tflops": (220.0, 292.0),
            "sdpa.bf16.tflops": (220.0, 308.0),
        },
        _H200_FAULTS,
    ),
}


@dataclass(frozen=True)
class StackFloors:
    """A stack's own floors on one SKU, for the metrics where it differs from the shared ones."""

    reason: str
    runs: str  # where its untouched runs are committed (a glob under evidence/)
    floors: dict[str, MeasuredFloor]


_SHIPPED_H100_FAULTS: Final = {  # measured on the shipped stack on an H100 (evidence/shipped-stack)
    "sdpa.fp16.tflops": "the fused attention kernels off: 13.3; CUDA_LAUNCH_BLOCKING=1: 188.5",
    "sdpa.bf16.tflops": "the fused attention kernels off: 13.3; CUDA_LAUNCH_BLOCKING=1: 187.9",
}

# (torch release line, SKU) -> that stack's own floors; metric: (floor, lowest untouched value committed)
STACK_FLOORS: Final[dict[tuple[str, str], StackFloors]] = {
    ("2.9", "H100 SXM"): StackFloors(
        "torch 2.9.1+cu128's attention (the image's stack) runs about 25% under torch 2.11's on an H100",
        "evidence/*/h100-*/**/untouched*.json",  # evidence/shipped-stack/ and fault-coverage/h100-shipped/
        _floors({"sdpa.fp16.tflops": (190.0, 211.4), "sdpa.bf16.tflops": (190.0, 213.2)}, _SHIPPED_H100_FAULTS),
    ),
}


# The metrics a stack is known to move (its own kernels): for them another stack's floors never apply; a SKU with no
# floor of that stack's own keeps the general floor, and the reason says so.
STACK_BOUND_METRICS: Final[dict[str, frozenset[str]]] = {
    "2.9": frozenset({"sdpa.fp16.tflops", "sdpa.bf16.tflops"}),
}


def torch_line(version: str) -> str:
    """'2.9.1+cu128' -> '2.9': the release line a stack's floors are keyed by."""
    return ".".join(version.split("+", maxsplit=1)[0].split(".")[:2])


def measured_floor(sku: str, key: str, torch_version: str) -> tuple[MeasuredFloor | None, str]:
    """The floor of KEY on SKU for the running torch, and where it comes from ("" for the shared floors)."""
    line = torch_line(torch_version)
    own = STACK_FLOORS.get((line, sku))
    if own is not None and key in own.floors:
        return own.floors[key], f", torch {line}'s own: {own.reason}"
    if key in STACK_BOUND_METRICS.get(line, frozenset()):
        return None, f"; no floor measured for torch {line} on {sku}, whose kernels move it"
    return MEASURED_FLOORS.get(sku, {}).get(key), ""


DETERMINISTIC: Final = ".deterministic"  # the key suffix of a floor measured under deterministic algorithms


def tighter(
    lower: float | None,
    why: str,
    device_name: str,
    metric: str,
    *,
    deterministic: bool = False,
    torch_version: str | None = None,
) -> tuple[float | None, str]:
    """The higher of a general floor and the SKU's measured floor, and the reason shown with it.

    Under torch.use_deterministic_algorithms(True) (``deterministic``), a legitimate reproducibility setting that
    picks slower kernels, only a floor measured under it applies (METRIC.deterministic); without one the general
    floor holds and the reason says so.  ``torch_version`` (the running torch's, by default) picks a stack's own
    floor where it has one (STACK_FLOORS)."""
    spec = lookup_peak(device_name)
    key = metric + DETERMINISTIC if deterministic else metric
    version = torch_version if torch_version is not None else _running_torch()
    measured, source = (None, "") if spec is None else measured_floor(spec.gpu, key, version)
    if measured is None and source:
        return lower, why + source
    if spec is not None and measured is None and deterministic:
        return lower, f"{why}; no floor measured on {spec.gpu} under torch.use_deterministic_algorithms(True)"
    if spec is None or measured is None or (lower is not None and lower >= measured.floor):
        return lower, why
    return measured.floor, (
        f"measured floor {measured.floor:g} for {spec.gpu}{_setting(key)}{source} (lowest {_runs(key)} "
        f"{measured.lowest_run:g}; crossed by {measured.fault}); {why}"
    )


def _running_torch() -> str:
    import torch  # the suite's checks run with torch; the floor tables themselves do not need it

    return str(torch.__version__)


def _setting(key: str) -> str:
    return " under torch.use_deterministic_algorithms(True)" if key.endswith(DETERMINISTIC) else ""


def _runs(key: str) -> str:
    return "run under it" if key.endswith(DETERMINISTIC) else "untouched run"


def floor_rows() -> list[tuple[str, str, str, str]]:
    """docs/conformance-bounds.md's rows: each measured floor, the lowest untouched run, its slack and its fault."""
    return [
        (f"`{f.metric.removesuffix(DETERMINISTIC)}` on {sku}" + _setting(f.metric),
         f"lowest {_runs(f.metric)} {f.lowest_run:g}",
         f"≥ {f.floor:g} (slack {f.lowest_run / f.floor:.2f}×)", f.fault)
        for sku, floors in MEASURED_FLOORS.items() for f in floors.values()
    ] + [
        (f"`{f.metric}` on {sku}, torch {line}'s own", f"lowest {_runs(f.metric)} {f.lowest_run:g}",
         f"≥ {f.floor:g} (slack {f.lowest_run / f.floor:.2f}×)", f.fault)
        for (line, sku), own in STACK_FLOORS.items() for f in own.floors.values()
    ]  # fmt: skip
