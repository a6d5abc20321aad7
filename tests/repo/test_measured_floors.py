"""Each measured floor of the suite holds what it claims against the committed GPU runs: it sits at least 10% under
the lowest legitimate run of its SKU, and the lowest run it names is that run (tests/support/floor_evidence.py)."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.support.expectations.measured_floors import (
    MEASURED_FLOORS,
    STACK_FLOORS,
    MeasuredFloor,
    StackFloors,
)
from pytorch_cuda_contract.results_format import SUITE
from tests.support.floor_evidence import (
    NIGHTLY,
    Lowest,
    committed_lowest,
    fault_values,
    floor_problems,
    lowest_values,
    stack_floor_problems,
)

ROOT = Path(__file__).resolve().parents[2]


def test_every_measured_floor_holds_against_the_committed_runs() -> None:
    assert floor_problems(MEASURED_FLOORS, committed_lowest(ROOT)) == []


def test_every_stack_floor_holds_against_that_stacks_committed_runs() -> None:
    assert STACK_FLOORS
    assert stack_floor_problems(STACK_FLOORS, ROOT) == []


def _shipped(root: Path, name: str, torch: str, sdpa: float, conv: float) -> None:
    path = root / "evidence/shipped-stack/h100-x" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"schema": 2, "suite": SUITE,
                "environment": {"torch": torch, "gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3"}]},
                "measurements": {"sdpa.fp16.tflops": {"value": sdpa}, "conv.fp32.tflops": {"value": conv}}}  # fmt: skip
    path.write_text(json.dumps(document), encoding="utf-8")


def test_a_stack_floor_is_judged_on_that_stacks_runs_only(tmp_path: Path) -> None:
    own = StackFloors(
        "why", "evidence/shipped-stack/h100-*/untouched*.json",
        {"sdpa.fp16.tflops": MeasuredFloor("sdpa.fp16.tflops", 190.0, 211.4, "CUDA_LAUNCH_BLOCKING=1: 188.5")},
    )  # fmt: skip
    floors = {("2.9", "H100 SXM"): own}
    _shipped(tmp_path, "untouched", "2.9.1+cu128", 211.4, 39.5)
    _shipped(tmp_path, "untouched-2", "2.11.0+cu130", 150.0, 39.5)  # another stack's run: not this floor's evidence
    assert stack_floor_problems(floors, tmp_path) == []
    _shipped(tmp_path, "untouched-3", "2.9.1+cu128", 205.0, 33.0)
    assert stack_floor_problems(floors, tmp_path) == [
        "torch 2.9: sdpa.fp16.tflops on H100 SXM: the floor 190 is within 1.1x of the lowest legitimate run 205 "
        "(evidence/shipped-stack/h100-x/untouched-3.json); lower it to at most 186.4",
        "torch 2.9: conv.fp32.tflops on H100 SXM: the shared floor 31 is within 1.1x of this stack's run 33 "
        "(evidence/shipped-stack/h100-x/untouched-3.json); give the stack its own floor in STACK_FLOORS",
    ]


def test_the_lowest_values_come_from_every_nightly_run_of_the_sku() -> None:
    lowest = lowest_values(ROOT, NIGHTLY)
    assert lowest[("H100 SXM", "conv.fp32.tflops")].run.startswith("evidence/fleet-runs/h100/")
    assert ("H200 SXM", "conv.fp32.tflops") in lowest
    assert not any(metric.endswith(".deterministic") for _, metric in lowest)


def _run(root: Path, name: str, gpu: str, measurements: dict[str, object]) -> None:
    path = root / "evidence/fleet-runs/x" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"schema": 2, "suite": SUITE, "environment": {"gpus": [{"index": 0, "name": gpu}]},
                "measurements": measurements}  # fmt: skip
    path.write_text(json.dumps(document), encoding="utf-8")


def test_a_run_near_the_floor_or_a_stale_lowest_is_a_problem(tmp_path: Path) -> None:
    floors = {"H100 SXM": {"conv.fp32.tflops": MeasuredFloor("conv.fp32.tflops", 34.0, 38.6, "a fault: 24.9")}}
    _run(tmp_path, "a", "NVIDIA H100 80GB HBM3", {"conv.fp32.tflops": {"value": 38.6, "unit": "TFLOP/s"}})
    assert floor_problems(floors, lowest_values(tmp_path, NIGHTLY)) == []
    _run(tmp_path, "b", "NVIDIA H100 80GB HBM3", {"conv.fp32.tflops": {"value": 35.06}, "flag": True})
    (problem,) = floor_problems(floors, lowest_values(tmp_path, NIGHTLY))
    assert "the floor 34 is within 1.1x of the lowest legitimate run 35.06 (evidence/fleet-runs/x/b.json)" in problem
    assert problem.endswith("lower it to at most 31.87")
    stale = {"H100 SXM": {"conv.fp32.tflops": MeasuredFloor("conv.fp32.tflops", 30.0, 38.6, "a fault: 24.9")}}
    (problem,) = floor_problems(stale, lowest_values(tmp_path, NIGHTLY))
    assert problem.endswith(
        "says its lowest run is 38.6, the committed runs' lowest is 35.06 (evidence/fleet-runs/x/b.json)"
    )
    unmeasured = {"H200 SXM": stale["H100 SXM"]}
    assert floor_problems(unmeasured, {("H100 SXM", "conv.fp32.tflops"): Lowest(35.0, "r")}) == [
        "conv.fp32.tflops on H200 SXM: no committed legitimate run measures it"
    ]


def test_a_fault_named_as_crossing_a_floor_must_give_less_than_it() -> None:
    assert fault_values("CUDA_LAUNCH_BLOCKING=1: 3.89-4.63; the fused attention kernels off: 13-16") == {
        "CUDA_LAUNCH_BLOCKING=1": 4.63,
        "the fused attention kernels off": 16.0,
    }
    named = MeasuredFloor(
        "conv.bf16.tflops", 480.0, 556.0, "TORCH_CUDNN_V8_API_DISABLED=1: 86; CUDA_LAUNCH_BLOCKING=1: 496"
    )
    lowest = {("H200 SXM", "conv.bf16.tflops"): Lowest(567.0, "r")}
    assert floor_problems({"H200 SXM": {"conv.bf16.tflops": named}}, lowest) == [
        "conv.bf16.tflops on H200 SXM: names CUDA_LAUNCH_BLOCKING=1 as crossing the floor 480, but it gave 496",
        "conv.bf16.tflops on H200 SXM: says its lowest run is 556, the committed runs' lowest is 567 (r)",
    ]
