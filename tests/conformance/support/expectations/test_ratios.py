"""The tensor-core ratio table, the fp32 upper bound and the dtype verdicts (pure, no GPU)."""

from __future__ import annotations

import pytest

from conformance.support.expectations.ratios import GATE_FRACTION, expected_ratios, fp32_upper_bound
from conformance.support.workloads.gemm_bench import GemmBench, GemmRun, dtype_verdict

# The last real H200 run (torch 2.11 + CUDA 13.0).
H200 = {"fp16": 745.7, "bf16": 776.6, "tf32": 394.6, "fp32": 50.4}


def bench(name: str, capability: tuple[int, int], tflops: dict[str, float | None]) -> GemmBench:
    result = GemmBench({"index": 0, "name": name}, capability)
    for dtype, value in tflops.items():
        error = "RuntimeError: not supported" if value is None else None
        result.runs[dtype] = GemmRun(dtype, 8192, value or float("nan"), {}, 1.0, None, error)
    return result


@pytest.mark.parametrize(
    ("name", "capability", "fp16", "tf32"),
    [
        ("NVIDIA H200", (9, 0), 14.8, 7.4),
        ("NVIDIA H20", (9, 0), 3.4, 1.7),
        ("NVIDIA L40S", (8, 9), 4.0, 2.0),
        ("NVIDIA GeForce RTX 4090", (8, 9), 2.0, 1.0),
        ("NVIDIA A100-SXM4-80GB", (8, 0), 16.0, 8.0),
        ("NVIDIA A40", (8, 6), 4.0, 2.0),
        ("Tesla V100-SXM2-16GB", (7, 0), 8.0, None),
    ],
)
def test_expected_ratios_per_architecture(
    name: str, capability: tuple[int, int], fp16: float, tf32: float | None
) -> None:
    ratios = expected_ratios(capability, name)
    assert ratios is not None
    assert (ratios.fp16, ratios.tf32) == (fp16, tf32)


def test_only_gpus_without_tensor_cores_are_not_gated() -> None:
    assert expected_ratios((6, 0), "Tesla P100-PCIE-16GB") is None
    orin = expected_ratios((8, 7), "Orin")
    assert orin is not None
    assert orin.bound("fp16") == pytest.approx(GATE_FRACTION * 4.0)


def test_h200_measured_ratios_pass_and_forced_tf32_fails() -> None:
    ratios = expected_ratios((9, 0), "NVIDIA H200")
    assert ratios is not None
    for dtype in ("fp16", "bf16", "tf32"):
        bound = ratios.bound(dtype)
        assert bound is not None
        assert H200[dtype] / H200["fp32"] >= bound
    forced_fp32 = 346.0  # NVIDIA_TF32_OVERRIDE=1: fp32 "highest" ran as TF32
    bound = ratios.bound("fp16")
    assert bound is not None
    assert H200["fp16"] / forced_fp32 < bound


# Every committed run's ratios on the two cards (evidence/): the lowest healthy, and the faults that halve one.
LOWEST_HEALTHY = {"tf32": 7.6, "fp16": 13.72, "bf16": 14.28}  # H100 cudnn-benchmark-on, shipped stack, deterministic
HIGHEST_HEALTHY = {"tf32": 8.16, "fp16": 15.07, "bf16": 15.58}  # H200 regrouped, H200 fleet
CUBLAS_WORKSPACE_NONE_TF32 = (4.14, 4.18, 4.22, 4.23)  # CUBLAS_WORKSPACE_CONFIG=:0:0 on the H100 and the H200


@pytest.mark.parametrize("name", ["NVIDIA H100 80GB HBM3", "NVIDIA H200"])
@pytest.mark.parametrize("dtype", ["tf32", "fp16", "bf16"])
def test_a_ratio_halved_fails_when_judged_alone(name: str, dtype: str) -> None:
    """Issue 52: the old half-of-expected floor let a halved tf32 (3.8 against 3.7) and bf16 (7.6 against 7.4)
    through on a GPU where the ratio is the only gate."""
    ratios = expected_ratios((9, 0), name)
    assert ratios is not None
    bound = ratios.bound(dtype)
    assert bound is not None
    assert LOWEST_HEALTHY[dtype] >= bound
    assert HIGHEST_HEALTHY[dtype] / 2 < bound
    assert HIGHEST_HEALTHY[dtype] / 2 >= 0.5 * ratios.ratio(dtype)  # type: ignore[operator]  # the old floor passed it


def test_cublas_without_a_workspace_fails_the_tf32_ratio() -> None:
    ratios = expected_ratios((9, 0), "NVIDIA H100 80GB HBM3")
    assert ratios is not None
    bound = ratios.bound("tf32")
    assert bound is not None
    assert all(value < bound for value in CUBLAS_WORKSPACE_NONE_TF32)


def test_fp32_upper_bound_catches_forced_tf32() -> None:
    ratios = expected_ratios((9, 0), "NVIDIA H200")
    bound, why = fp32_upper_bound(67.0, H200["tf32"], ratios)
    assert bound is not None
    assert H200["fp32"] <= bound < 346.0
    assert "datasheet" in why
    unknown_peak, why = fp32_upper_bound(None, H200["tf32"], ratios)
    assert unknown_peak is not None
    assert 346.0 > unknown_peak > H200["fp32"]
    assert "measured TF32" in why
    assert fp32_upper_bound(None, 80.0, expected_ratios((8, 9), "NVIDIA GeForce RTX 4090")) == (
        None,
        "no datasheet peak and no TF32 reference",
    )


def test_verdicts_are_measured() -> None:
    h200 = bench("NVIDIA H200", (9, 0), dict(H200))
    assert {d: dtype_verdict(h200, d)[0] for d in H200} == dict.fromkeys(H200, "native")
    slow_bf16 = bench("NVIDIA H200", (9, 0), {**H200, "bf16": 60.0})
    assert dtype_verdict(slow_bf16, "bf16")[0] == "emulated"
    v100 = bench("Tesla V100-SXM2-16GB", (7, 0), {"fp32": 14.0, "tf32": 14.0, "fp16": 100.0, "bf16": 1.5})
    assert dtype_verdict(v100, "tf32")[0] == "unsupported"
    assert dtype_verdict(v100, "bf16")[0] == "emulated"
    assert dtype_verdict(v100, "fp16")[0] == "native"
    broken = bench("Tesla P100", (6, 0), {"fp32": 9.0, "bf16": None})
    assert dtype_verdict(broken, "bf16")[0] == "unsupported"
