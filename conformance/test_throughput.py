"""GEMM throughput: every dtype at the same m=n=k, the tensor-core ratios to FP32 IEEE against what the
architecture promises, FP32 "highest" bounded above, and a native/emulated/unsupported verdict per dtype; the
maximum achievable matmul FLOPS (MAMF) of a short shape search, recorded next to the datasheet peak.

CUDA-event timing, warm-up, the L2 flushed before each repetition, repetitions until the median's error reaches 1%
or a time cap (support/workloads/repetition.py), random (not zero) data; min/median/max, the relative spread, the
error reached and NVML clocks are recorded.
"""

from __future__ import annotations

import pytest
import torch

from conformance.support.expectations.bounds import THROUGHPUT_FLOOR, Gate, throughput_gate
from conformance.support.expectations.ratios import (
    GATE_FRACTION,
    RATIO_CEILING,
    RATIO_DTYPES,
    expected_ratios,
    fp32_upper_bound,
    ratio_note,
)
from conformance.support.probes.env_limits import tf32_disabled
from conformance.support.results.recorder import RecordDtype, RecordMetric, RecordNote
from conformance.support.workloads.gemm_bench import GemmBench, dtype_verdict
from conformance.support.workloads.mamf import MAMF_DTYPES, SEARCH_BUDGET_S, search_mamf
from pytorch_cuda_contract.gpu import EVERY_DTYPE_FROM, is_native
from pytorch_cuda_contract.peaks import lookup_peak

pytestmark = pytest.mark.gpu
# "FP16 is up to 3x faster than FP32" (the seed article): tensor cores give far more on datacenter parts.
ARTICLE_FP16_CLAIM = "FP16 GEMM up to 3x FP32"


@pytest.mark.parametrize("dtype_name", ["fp32", "tf32", "fp16", "bf16"])
def test_gemm_throughput(
    dtype_name: str, gemm_bench: GemmBench, record_metric: RecordMetric, record_note: RecordNote
) -> None:
    """Fails when every dtype at 8192³ (one measurement per session, the `gemm_bench` session fixture, shared with AMP,
    conv and SDPA): TFLOP/s below the floor × datasheet dense peak, or above 1.15 × the peak (broken timing); a GEMM
    that raises on cc ≥ 8.0. GPUs outside the peak table (and MIG slices) are recorded with a note: the ratios gate
    them."""
    run = gemm_bench.runs[dtype_name]
    name = str(gemm_bench.device["name"])
    if dtype_name == "tf32" and tf32_disabled():
        pytest.skip(str(tf32_disabled()))
    spec = lookup_peak(name)
    peak = spec.peak(dtype_name) if spec is not None else None
    if run.error is not None:
        if dtype_name == "fp32" or gemm_bench.capability >= EVERY_DTYPE_FROM:
            pytest.fail(f"{dtype_name} GEMM {run.n}^3 raised on {name}: {run.error}", pytrace=False)
        pytest.skip(f"{dtype_name} GEMM unsupported on {name}: {run.error}")
    gate = throughput_gate(peak, THROUGHPUT_FLOOR[dtype_name])
    record_metric(
        f"gemm.{dtype_name}.tflops", run.tflops, "TFLOP/s", **run.spread, peak=peak,
        device=gemm_bench.device, clocks=run.clocks, **gate.metric_fields(),
    )  # fmt: skip
    record_note(f"{dtype_name} GEMM timed: {run.timing}")
    record_metric(f"{dtype_name}_size", run.n, "m=n=k")
    record_metric(f"{dtype_name}_median_ms", run.median_ms, "ms")
    if peak is None:
        what = "not in the peak table" if spec is None else f"has no {dtype_name} datasheet peak"
        record_note(f"{name!r} {what}: {run.tflops:.1f} TFLOP/s recorded; the architecture ratios gate it")
        return
    record_metric(f"{dtype_name}_fraction_of_peak", 100.0 * run.tflops / peak, "%")
    problem = gate.violation(run.tflops)
    assert problem is None, (
        f"{dtype_name} GEMM {run.n}^3 on {name}: {run.tflops:.1f} TFLOP/s: {problem}. Below: check clocks/power "
        f"capping (clocks {run.clocks}), other processes on the GPU, and that cuBLAS tensor-core kernels are used; "
        "above: the timing is broken (no synchronisation) or the kernel skips work"
    )


