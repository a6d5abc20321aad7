"""Schema 1 had no ``measurements`` index: derive the stable names from its per-test metrics.

Only what means the same thing is mapped (see SPEC-results-v2 / conformance/README.md);
everything else stays absent and the report says it was not measured.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Final

from pytorch_cuda_contract.results_model import Metric, TestResult

DTYPES: Final = ("fp32", "tf32", "fp16", "bf16")
PEAK_NOTE: Final = re.compile(r"peak ([0-9.]+) TFLOP/s")


def _renamed(metric: Metric, name: str, **changes: object) -> Metric:
    return replace(metric, name=name, **changes)  # type: ignore[arg-type]


def _gemm(test: TestResult, out: dict[str, Metric]) -> None:
    for dtype in DTYPES:
        tflops = test.metrics.get(f"{dtype}_tflops")
        if tflops is None:
            continue
        peak = None
        for note in test.notes:
            found = PEAK_NOTE.search(note)
            if found:
                peak = float(found.group(1))
        out[f"gemm.{dtype}.tflops"] = _renamed(tflops, f"gemm.{dtype}.tflops", peak=peak)
        size = test.metrics.get(f"{dtype}_size")
        if size is not None:
            out[f"gemm.{dtype}.size"] = _renamed(size, f"gemm.{dtype}.size")


def _errors(test: TestResult, out: dict[str, Metric]) -> None:
    names = {
        "gemm_fp32_ieee_normalized_error": "gemm.fp32.error",
        "gemm_tf32_normalized_error": "gemm.tf32.error",
        "gemm_fp16_normalized_error": "gemm.fp16.error",
        "gemm_bf16_normalized_error": "gemm.bf16.error",
        "conv_fp16_forward_normalized_error": "conv.fp16.error",
        "conv_bf16_forward_normalized_error": "conv.bf16.error",
        "fp32_final_loss": "training.final_loss.fp32",
        "fp16_final_loss": "training.final_loss.fp16",
        "bf16_final_loss": "training.final_loss.bf16",
        "allreduce_busbw": "nccl.busbw_gbps",
    }
    for old, new in names.items():
        metric = test.metrics.get(old)
        if metric is not None:
            out[new] = _renamed(metric, new)


def _underflow(test: TestResult, out: dict[str, Metric]) -> None:
    # A largest unscaled gradient of exactly 0 means every fp16 gradient underflowed.
    unscaled = test.metrics.get("unscaled_grad_abs_max")
    if unscaled is not None and unscaled.number == 0.0:
        name = "amp.fp16_zero_grad_fraction.unscaled"
        out[name] = _renamed(unscaled, name, value=1.0, unit="fraction")


def _ratios(out: dict[str, Metric]) -> None:
    fp32 = out.get("gemm.fp32.tflops")
    if fp32 is None or not fp32.number:
        return
    for dtype in ("tf32", "fp16", "bf16"):
        other = out.get(f"gemm.{dtype}.tflops")
        if other is not None and other.number is not None:
            name = f"gemm.{dtype}.x_fp32"
            out[name] = Metric(name=name, value=other.number / fp32.number, unit="x", test=other.test)


def derive_measurements(tests: Mapping[str, TestResult]) -> dict[str, Metric]:
    out: dict[str, Metric] = {}
    for test in tests.values():
        if test.outcome != "passed" and not test.metrics:
            continue
        _gemm(test, out)
        _errors(test, out)
        _underflow(test, out)
    _ratios(out)
    return out
