"""Precision kernels: FP16/BF16 GEMM and cuDNN conv against float64, the 65504
reduced-precision case, and the FP32 (IEEE vs TF32) matmul policy.

Bounds are on the normalized error ||C - ref||_F / ||ref||_F where ref is the
float64 result of the *same rounded inputs*, so they measure accumulation and
output rounding only.  Calibration (H200, torch 2.11 + CUDA 13.0) is in the
comment next to each bound; bounds are about 4x the measured value.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator

import pytest
import torch

from conformance.support.probes.env_limits import tf32_disabled
from conformance.support.results.recorder import RecordMetric, RecordNote
from conformance.support.workloads.numerics import backward as run_backward
from conformance.support.workloads.numerics import grad_of, normalized_error, seeded_randn
from pytorch_cuda_contract.gpu import is_native, native_from, needs

LOW_PRECISION = {"fp16": torch.float16, "bf16": torch.bfloat16}
GEMM_SIZE = 4096
# Measured on H200 (4096^3, randn): fp16 2.08e-4, bf16 1.66e-3 -- the output
# rounding of fp16 (2^-11) and bf16 (2^-8); fp32 accumulation adds ~nothing.
GEMM_ERROR_BOUND = {"fp16": 8e-4, "bf16": 6.5e-3}
# Measured on H200, conv 3x3 (16,64,32,32)->128 channels, forward / grad_input /
# grad_weight: fp16 2.08e-4 / 2.07e-4 / 2.08e-4, bf16 1.66e-3 / 1.66e-3 / 1.66e-3.
CONV_ERROR_BOUND = {"fp16": 8e-4, "bf16": 6.5e-3}
# FP32 matmul 4096^3 vs float64. Measured on H200: IEEE 1.15e-6, TF32 2.94e-4
# (TF32 rounds inputs to 10 mantissa bits).  The gap is what catches forced TF32.
FP32_IEEE_BOUND = 5e-6
TF32_BAND = (5e-5, 1.2e-3)
FP16_MAX = 65504.0  # the largest finite fp16


@pytest.fixture
def restore_matmul_flags() -> Iterator[None]:
    precision = torch.get_float32_matmul_precision()
    reduced = torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction
    yield
    torch.set_float32_matmul_precision(precision)
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = reduced


def _skip_unless_bf16(dtype_name: str) -> None:
    if dtype_name == "bf16" and not is_native("bf16", torch.cuda.get_device_capability(0)):
        pytest.skip(f"bf16 tensor cores need {needs('bf16')}")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype_name", ["fp16", "bf16"])
def test_low_precision_gemm_error(dtype_name: str, cuda_device: torch.device, record_metric: RecordMetric) -> None:
    """Fails when normalized error of a 4096³ GEMM vs float64 is above the bound."""
    _skip_unless_bf16(dtype_name)
    dtype = LOW_PRECISION[dtype_name]
    n = GEMM_SIZE
    a = seeded_randn((n, n), seed=1, device=cuda_device, dtype=dtype)
    b = seeded_randn((n, n), seed=2, device=cuda_device, dtype=dtype)
    out = a @ b
    reference = a.double() @ b.double()
    assert out.dtype == dtype
    assert bool(torch.isfinite(out).all()), f"{dtype_name} GEMM produced non-finite values"
    error = normalized_error(out, reference)
    record_metric(f"gemm.{dtype_name}.error", error, "rel", bound=GEMM_ERROR_BOUND[dtype_name], bound_kind="max")
    bound = GEMM_ERROR_BOUND[dtype_name]
    assert error < bound, (
        f"{dtype_name} GEMM {n}^3 normalized error {error:.3e} exceeds {bound:.1e}: cuBLAS is not accumulating "
        "in fp32 (reduced-precision reduction forced?) or the kernel is broken"
    )


@pytest.mark.gpu
def test_fp16_reduction_does_not_overflow_at_65504(
    cuda_device: torch.device, restore_matmul_flags: None, record_note: RecordNote
) -> None:
    """Fails when an fp16 addmm whose exact result is 0, but whose partial sums reach 131072 (above `FP16_MAX`), is
    not 0 with reduced-precision reduction off: cuBLAS reduced in fp16."""
    k = 16384
    a = torch.ones(16, k, device=cuda_device, dtype=torch.float16)
    column = torch.cat([torch.full((k // 2,), 16.0), torch.full((k // 2,), -16.0)])  # partial sums reach 131072
    b = column.to(device=cuda_device, dtype=torch.float16).unsqueeze(1).repeat(1, 16)
    bias = torch.zeros(16, 16, device=cuda_device, dtype=torch.float16)
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    exact = torch.addmm(bias, a, b)
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = True
    relaxed = torch.addmm(bias, a, b)
    record_note(f"with reduced-precision reduction allowed: max |out| = {float(relaxed.float().abs().max())}")
    assert bool((exact == 0).all()), (
        f"fp16 addmm with allow_fp16_reduced_precision_reduction=False overflowed {FP16_MAX} (exact result 0, got "
        f"values max |out| {float(exact.float().abs().max())}): cuBLAS reduces in fp16; check TORCH/cuBLAS overrides"
        + (
            " (torch.backends.cuda.matmul.allow_fp16_accumulation is True: fp16 GEMMs keep fp16 partial sums)"
            if getattr(torch.backends.cuda.matmul, "allow_fp16_accumulation", False)
            else ""
        )
    )


@pytest.mark.gpu
@pytest.mark.parametrize("dtype_name", ["fp16", "bf16"])
def test_cudnn_conv_forward_backward_error(
    dtype_name: str, cuda_device: torch.device, record_metric: RecordMetric
) -> None:
    """Fails when conv forward, grad-input or grad-weight is off from float64."""
    _skip_unless_bf16(dtype_name)
    assert torch.backends.cudnn.is_available(), "cuDNN is not available to torch"
    assert torch.backends.cudnn.enabled, "torch.backends.cudnn.enabled is False"
    dtype = LOW_PRECISION[dtype_name]
    x = seeded_randn((16, 64, 32, 32), seed=3, device=cuda_device, dtype=dtype).requires_grad_()
    w = (seeded_randn((128, 64, 3, 3), seed=4, device=cuda_device, dtype=dtype) / 24).requires_grad_()
    grad_out = seeded_randn((16, 128, 32, 32), seed=5, device=cuda_device, dtype=dtype)
    y = torch.nn.functional.conv2d(x, w, padding=1)
    run_backward(y, grad_out)
    x64 = x.detach().double().requires_grad_()
    w64 = w.detach().double().requires_grad_()
    y64 = torch.nn.functional.conv2d(x64, w64, padding=1)
    run_backward(y64, grad_out.double())
    errors = {
        "forward": normalized_error(y, y64),
        "grad_input": normalized_error(grad_of(x), grad_of(x64)),
        "grad_weight": normalized_error(grad_of(w), grad_of(w64)),
    }
    bound = CONV_ERROR_BOUND[dtype_name]
    for name, error in errors.items():
        record_metric(f"conv_{dtype_name}_{name}_normalized_error", error, "1", bound=bound, bound_kind="max")
    record_metric(f"conv.{dtype_name}.error", max(errors.values()), "rel", bound=bound, bound_kind="max")
    bad = {name: f"{error:.3e}" for name, error in errors.items() if not error < bound}
    assert not bad, f"cuDNN {dtype_name} conv errors above {bound:.1e}: {bad}"


FP32_POLICY_FIX = "remove it so FP32 matmuls stay IEEE by default (TF32 only when a program asks)"


TF32_ENV_VARS = ("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "NVIDIA_TF32_OVERRIDE")
NEW_API_FIELDS = ("fp32_precision", "cuda_matmul_fp32_precision", "cudnn_conv_fp32_precision")


@pytest.mark.cpu
def test_fp32_matmul_policy_is_ieee_by_default(
    fp32_policy_at_start: dict[str, object], record_note: RecordNote
) -> None:
    """The policy as torch reports it at startup gates; environment variables are only noted.

    Whether the variables force TF32 is measured by behaviour (the GPU error band and the fp32
    throughput bound): TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 had no effect on torch 2.11.
    """
    policy = fp32_policy_at_start
    problems = [
        f"{key} was 'tf32' at startup (new fp32_precision API)"
        for key in NEW_API_FIELDS
        if policy.get(key) == "tf32" and key != "cudnn_conv_fp32_precision"
    ]
    unreadable = {key: value["error"] for key, value in policy.items() if isinstance(value, dict) and "error" in value}
    if unreadable:
        problems.append(
            f"reading {', '.join(unreadable)} at startup raised ({next(iter(unreadable.values()))[:200]}): "
            "the legacy and the new fp32_precision APIs were mixed"
        )
    precision = policy.get("float32_matmul_precision")
    if isinstance(precision, str) and precision != "highest":
        problems.append(f"torch.get_float32_matmul_precision() was {precision!r} at startup, not 'highest'")
    if policy.get("cuda_matmul_allow_tf32") is True:
        problems.append("torch.backends.cuda.matmul.allow_tf32 was True at startup")
    causes = []
    for variable in TF32_ENV_VARS:
        value = os.environ.get(variable)
        if value not in (None, "", "0"):
            text = f"{variable}={value!r} is set: it may force TF32 (the GPU error band and fp32 bound measure it)"
            record_note(text)
            warnings.warn(text, stacklevel=1)
            causes.append(f"{variable}={value!r}")
    cause = f" (torch reads {', '.join(causes)} from the environment: unset it)" if causes else ""
    assert not problems, (
        "; ".join(problems) + ": something (sitecustomize/usercustomize, PYTHONSTARTUP or an imported package) "
        f"changed the FP32 matmul policy; {FP32_POLICY_FIX}" + cause
    )


def _fp32_matmul_error(device: torch.device, precision: str) -> float:
    torch.set_float32_matmul_precision(precision)
    n = GEMM_SIZE
    a = seeded_randn((n, n), seed=6, device=device)
    b = seeded_randn((n, n), seed=7, device=device)
    out = a @ b
    torch.cuda.synchronize(device)
    return normalized_error(out, a.double() @ b.double())


@pytest.mark.gpu
def test_fp32_ieee_and_tf32_error_bands(
    cuda_device: torch.device, restore_matmul_flags: None, record_metric: RecordMetric
) -> None:
    """Fails when "highest" is not IEEE-accurate (TF32 silently forced), or "high" is not in the TF32 band (TF32 not
    used when asked)."""
    ieee = _fp32_matmul_error(cuda_device, "highest")
    record_metric("gemm.fp32.error", ieee, "rel", bound=FP32_IEEE_BOUND, bound_kind="max")
    assert ieee < FP32_IEEE_BOUND, (
        f"FP32 matmul with precision 'highest' has normalized error {ieee:.3e} (IEEE fp32 expected < "
        f"{FP32_IEEE_BOUND:.0e}): TF32 is silently forced (TORCH_ALLOW_TF32_CUBLAS_OVERRIDE / NVIDIA_TF32_OVERRIDE?)"
    )
    if not is_native("tf32", torch.cuda.get_device_capability(cuda_device)):
        pytest.skip(f"no TF32 before compute capability {native_from('tf32')} (IEEE part passed)")
    if tf32_disabled():
        pytest.skip(f"{tf32_disabled()} (IEEE part passed)")
    tf32 = _fp32_matmul_error(cuda_device, "high")
    record_metric("gemm.tf32.error", tf32, "rel", bound=TF32_BAND[1], bound_kind="max")
    low, high = TF32_BAND
    assert low < tf32 < high, (
        f"FP32 matmul with precision 'high' has normalized error {tf32:.3e}, outside the TF32 band "
        f"({low:.0e}, {high:.0e}): TF32 was not used when asked (NVIDIA_TF32_OVERRIDE=0?) or is broken"
    )
