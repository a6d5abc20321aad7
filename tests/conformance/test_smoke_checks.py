"""The cuSOLVER / cuFFT / cuRAND checks and the driver-requirement skip, run on the CPU: the correct libraries pass,
and the faults of fault_coverage/patches (a skewed or seed-ignoring generator, a low-precision SVD or FFT) fail."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from pytorch_cuda_contract.manifest import parse_manifest
from tests.support.suite_run import manifest_document, run_suite, write_manifest

with warnings.catch_warnings():  # the suite registers its cpu/gpu markers in its own conftest, not here
    warnings.simplefilter("ignore", pytest.PytestUnknownMarkWarning)
    from conformance import test_smoke
    from conformance.test_smoke import (
        RANDOM_SAMPLES,
        chi_squared_threshold,
        cublas_wheel,
        normal_statistics,
        seed_statistics,
        uniform_statistics,
    )

CPU = torch.device("cpu")


def _failing(statistics: list[test_smoke.Statistic]) -> list[str]:
    return [s.name for s in statistics if not s.ok]


def _uniform(seed: int = 3) -> torch.Tensor:
    return torch.rand(RANDOM_SAMPLES, generator=torch.Generator().manual_seed(seed))


def test_chi_squared_threshold_matches_the_table() -> None:
    assert chi_squared_threshold(63, 2.326) == pytest.approx(92.01, abs=0.2)  # chi2 0.99 quantile, 63 dof
    assert chi_squared_threshold(63, 0.0) == pytest.approx(62.33, abs=0.1)  # the median
    assert 150 < chi_squared_threshold(63) < 165  # z = 6: p about 1e-9


def test_good_generator_passes_and_broken_ones_fail() -> None:
    x = _uniform()
    assert _failing(uniform_statistics(x)) == []
    assert "uniform_mean" in _failing(uniform_statistics(x.pow(1.02)))  # the curand_skewed patch
    assert "uniform_in_range_fraction" in _failing(uniform_statistics(x + 0.5))
    assert "uniform_chi2_64_bins" in _failing(uniform_statistics(torch.where(x < 0.1, x + 0.1, x)))
    assert "uniform_variance" in _failing(uniform_statistics(0.5 + (x - 0.5) * 0.99))
    smoothed = (x + x.roll(1)) / 2  # neighbours share a draw: lag-1 correlation 0.5
    assert "uniform_lag1_correlation" in _failing(uniform_statistics(smoothed))
    z = torch.randn(RANDOM_SAMPLES, generator=torch.Generator().manual_seed(3))
    assert _failing(normal_statistics(z)) == []
    assert _failing(normal_statistics(z + 0.01)) == ["normal_mean"]
    assert "normal_std" in _failing(normal_statistics(z * 1.01))
    assert _failing(normal_statistics(z.clamp(-3, 3))) == ["normal_tail_fraction"]
    assert not math.isnan(normal_statistics(z)[1].value)


def test_seed_statistics() -> None:
    x = _uniform(3)
    assert _failing(seed_statistics(x, _uniform(3), _uniform(4))) == []
    assert _failing(seed_statistics(x, _uniform(4), _uniform(5))) == ["same_seed_mismatch_fraction"]
    assert "other_seed_equal_fraction" in _failing(seed_statistics(x, _uniform(3), _uniform(3)))
    assert "other_seed_correlation" in _failing(seed_statistics(x, x, (x + _uniform(4)) / 2))


def test_statistic_metric_fields() -> None:
    two_sided = test_smoke.Statistic("m", 0.5, 0.4, 0.6)
    assert two_sided.metric_fields() == {"bound": 0.4, "bound_kind": "min", "ceiling": 0.6}
    assert test_smoke.Statistic("c", 1.0, None, 2.0).metric_fields() == {"bound": 2.0, "bound_kind": "max"}
    assert not test_smoke.Statistic("n", float("nan"), 0.0, 1.0).ok


class Metrics:
    def __init__(self) -> None:
        self.values: dict[str, dict[str, Any]] = {}

    def __call__(self, name: str, value: float | str, unit: str, **fields: object) -> None:
        self.values[name] = {"value": value, **fields}


def _run(check: Callable[..., None]) -> Metrics:
    metrics = Metrics()
    check(CPU, metrics)
    return metrics


def test_the_checks_pass_on_correct_libraries() -> None:
    """The check bodies on the CPU (CPU LAPACK/FFT against themselves here; on a GPU the same code compares cuSOLVER
    and cuFFT with them): every number is recorded with its bound."""
    svd = _run(test_smoke.test_cusolver_svd)
    fft = _run(test_smoke.test_cufft_rfft)
    curand = _run(test_smoke.test_curand_statistics)
    for metrics in (svd, fft, curand):
        assert metrics.values
        assert all(entry.get("bound") is not None for entry in metrics.values.values())
    assert len(curand.values) == 11


def test_the_checks_fail_on_the_modelled_faults(monkeypatch: pytest.MonkeyPatch) -> None:
    rand, randn, svd, rfft = torch.rand, torch.randn, torch.linalg.svd, torch.fft.rfft
    monkeypatch.setattr(torch, "rand", lambda *a, **k: rand(*a, **k).pow(1.02))
    with pytest.raises(AssertionError, match="uniform_mean"):
        _run(test_smoke.test_curand_statistics)
    monkeypatch.setattr(torch, "rand", lambda *a, **k: rand(*a, **{**k, "generator": None}))
    monkeypatch.setattr(torch, "randn", lambda *a, **k: randn(*a, **{**k, "generator": None}))
    with pytest.raises(AssertionError, match="same_seed_mismatch_fraction"):
        _run(test_smoke.test_curand_statistics)

    def low_svd(a: torch.Tensor) -> Any:
        u, s, vh = svd(a.float())
        return u.double(), s.double(), vh.double()

    monkeypatch.setattr(torch.linalg, "svd", low_svd)
    with pytest.raises(AssertionError, match="cuSOLVER float64 svd"):
        _run(test_smoke.test_cusolver_svd)

    def low_rfft(x: torch.Tensor) -> torch.Tensor:  # the cufft_low_precision patch's float64 half
        return rfft(x.float()).to(torch.complex128) if x.dtype == torch.float64 else rfft(x)

    monkeypatch.setattr(torch.fft, "rfft", low_rfft)
    with pytest.raises(AssertionError, match="cuFFT computes wrong spectra"):
        _run(test_smoke.test_cufft_rfft)


def test_cublas_wheel_prefers_the_manifest_and_the_cuda_major(monkeypatch: pytest.MonkeyPatch) -> None:
    installed = {"nvidia-cublas": "13.1.0.3", "nvidia-cublas-cu12": "12.8.4.1", "custom-cublas": "12.9.1.4"}
    monkeypatch.setattr(test_smoke, "distribution_version", installed.get)
    assert cublas_wheel(13, None) == ("nvidia-cublas", "13.1.0.3")
    assert cublas_wheel(12, None) == ("nvidia-cublas-cu12", "12.8.4.1")
    manifest = parse_manifest(manifest_document(wheels={"cublas": "custom-cublas"}))
    assert cublas_wheel(12, manifest) == ("custom-cublas", "12.9.1.4")
    assert cublas_wheel(11, manifest) is None


FAKE_PYNVML = """
def nvmlInit(): pass
def nvmlShutdown(): pass
def nvmlSystemGetDriverVersion(): return "580.95.05"
"""


def _fake_nvml(tmp_path: Path, patch: str | None = None) -> dict[str, str]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "pynvml.py").write_text(FAKE_PYNVML)
    if patch is not None:
        source = Path(__file__).resolve().parents[2] / "fault_coverage" / "patches" / f"{patch}.py"
        (site / "sitecustomize.py").write_text(source.read_text())
    return {"PYTHONPATH": str(site)}


def _driver_check_message_under_an_old_driver(tmp_path: Path, document: dict[str, Any]) -> str:
    """The driver check passes with the fake NVML's 580.95.05, and fails under the nvml_reports_old_driver fault
    (its patch as sitecustomize): that failure's message."""
    manifest = write_manifest(tmp_path, document)
    control = run_suite(tmp_path, "--manifest", str(manifest), keyword="driver_supports", env=_fake_nvml(tmp_path))
    assert control.outcome("test_driver_supports_cuda_runtime") == "passed", control.output[-3000:]
    faulty = tmp_path / "fault"
    faulty.mkdir()
    env = _fake_nvml(faulty, patch="nvml_reports_old_driver")
    run = run_suite(faulty, "--manifest", str(manifest), keyword="driver_supports", env=env)
    assert run.outcome("test_driver_supports_cuda_runtime") == "failed", run.output[-3000:]
    return run.message("test_driver_supports_cuda_runtime")


def test_driver_check_judges_a_cuda_newer_than_the_table(tmp_path: Path) -> None:
    """A CUDA past the built-in table is judged against its newest older release (a lower bound), not skipped."""
    document = manifest_document(min_driver=None, cuda_compat_driver=None)
    document["pins"] = {**document["pins"], "cuda": "14.9"}
    assert "stops at CUDA 13.0" in _driver_check_message_under_an_old_driver(tmp_path, document)


def test_nvml_old_driver_patch_fails_the_driver_check(tmp_path: Path) -> None:
    message = _driver_check_message_under_an_old_driver(tmp_path, manifest_document())
    assert "driver 470.57.02 is too old for CUDA 12.8" in message
