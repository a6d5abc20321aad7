"""What PyTorch's own release smoke test checks: cuDNN runtime vs compile version, device-side asserts
propagate, cuSOLVER / cuFFT / cuRAND work (against the CPU's LAPACK and FFT, and the statistics of their
distributions), the cuBLAS version matches the CUDA major (NVSHMEM: recorded in the environment)."""

from __future__ import annotations

import math
import subprocess
import sys
from dataclasses import dataclass

import pytest
import torch

from conformance.support.probes.inventory import cublas_version, distribution_version, nvshmem_available
from conformance.support.results.recorder import RecordMetric, RecordNote
from conformance.support.workloads.numerics import normalized_error
from pytorch_cuda_contract.manifest import Manifest

SVD_BOUND = 1e-10  # float64 64x64: rounding alone gives about 1e-15
# cuFFT vs pocketfft, 4096 points: rounding alone gives about 1e-16 in float64, 1e-7 in float32.
FFT_BOUND = {"float64": 1e-12, "float32": 1e-5}
RANDOM_SAMPLES = 1 << 20
SIGMAS = 6.0  # a correct generator lands outside 6 standard errors with p ~ 2e-9 per statistic
HISTOGRAM_BINS = 64
CUBLAS_WHEELS = ("nvidia-cublas", "nvidia-cublas-cu13", "nvidia-cublas-cu12", "nvidia-cublas-cu11")
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


@dataclass(frozen=True)
class Statistic:
    """A statistic of random samples and the interval a correct generator keeps it in (None: unbounded side)."""

    name: str
    value: float
    low: float | None
    high: float | None

    @property
    def ok(self) -> bool:  # NaN is never ok
        return (self.low is None or self.value >= self.low) and (self.high is None or self.value <= self.high)

    def metric_fields(self) -> dict[str, object]:
        if self.low is None:
            return {"bound": self.high, "bound_kind": "max"}
        return {"bound": self.low, "bound_kind": "min", "ceiling": self.high}

    def __str__(self) -> str:
        return f"{self.name} = {self.value:.6g}, outside [{self.low}, {self.high}]"


def _band(name: str, value: float, centre: float, standard_error: float) -> Statistic:
    return Statistic(name, value, centre - SIGMAS * standard_error, centre + SIGMAS * standard_error)


def chi_squared_threshold(dof: int, z: float = SIGMAS) -> float:
    """The chi-squared value exceeded with the normal tail probability of ``z`` (Wilson-Hilferty)."""
    c = 2.0 / (9.0 * dof)
    return dof * (1.0 - c + z * math.sqrt(c)) ** 3


def _correlation(a: torch.Tensor, b: torch.Tensor) -> float:
    a, b = a - a.mean(), b - b.mean()
    return float((a * b).mean() / (a.square().mean() * b.square().mean()).sqrt())


def histogram(x: torch.Tensor, bins: int) -> torch.Tensor:
    """Counts of ``x`` in ``bins`` equal bins of [0, 1] (values outside are left out, as torch.histc does), by a
    sort and a search: deterministic, so it runs under torch.use_deterministic_algorithms(True), where CUDA's
    histc refuses to."""
    inside = x[(x >= 0) & (x <= 1)]
    index = torch.sort((inside * bins).floor().clamp(max=bins - 1).long()).values
    edges = torch.arange(bins + 1, device=x.device)
    return torch.searchsorted(index, edges).diff()


def uniform_statistics(samples: torch.Tensor) -> list[Statistic]:
    """U[0,1): all in range, mean 1/2, variance 1/12, a flat 64-bin histogram, no lag-1 correlation."""
    x = samples.detach().flatten().double()
    n = x.numel()
    counts = histogram(x, HISTOGRAM_BINS).double()
    expected = n / HISTOGRAM_BINS
    return [
        Statistic("uniform_in_range_fraction", float(((x >= 0) & (x < 1)).double().mean()), 1.0, None),
        _band("uniform_mean", float(x.mean()), 0.5, math.sqrt(1 / 12 / n)),
        _band("uniform_variance", float(x.var()), 1 / 12, math.sqrt(1 / 180 / n)),  # Var((U-1/2)^2) = 1/180
        Statistic("uniform_chi2_64_bins", float(((counts - expected).square() / expected).sum()), None,
                  chi_squared_threshold(HISTOGRAM_BINS - 1)),
        _band("uniform_lag1_correlation", _correlation(x[:-1], x[1:]), 0.0, 1 / math.sqrt(n)),
    ]  # fmt: skip


