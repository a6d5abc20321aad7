"""What PyTorch's own release smoke test checks: cuDNN runtime vs compile version, device-side asserts
propagate, cuSOLVER / cuFFT / cuRAND work, the cuBLAS version matches the CUDA major (NVSHMEM: recorded
in the environment)."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
import torch

from conformance.support.probes.inventory import cublas_version, nvshmem_available
from conformance.support.results.recorder import RecordMetric, RecordNote

ASSERT_SCRIPT = """
import torch
flag = torch.zeros((), device="cuda")
try:
    torch._assert_async(flag)
    torch.cuda.synchronize()
except RuntimeError as exc:
    print("RAISED:", str(exc).splitlines()[0])
else:
    print("NO ERROR")
"""


@pytest.mark.cpu
def test_cudnn_runtime_matches_compile_version(record_note: RecordNote) -> None:
    cudnn = getattr(torch._C, "_cudnn", None)
    if torch.version.cuda is None or cudnn is None:
        pytest.skip(f"torch {torch.__version__} has no cuDNN (CPU-only build)")
    compiled = tuple(int(part) for part in cudnn.getCompileVersion())
    runtime = cudnn.getRuntimeVersion() if hasattr(cudnn, "getRuntimeVersion") else None
    record_note(f"cuDNN compiled {'.'.join(map(str, compiled))}, runtime {runtime}")
    assert runtime is not None, "torch._C._cudnn.getRuntimeVersion() is missing"
    loaded = tuple(int(part) for part in runtime)
    shown = ".".join(map(str, compiled)), ".".join(map(str, loaded))
    # cuDNN 9 keeps its API and ABI across minor releases: a runtime of the same major and at least the
    # compile version is what torch itself accepts (the cu128 wheels: built with 9.8.0, run on 9.10.2).
    compatible = loaded[0] == compiled[0] and loaded >= compiled
    assert compatible, (
        f"torch was built against cuDNN {shown[0]} but loads {shown[1]} (needs the same major and at least "
        f"{shown[0]}): install the nvidia-cudnn wheel torch depends on, or remove the foreign libcudnn on the "
        "loader path"
    )
    if loaded != compiled:
        record_note(
            f"cuDNN runtime {shown[1]} is newer than the {shown[0]} torch was built with (same major): accepted"
        )


@pytest.mark.gpu
def test_device_side_assert_propagates(cuda_device: torch.device) -> None:
    """torch._assert_async on a zero tensor must raise a CUDA error (run in a subprocess: it poisons the context)."""
    result = subprocess.run([sys.executable, "-c", ASSERT_SCRIPT], capture_output=True, text=True, timeout=180)
    output = (result.stdout + result.stderr).strip()
    assert "RAISED:" in result.stdout, (
        f"a failing device-side assert did not raise (exit {result.returncode}): {output[-1500:]}: CUDA errors "
        "are not propagated to Python"
    )


@pytest.mark.gpu
def test_cusolver_cufft_curand(cuda_device: torch.device, record_metric: RecordMetric) -> None:
    generator = torch.Generator(device=cuda_device).manual_seed(7)
    a = torch.randn(64, 64, device=cuda_device, generator=generator, dtype=torch.float64)
    u, s, vh = torch.linalg.svd(a)
    svd_error = float(torch.linalg.matrix_norm(u @ torch.diag(s) @ vh - a) / torch.linalg.matrix_norm(a))
    record_metric("svd_reconstruction_error", svd_error, "rel", bound=1e-10, bound_kind="max")
    assert svd_error < 1e-10, f"cuSOLVER svd does not reconstruct the matrix: relative error {svd_error:.2e}"
    t = torch.arange(256, device=cuda_device, dtype=torch.float32)
    spectrum = torch.fft.rfft(torch.sin(2 * math.pi * 5 * t / 256)).abs()
    assert int(spectrum.argmax()) == 5, f"cuFFT puts a 5-cycle sine at bin {int(spectrum.argmax())}, not 5"
    first = torch.rand(1 << 16, device=cuda_device, generator=torch.Generator(device=cuda_device).manual_seed(3))
    again = torch.rand(1 << 16, device=cuda_device, generator=torch.Generator(device=cuda_device).manual_seed(3))
    mean = float(first.mean())
    record_metric("curand_uniform_mean", mean, "1", bound=0.49, bound_kind="min", ceiling=0.51)
    assert torch.equal(first, again), "cuRAND with the same seed gave different numbers"
    assert abs(mean - 0.5) < 0.01, f"cuRAND uniform mean {mean:.4f} is not 0.5"


@pytest.mark.gpu
def test_cublas_version_matches_cuda_major(
    cuda_device: torch.device, record_metric: RecordMetric, record_note: RecordNote
) -> None:
    a = torch.ones(64, 64, device=cuda_device)
    float((a @ a).sum())  # loads cuBLAS
    version = cublas_version()
    record_note(f"NVSHMEM compiled in: {nvshmem_available()}")
    assert version is not None, "cannot read the cuBLAS version (cublasGetProperty) of the loaded libcublas"
    record_metric("cublas_version", version, "int")
    cuda_major = int(str(torch.version.cuda).split(".")[0])
    assert version // 10000 == cuda_major, (
        f"torch built for CUDA {torch.version.cuda} loaded cuBLAS {version // 10000}.{version // 100 % 100}: "
        "a foreign cuBLAS shadows the wheel's"
    )
