"""The normalized error and the TFLOP/s of a GEMM."""

from __future__ import annotations

import pytest
import torch

from conformance.support.workloads.numerics import gemm_tflops, normalized_error


def test_normalized_error_and_tflops() -> None:
    reference = torch.tensor([3.0, 4.0])
    assert normalized_error(reference, reference) == 0.0
    assert normalized_error(torch.tensor([3.0, 4.5]), reference) == pytest.approx(0.1)
    assert gemm_tflops(8192, 8192, 8192, 1.0) == pytest.approx(2 * 8192**3 / 1e-3 / 1e12)
