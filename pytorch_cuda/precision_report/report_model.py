"""The report's data: one entry per results file (an image on a GPU), as the versioned report.json.

Everything here comes from pytorch_cuda_contract.results_file (the one reader) and pytorch_cuda_contract.advice
(the one recommendation); this module only arranges it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any, Final

from pytorch_cuda_contract.advice import Assessment, assess
from pytorch_cuda_contract.results_file import ConformanceResults, Gpu
from pytorch_cuda_contract.results_model import image_label

REPORT_SCHEMA: Final = 1
REPORT_KIND: Final = "pytorch-cuda-precision-report"
SOFTWARE_KEYS: Final = ("python", "torch", "cuda", "cudnn", "nccl", "triton", "cublas_version", "nvshmem", "arch_list")


def _gpu(gpu: Gpu) -> dict[str, Any]:
    return {
        "index": gpu.index,
        "name": gpu.name,
        "compute_capability": gpu.compute_capability,
        "memory_gib": None if gpu.memory_bytes is None else round(gpu.memory_bytes / 1024**3, 1),
        "sm_count": gpu.sm_count,
        "driver": gpu.driver,
        "cuda_driver_version": gpu.cuda_driver_version,
    }


def _clocks(results: ConformanceResults) -> dict[str, Any] | None:
    for name in ("gemm.bf16.tflops", "gemm.fp16.tflops", "gemm.tf32.tflops", "gemm.fp32.tflops"):
        metric = results.measurement(name)
        if metric is not None and metric.clocks is not None:
            return {"measured_with": name, **asdict(metric.clocks), "throttled": bool(metric.clocks.throttle_reasons)}
    return None


def _status(results: ConformanceResults) -> dict[str, Any]:
    counts = results.counts()
    return {
        "exit_status": results.exit_status,
        "counts": counts,
        "complete": results.complete,
        "failures": list(results.failures()),
        "missing": list(results.missing),
        "started_at": results.started_at,
        "wall_time_s": results.wall_time_s,
    }


def _backend(results: ConformanceResults, dtype: str) -> str | None:
    metric = results.measurement(f"sdpa.default_backend.{dtype}")
    return None if metric is None or metric.value is None else str(metric.value)


def _nan_free(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(f"{value:.6g}")


def _informational(results: ConformanceResults) -> list[dict[str, Any]]:
    """Stable-named numbers the suite recorded without a bound: the report shows them as such, never judges them."""
    rows = []
    for name, metric in sorted(results.measurements.items()):
        if metric.informational and not isinstance(metric.value, str):
            value = metric.number
            rows.append({"name": name, "value": None if value is None else float(f"{value:.6g}"),
                         "unit": metric.unit, "test": metric.test})  # fmt: skip
    return rows


def _informational_checks(results: ConformanceResults) -> list[dict[str, str]]:
    """Checks marked informational by the suite: they document a fact no plausible fault can cross, gate nothing."""
    return [
        {"test": test.name, "reason": test.informational}
        for test in sorted(results.tests.values(), key=lambda t: t.nodeid)
        if test.informational is not None
    ]


def entry(results: ConformanceResults, a: Assessment, key: str) -> dict[str, Any]:
    dtypes = []
    for row in a.dtypes:
        fields = {k: v for k, v in asdict(row).items() if k not in ("dtype", "verdict", "verdict_source")}
        dtypes.append(
            {
                "dtype": row.dtype,
                "verdict": row.verdict,
                "verdict_source": row.verdict_source,
                **{k: _nan_free(v) for k, v in fields.items()},
                "pct_peak": _nan_free(row.pct_peak),
                "pct_mamf": _nan_free(row.pct_mamf),
                "sdpa_backend": _backend(results, row.dtype),
            }
        )
    pins = results.manifest_content.get("pins")
    env = results.environment
    return {
        "id": key,
        "source": results.source,
        "results_schema": results.schema,
        "image": {
            "label": image_label(results),
            "ref": results.image.ref,
            "digest": results.image.digest,
            "revision": results.image.revision,
        },
        "gpu": a.gpu.name if a.gpu else None,
        "status": _status(results),
        "hardware": {"gpus": [_gpu(g) for g in results.gpus], "clocks": _clocks(results)},
        "software": {
            "torch_reports": {k: env.get(k) for k in SOFTWARE_KEYS if k in env},
            "manifest_pins": dict(pins) if isinstance(pins, Mapping) else None,
            "manifest_found": bool(results.manifest.get("found")),
        },
        "dtypes": dtypes,
        "amp": [{k: _nan_free(v) if k != "dtype" else v for k, v in asdict(r).items()} for r in a.amp],
        "grad_scaler": {
            "fp16_zero_grad_fraction_unscaled": results.number("amp.fp16_zero_grad_fraction.unscaled"),
            "fp16_zero_grad_fraction_scaled": results.number("amp.fp16_zero_grad_fraction.scaled"),
            "fp16_overflow": results.number("range.fp16_overflow"),
            "bf16_overflow": results.number("range.bf16_overflow"),
        },
        "compile": {k: _nan_free(v) for k, v in a.compile.items()},
        "nccl": {"busbw_gbps": results.number("nccl.busbw_gbps")},
        "recommendation": [asdict(line) for line in a.recommendation],
        "claims": [asdict(claim) for claim in a.claims],
        "informational": _informational(results),
        "informational_checks": _informational_checks(results),
    }


def build_document(loaded: Sequence[ConformanceResults]) -> dict[str, Any]:
    entries = [entry(results, assess(results), f"e{i + 1}") for i, results in enumerate(loaded)]
    return {
        "schema": REPORT_SCHEMA,
        "kind": REPORT_KIND,
        "sources": [results.source for results in loaded],
        "entries": entries,
    }