def normal_statistics(samples: torch.Tensor) -> list[Statistic]:
    """N(0,1): mean 0, standard deviation 1, and the share of |x| > 3 (the tails a broken transform loses)."""
    x = samples.detach().flatten().double()
    n = x.numel()
    tail = math.erfc(3 / math.sqrt(2))  # P(|Z| > 3) = 0.0027
    return [
        _band("normal_mean", float(x.mean()), 0.0, 1 / math.sqrt(n)),
        _band("normal_std", float(x.std()), 1.0, 1 / math.sqrt(2 * n)),
        _band("normal_tail_fraction", float((x.abs() > 3).double().mean()), tail, math.sqrt(tail * (1 - tail) / n)),
    ]


def seed_statistics(first: torch.Tensor, again: torch.Tensor, other: torch.Tensor) -> list[Statistic]:
    """``again`` repeats ``first``'s seed (bit-identical), ``other`` has another seed (new, uncorrelated numbers)."""
    n = first.numel()
    return [
        Statistic("same_seed_mismatch_fraction", float((first != again).double().mean()), None, 0.0),
        Statistic("other_seed_equal_fraction", float((first == other).double().mean()), None, 1e-3),
        _band("other_seed_correlation", _correlation(first.double(), other.double()), 0.0, 1 / math.sqrt(n)),
    ]