@pytest.mark.parametrize("dtype_name", list(RATIO_DTYPES))
def test_gemm_ratio_to_fp32(
    dtype_name: str, gemm_bench: GemmBench, record_metric: RecordMetric, record_note: RecordNote
) -> None:
    """Fails when the ratio to fp32 IEEE at the same size is below 0.6 (`GATE_FRACTION`: a ratio halved crosses it), or
    above 2.5× (`RATIO_CEILING`), what the ARCHITECTURE promises
    (`support/expectations/ratios.py`: per compute capability, GeForce at half rate, H20 and L40 by name). A GPU
    newer than the table gets conservative GeForce-level floors and a note; only GPUs without tensor cores (cc <
    7.0) are recorded, not gated. `NVIDIA_TF32_OVERRIDE=0`: tf32 skips naming it."""
    name = str(gemm_bench.device["name"])
    if dtype_name == "tf32" and tf32_disabled():
        pytest.skip(str(tf32_disabled()))
    ratios = expected_ratios(gemm_bench.capability, name)
    ratio = gemm_bench.ratio(dtype_name)
    if ratio is None:
        errors = {d: gemm_bench.runs[d].error for d in ("fp32", dtype_name) if gemm_bench.runs[d].error}
        if gemm_bench.capability >= EVERY_DTYPE_FROM:
            pytest.fail(f"no {dtype_name}:fp32 ratio on {name}: the GEMM raised {errors}", pytrace=False)
        pytest.skip(f"no {dtype_name} or fp32 measurement on {name}: {errors}")
    expected = ratios.ratio(dtype_name) if ratios is not None else None
    gate = Gate(ratios.bound(dtype_name), ratios.ceiling(dtype_name), "") if ratios else Gate(None, None, "")
    contradicts = ARTICLE_FP16_CLAIM if dtype_name == "fp16" and abs(ratio - 3.0) > 1.0 else None
    record_metric(
        f"gemm.{dtype_name}.x_fp32", ratio, "x", **gate.metric_fields(),
        device=gemm_bench.device, contradicts=contradicts,
    )  # fmt: skip
    if ratios is None or gate.lower is None:
        record_note(f"cc {gemm_bench.capability} {name!r}: no tensor-core {dtype_name} path; recorded, not gated")
        return
    record_note(ratio_note(ratios, gemm_bench.capability, dtype_name))
    assert ratio >= gate.lower, (
        f"{dtype_name}:fp32 GEMM throughput on {name} is {ratio:.2f}x, below {gate.lower:g}x ({GATE_FRACTION:g} of "
        f"the {expected}x that {ratios.family} promises): {dtype_name} is not on tensor cores, or fp32 'highest' is "
        "not IEEE (NVIDIA_TF32_OVERRIDE=1 makes fp32 as fast as TF32; NVIDIA_TF32_OVERRIDE=0 makes TF32 as slow as "
        "fp32), or cuBLAS has no workspace (CUBLAS_WORKSPACE_CONFIG=:0:0 halves TF32)"
    )
    assert gate.upper is None or ratio <= gate.upper, (
        f"{dtype_name}:fp32 GEMM throughput on {name} is {ratio:.2f}x, above {gate.upper:g}x ({RATIO_CEILING:g} "
        f"times the {expected}x that {ratios.family} promises): fp32 'highest' runs far below the architecture's "
        "FP32 rate (throttled, another process on the GPU, or an emulated fp32 path)"
    )


def test_fp32_highest_is_not_faster_than_ieee(
    gemm_bench: GemmBench, record_metric: RecordMetric, record_note: RecordNote
) -> None:
    """Fails when fp32 "highest" above 1.15× the datasheet fp32 peak, or (where TF32 is ≥ 4× fp32) above measured TF32
    / (0.5 × the expected TF32 ratio, `TF32_REFERENCE_FRACTION`): TF32 forced."""
    name = str(gemm_bench.device["name"])
    fp32 = gemm_bench.tflops("fp32")
    assert fp32 is not None, f"fp32 GEMM failed on {name}: {gemm_bench.runs['fp32'].error}"
    spec = lookup_peak(name)
    ratios = expected_ratios(gemm_bench.capability, name)
    bound, why = fp32_upper_bound(spec.fp32 if spec else None, gemm_bench.tf32_reference(), ratios)
    record_metric("fp32_highest_tflops", fp32, "TFLOP/s", bound=bound, bound_kind="max" if bound else None)
    if bound is None:
        record_note(f"{name!r}: {why}; fp32 recorded, not bounded")
        return
    assert fp32 <= bound, (
        f"fp32 GEMM with precision 'highest' runs at {fp32:.1f} TFLOP/s on {name}, above {bound:.1f} ({why}): "
        "it is not IEEE fp32 -- TF32 is forced (NVIDIA_TF32_OVERRIDE=1 or a patched cuBLAS)"
    )


