"""Under the caching allocator off (a legitimate setting) the AMP, conv and SDPA checks judge a general bound,
never none (issue 52): shown holding on the H100's numbers under the setting and crossed by a real fault's."""

from __future__ import annotations

from conformance.support.expectations.bounds import (
    amp_speedup_gate_uncached,
    throughput_gate,
    uncached_sdpa_gate,
)
from pytorch_cuda_contract.peaks import lookup_peak

REASON = "allocations are uncached"
H100 = lookup_peak("NVIDIA H100 80GB HBM3")


def test_amp_under_the_uncached_allocator_is_judged_and_autocast_off_fails() -> None:
    gate = amp_speedup_gate_uncached(15.0, tensor_cores=True, reason=REASON)
    assert gate.lower is not None
    assert gate.violation(2.47) is None  # H100, caching-allocator-off control (issue 52)
    assert gate.violation(0.99) is not None  # autocast a no-op (H100, deterministic-autocast-disabled)
    assert gate.violation(15.0 * 1.5 + 1) is not None  # the ceiling of the same run's GEMM ratio still holds
    assert REASON in gate.why


def test_conv_datasheet_floor_holds_under_the_uncached_allocator() -> None:
    assert H100 is not None
    for dtype, measured in (("fp16", 301.0), ("bf16", 354.0)):
        gate = throughput_gate(H100.peak(dtype), 0.25)
        assert gate.lower is not None
        assert gate.violation(measured) is None, dtype
        assert gate.violation(60.0) is not None, dtype  # a conv without tensor-core kernels


def test_sdpa_under_the_uncached_allocator_is_judged_and_the_math_backend_fails() -> None:
    assert H100 is not None
    gate = uncached_sdpa_gate(H100.peak("fp16"), REASON)
    assert gate.lower is not None
    assert gate.violation(12.4) is not None  # the math backend (H100, deterministic-sdpa-fused-off)
    assert gate.violation(181.6) is None  # flash under deterministic mode, slower than the default's cuDNN
    assert uncached_sdpa_gate(None, REASON).lower is None
