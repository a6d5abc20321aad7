"""Scaled dot-product attention: every backend against a float64 reference, fp32 attention by the default
dispatch against float64 (IEEE, not TF32), throughput per dtype with the default dispatch, and which backend that
dispatch picks."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch.nn import functional as F  # noqa: N812 - the conventional name
from torch.nn.attention import SDPBackend, sdpa_kernel

from conformance.support.expectations.bounds import Gate, fp32_ieee_error_gate, uncached_sdpa_gate
from conformance.support.expectations.measured_floors import tighter
from conformance.support.probes.env_limits import launch_blocking_hint, timing_unreliable
from conformance.support.results.recorder import RecordMetric, RecordNote
from conformance.support.workloads.cuda_timing import time_cuda
from conformance.support.workloads.gemm_bench import device_clocks, device_identity
from conformance.support.workloads.numerics import backward as run_backward
from conformance.support.workloads.numerics import grad_of, normalized_error, seeded_randn
from conformance.support.workloads.repetition import Plan, describe
from pytorch_cuda_contract.gpu import FLASH_ATTENTION_FROM, is_native, needs
from pytorch_cuda_contract.peaks import lookup_peak

pytestmark = pytest.mark.gpu

AUTOCAST_DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
THROUGHPUT_DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
BACKEND_NAMES = {0: "math", 1: "flash", 2: "efficient", 3: "cudnn", 4: "overrideable"}
THROUGHPUT_SHAPE = (8, 16, 1024, 64)  # batch, heads, sequence, head dim: 34 GFLOP forward
THROUGHPUT_PLAN = Plan(warmup=3, least=10, cap_s=1.0)  # about 0.16 ms a call on an H100 (fp16)
FP32_ERROR_SHAPE = (2, 4, 256, 64)


SDPA_BACKENDS = ["flash", "efficient", "cudnn", "math"]
FLASH_BACKENDS = ("flash", "cudnn")  # from FLASH_ATTENTION_FROM; efficient and math run everywhere: raising fails
# Measured on H200 (4x8x256x64 vs float64 math), worst of forward / grad_q over
# flash, efficient, cudnn and math: fp16 3.7e-4, bf16 2.9e-3.
SDPA_ERROR_BOUND = {"fp16": 1.5e-3, "bf16": 1.2e-2}
# A legitimate setting under which PyTorch refuses a backend (the cuDNN one: its backward is not deterministic).
DETERMINISTIC_REFUSAL = (
    "torch.use_deterministic_algorithms(True) is on: PyTorch refuses an attention backend whose backward is not "
    "deterministic (the cuDNN one); the other backends are checked"
)


def _sdpa_backend(name: str) -> SDPBackend:
    table = {
        "flash": "FLASH_ATTENTION",
        "efficient": "EFFICIENT_ATTENTION",
        "cudnn": "CUDNN_ATTENTION",
        "math": "MATH",
    }
    backend: SDPBackend | None = getattr(SDPBackend, table[name], None)
    if backend is None:
        pytest.skip(f"torch {torch.__version__} has no SDPBackend.{table[name]}")
    return backend


@pytest.mark.parametrize("backend_name", SDPA_BACKENDS)
@pytest.mark.parametrize("dtype_name", ["fp16", "bf16"])
def test_sdpa_backend_matches_reference(
    dtype_name: str, backend_name: str, cuda_device: torch.device, record_metric: RecordMetric, record_note: RecordNote
) -> None:
    """Fails when flash/efficient/cudnn/math SDPA output or grad_q is off from float64 math. A backend that raises is a
    failure, except flash/cuDNN below cc 8.0 (skip)."""
    dtype = AUTOCAST_DTYPES[dtype_name]
    if dtype is torch.bfloat16 and not is_native("bf16", torch.cuda.get_device_capability(cuda_device)):
        pytest.skip(f"bf16 needs {needs('bf16')}")
    backend = _sdpa_backend(backend_name)
    shape = (4, 8, 256, 64)
    q, k, v = (seeded_randn(shape, seed, cuda_device, dtype) for seed in (21, 22, 23))
    q.requires_grad_()
    grad_out = seeded_randn(shape, 24, cuda_device, dtype)
    q64, k64, v64 = (t.detach().double() for t in (q, k, v))
    q64.requires_grad_()
    reference = F.scaled_dot_product_attention(q64, k64, v64)
    run_backward(reference, grad_out.double())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with sdpa_kernel([backend]):
                out = F.scaled_dot_product_attention(q, k, v)
        except RuntimeError as exc:
            reasons = "; ".join(str(w.message) for w in caught)[:600]
            text = f"SDPA backend {backend_name} unavailable for {dtype_name} {shape}: {exc} {reasons}"
            if backend_name in FLASH_BACKENDS and torch.cuda.get_device_capability(cuda_device) < FLASH_ATTENTION_FROM:
                pytest.skip(text)
            if torch.are_deterministic_algorithms_enabled():
                pytest.skip(f"{DETERMINISTIC_REFUSAL}: {text}")
            pytest.fail(f"{text} (a GPU of compute capability >= {FLASH_ATTENTION_FROM} must have it)", pytrace=False)
    run_backward(out, grad_out)
    finite = bool(torch.isfinite(out).all()) and bool(torch.isfinite(grad_of(q)).all())
    assert finite, f"{backend_name} produced non-finite values"
    errors = {"forward": normalized_error(out, reference), "grad_q": normalized_error(grad_of(q), grad_of(q64))}
    for name, error in errors.items():
        record_metric(
            f"sdpa_{backend_name}_{dtype_name}_{name}_normalized_error", error, "1",
            bound=SDPA_ERROR_BOUND[dtype_name], bound_kind="max",
        )  # fmt: skip
    bound = SDPA_ERROR_BOUND[dtype_name]
    bad = {name: f"{e:.3e}" for name, e in errors.items() if not e < bound}
    assert not bad, f"SDPA {backend_name} {dtype_name} error above {bound:.0e} vs float64 math reference: {bad}"


def default_backend(q: torch.Tensor) -> str:
    """The backend the default dispatch picks for (q, q, q), via torch._fused_sdp_choice."""
    choose = getattr(torch, "_fused_sdp_choice", None)
    if choose is None:
        return "unknown"
    return BACKEND_NAMES.get(int(choose(q, q, q)), "error")


def test_sdpa_fp32_default_dispatch_is_ieee(
    cuda_device: torch.device, record_metric: RecordMetric, record_note: RecordNote
) -> None:
    """fp32 attention as a model calls it (the default dispatch: efficient on cc >= 8.0, whose fp32 GEMMs are
    3xTF32, or math through cuBLAS) against float64: IEEE-level, not TF32-level."""
    q, k, v = (seeded_randn(FP32_ERROR_SHAPE, seed, cuda_device) for seed in (28, 29, 30))
    backend = default_backend(q)
    out = F.scaled_dot_product_attention(q, k, v)
    error = normalized_error(out, F.scaled_dot_product_attention(q.double(), k.double(), v.double()))
    gate = fp32_ieee_error_gate("attention")
    record_metric("sdpa.fp32.error", error, "rel", **gate.metric_fields())
    record_note(f"fp32 attention {FP32_ERROR_SHAPE} by the default dispatch ({backend}): error {error:.2e}")
    problem = gate.violation(error)
    assert problem is None, (
        f"fp32 SDPA {FP32_ERROR_SHAPE} by the default dispatch ({backend}) against float64: {problem}: TF32 forced "
        "into attention (NVIDIA_TF32_OVERRIDE=1 with the math backend, torch.backends.cuda.matmul.allow_tf32 "
        "patched, or an attention kernel that rounds fp32 inputs); unset the override / remove the patch"
    )


FP32_THROUGHPUT_IS_INFORMATIONAL = (
    "fp32 attention's speed has no bound a fault crosses: TF32 forced into it runs the math backend, slower, not "
    "faster; test_sdpa_fp32_default_dispatch_is_ieee gates its precision"
)


@pytest.mark.parametrize(
    "dtype_name",
    [pytest.param("fp32", marks=pytest.mark.informational(FP32_THROUGHPUT_IS_INFORMATIONAL)), "fp16", "bf16"],
)
def test_sdpa_throughput_default_dispatch(
    dtype_name: str,
    cuda_device: torch.device,
    record_metric: RecordMetric,
    record_note: RecordNote,
) -> None:
    """Records the throughput and the backend the default dispatch picks; fails when fp16/bf16 fall back to math on
    cc ≥ 8.0. The fp32 throughput is informational: test_sdpa_fp32_default_dispatch_is_ieee gates fp32 attention."""
    dtype = THROUGHPUT_DTYPES[dtype_name]
    q, k, v = (seeded_randn(THROUGHPUT_SHAPE, seed, cuda_device, dtype) for seed in (25, 26, 27))
    backend = default_backend(q)
    batch, heads, sequence, head_dim = THROUGHPUT_SHAPE
    timings = time_cuda(lambda: F.scaled_dot_product_attention(q, k, v), cuda_device, THROUGHPUT_PLAN)
    tflops, fields = timings.rate(4.0 * batch * heads * sequence * sequence * head_dim)
    device = device_identity(cuda_device)
    gate = Gate(None, None, "SDPA throughput: recorded; the default-dispatch and IEEE checks gate attention")
    unreliable = timing_unreliable(cuda_device)
    if dtype_name != "fp32" and unreliable is not None:  # a legitimate setting: a general floor, never none
        spec = lookup_peak(str(device["name"]))
        gate = uncached_sdpa_gate(spec.peak(dtype_name) if spec is not None else None, unreliable)
    elif dtype_name != "fp32":
        lower, why = tighter(
            None, gate.why, str(device["name"]), f"sdpa.{dtype_name}.tflops",
            deterministic=torch.are_deterministic_algorithms_enabled(),
        )  # fmt: skip
        gate = Gate(lower, None, why)
    record_metric(
        f"sdpa.{dtype_name}.tflops", tflops, "TFLOP/s", **fields, **gate.metric_fields(), device=device,
        clocks=device_clocks(cuda_device),
    )  # fmt: skip
    if dtype_name != "fp32":
        record_metric(f"sdpa.default_backend.{dtype_name}", backend, "backend", device=device)
    record_note(
        f"default dispatch for {dtype_name} {THROUGHPUT_SHAPE}: {backend}; timed: {describe(timings, THROUGHPUT_PLAN)}"
    )
    out = F.scaled_dot_product_attention(q, k, v)
    assert bool(torch.isfinite(out).all()), f"SDPA {dtype_name} ({backend}) produced non-finite values"
    if dtype_name != "fp32" and torch.cuda.get_device_capability(cuda_device) >= FLASH_ATTENTION_FROM:
        assert backend in ("flash", "cudnn", "efficient"), (
            f"the default SDPA dispatch picks {backend!r} for {dtype_name} on a cc >= {FLASH_ATTENTION_FROM} GPU: "
            "the fused "
            "kernels (flash / cuDNN / efficient) are missing or disabled"
        )
    problem = gate.violation(tflops)
    assert problem is None, (
        f"SDPA {dtype_name} {THROUGHPUT_SHAPE} by the default dispatch ({backend}): {tflops:.1f} TFLOP/s: {problem}. "
        "Below the floor: the fused kernels are off or slowed, or the GPU is busy" + launch_blocking_hint()
    )