@pytest.mark.cpu
def test_cudnn_runtime_matches_compile_version(record_note: RecordNote) -> None:
    """Fails when `torch._C._cudnn` runtime major.minor differs from `getCompileVersion()` (patch differences are
    noted)."""
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
def test_cusolver_svd(cuda_device: torch.device, record_metric: RecordMetric) -> None:
    """cuSOLVER's float64 SVD: it reconstructs the matrix, its factors are orthogonal and its singular values are
    LAPACK's on the CPU (an independent implementation)."""
    a = torch.randn(64, 64, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    u, s, vh = torch.linalg.svd(a.to(cuda_device))
    identity = torch.eye(64, device=cuda_device, dtype=torch.float64)
    errors = {
        "reconstruction": normalized_error(u @ torch.diag(s) @ vh, a.to(cuda_device)),
        "orthogonality": max(float((u.T @ u - identity).abs().max()), float((vh @ vh.T - identity).abs().max())),
        "singular_values_vs_cpu": normalized_error(s.cpu(), torch.linalg.svdvals(a)),
    }
    for name, error in errors.items():
        record_metric(f"svd_{name}_error", error, "rel", bound=SVD_BOUND, bound_kind="max")
    bad = {name: f"{error:.2e}" for name, error in errors.items() if not error < SVD_BOUND}
    assert not bad, f"cuSOLVER float64 svd of a 64x64 matrix is wrong (errors above {SVD_BOUND:.0e}): {bad}"


@pytest.mark.gpu
def test_cufft_rfft(cuda_device: torch.device, record_metric: RecordMetric) -> None:
    """cuFFT's rfft against the CPU's pocketfft (an independent implementation) in float64 and float32, and a sine
    whose spectrum is known exactly."""
    signal = torch.randn(4096, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    problems = []
    for name, bound in FFT_BOUND.items():
        dtype = getattr(torch, name)
        rounded = signal.to(dtype)  # the reference transforms the same rounded input in float64
        on_gpu = torch.view_as_real(torch.fft.rfft(rounded.to(cuda_device)).cpu())
        error = normalized_error(on_gpu, torch.view_as_real(torch.fft.rfft(rounded.double())))
        record_metric(f"fft_{name}_error_vs_cpu", error, "rel", bound=bound, bound_kind="max")
        if not error < bound:
            problems.append(f"{name} rfft differs from the CPU's by {error:.2e} (bound {bound:.0e})")
    t = torch.arange(256, device=cuda_device, dtype=torch.float64)
    spectrum = torch.fft.rfft(torch.sin(2 * math.pi * 5 * t / 256)).abs().cpu()
    exact = torch.zeros_like(spectrum)
    exact[5] = 128.0  # n/2 at the sine's frequency, 0 elsewhere
    sine_error = float((spectrum - exact).abs().max()) / 128.0
    record_metric("fft_sine_spectrum_error", sine_error, "rel", bound=FFT_BOUND["float64"], bound_kind="max")
    if not sine_error < FFT_BOUND["float64"]:
        problems.append(f"a 5-cycle sine's spectrum is off by {sine_error:.2e} (peak at bin {int(spectrum.argmax())})")
    assert not problems, "cuFFT computes wrong spectra: " + "; ".join(problems)


@pytest.mark.gpu
def test_curand_statistics(cuda_device: torch.device, record_metric: RecordMetric) -> None:
    """cuRAND's uniform and normal samples have the statistics of their distributions (bounds at 6 standard
    errors of 2^20 samples, or a chi-squared p-value of about 1e-9); another seed gives other numbers, the same
    seed the same ones."""
    uniform = torch.rand(RANDOM_SAMPLES, device=cuda_device, generator=_generator(cuda_device, 3))
    normal = torch.randn(RANDOM_SAMPLES, device=cuda_device, generator=_generator(cuda_device, 3))
    again = torch.rand(RANDOM_SAMPLES, device=cuda_device, generator=_generator(cuda_device, 3))
    other = torch.rand(RANDOM_SAMPLES, device=cuda_device, generator=_generator(cuda_device, 4))
    checks = [*uniform_statistics(uniform), *normal_statistics(normal), *seed_statistics(uniform, again, other)]
    for check in checks:
        record_metric(f"curand_{check.name}", check.value, "1", **check.metric_fields())
    bad = [str(check) for check in checks if not check.ok]
    assert not bad, "cuRAND's samples are not random as promised: " + "; ".join(bad)


def _generator(device: torch.device, seed: int) -> torch.Generator:
    return torch.Generator(device=device).manual_seed(seed)


def cublas_wheel(cuda_major: int, manifest: Manifest | None) -> tuple[str, str] | None:
    """(name, version) of the installed nvidia cuBLAS wheel of this CUDA major: the manifest's name first."""
    named = manifest.wheels.get("cublas") if manifest is not None and manifest.wheels else None
    for name in (*([named] if named else []), *CUBLAS_WHEELS):
        version = distribution_version(name)
        if version is not None and version.split(".")[0] == str(cuda_major):
            return name, version
    return None


@pytest.mark.gpu
def test_cublas_version_matches_cuda_major(
    cuda_device: torch.device, optional_manifest: Manifest | None, record_metric: RecordMetric, record_note: RecordNote
) -> None:
    """The loaded cuBLAS has torch's CUDA major, and the major.minor of the nvidia cuBLAS wheel installed (a same-major
    cuBLAS of a CUDA toolkit on the loader path shadows the wheel's without a soname clash)."""
    a = torch.ones(64, 64, device=cuda_device)
    float((a @ a).sum())  # loads cuBLAS
    version = cublas_version()
    record_note(f"NVSHMEM compiled in: {nvshmem_available()}")
    assert version is not None, "cannot read the cuBLAS version (cublasGetProperty) of the loaded libcublas"
    record_metric("cublas_version", version, "int")
    cuda_major = int(str(torch.version.cuda).split(".")[0])
    loaded = f"{version // 10000}.{version // 100 % 100}"
    assert version // 10000 == cuda_major, (
        f"torch built for CUDA {torch.version.cuda} loaded cuBLAS {loaded}: a foreign cuBLAS shadows the wheel's"
    )
    wheel = cublas_wheel(cuda_major, optional_manifest)
    if wheel is None:
        record_note(f"no nvidia cuBLAS wheel for CUDA {cuda_major} installed: cuBLAS {loaded} not compared to one")
        return
    name, wheel_version = wheel
    record_note(f"{name}=={wheel_version}, loaded cuBLAS {loaded}")
    assert wheel_version.split(".")[:2] == loaded.split("."), (
        f"the loaded cuBLAS is {loaded} but the installed wheel is {name}=={wheel_version}: a foreign cuBLAS (a CUDA "
        "toolkit's, on LD_LIBRARY_PATH or in the loader cache) shadows the wheel's; remove it from the loader path"
    )