def test_dtype_verdicts(gemm_bench: GemmBench, record_dtype: RecordDtype, record_note: RecordNote) -> None:
    """bf16 is measured, not inferred from compute capability: native needs tensor-core speed."""
    problems = []
    for dtype in ("fp32", "tf32", "fp16", "bf16"):
        if dtype == "tf32" and tf32_disabled():  # no verdict: the report must not call TF32 emulated
            record_note(f"tf32 not judged: {tf32_disabled()}")
            continue
        verdict, reason = dtype_verdict(gemm_bench, dtype)
        record_dtype(dtype, verdict, reason, int(str(gemm_bench.device["index"])))
        record_note(f"{dtype}: {verdict} ({reason})")
        if dtype != "fp32" and is_native(dtype, gemm_bench.capability) and verdict != "native":
            problems.append(f"{dtype} is {verdict} on cc {gemm_bench.capability} ({reason})")
    assert not problems, "; ".join(problems) + ": expected native tensor-core speed"


@pytest.mark.informational(
    "the best shape's throughput documents what cuBLAS delivers on this GPU; the 8192^3 GEMM checks above gate "
    "speed (a slow GPU lowers both, so their ratio crosses no bound)"
)
@pytest.mark.parametrize("dtype_name", list(MAMF_DTYPES))
def test_maximum_achievable_matmul_flops(
    dtype_name: str, gemm_bench: GemmBench, record_metric: RecordMetric, record_note: RecordNote
) -> None:
    """Records MAMF: the best of a 64-shape `torch.mm` search (m, n ∈ 4096…12288, k ∈ 4096…16384; 5 warm-up
    and 20 timed calls a shape, 6 s budget a dtype) and of the fixed 8192³ GEMM, the shape that won, which of the
    two won, the search's own best, % of the datasheet peak and the fixed GEMM as % of MAMF. Gates nothing: a slow
    GPU lowers both."""
    run = gemm_bench.runs[dtype_name]
    name = str(gemm_bench.device["name"])
    if run.error is not None:
        pytest.skip(f"{dtype_name} GEMM unsupported on {name}: {run.error}")
    fixed = (run.tflops, (run.n, run.n, run.n))
    result = search_mamf(torch.device("cuda", 0), dtype_name, fixed)
    spec = lookup_peak(name)
    peak = spec.peak(dtype_name) if spec is not None else None
    m, n, k = result.shape
    record_metric(f"mamf.{dtype_name}.tflops", result.tflops, "TFLOP/s", peak=peak, device=gemm_bench.device)
    record_metric(f"mamf.{dtype_name}.shape", f"{m}x{n}x{k}", "m x n x k")
    record_metric(f"mamf.{dtype_name}.shapes_searched", result.shapes_searched, "shapes")
    record_metric(f"mamf.{dtype_name}.source", result.source, "search or fixed GEMM")
    record_metric(f"mamf.{dtype_name}.search_tflops", result.search_tflops, "TFLOP/s")
    record_metric(f"{dtype_name}_fraction_of_mamf", 100.0 * run.tflops / result.tflops, "%")
    if peak is not None:
        record_metric(f"mamf.{dtype_name}.fraction_of_peak", 100.0 * result.tflops / peak, "%")
    searched = "" if result.complete else f" (the {SEARCH_BUDGET_S:g} s budget stopped it)"
    record_note(
        f"{dtype_name} MAMF on {name}: {result.tflops:.1f} TFLOP/s at m={m} n={n} k={k}, best of "
        f"{result.shapes_searched}/{result.shapes_in_grid} shapes in {result.seconds:.1f} s{searched} (won by the "
        f"{result.source}; the search's best: {result.search_tflops:.1f}); the "
        f"{run.n}^3 GEMM reaches {100.0 * run.tflops / result.tflops:.1f}% of it"
        + (f", MAMF is {100.0 * result.tflops / peak:.1f}% of the {peak:g} TFLOP/s datasheet peak" if peak else "")
    )
