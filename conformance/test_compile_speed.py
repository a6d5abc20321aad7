"""torch.compile on GPU: compile time (recorded), correctness and speed-up over eager (gated):
fp16 inference, fp32 training, and a small CNN with mode="max-autotune" (PyTorch's release smoke test)."""

from __future__ import annotations

import pytest
import torch

from conformance.support.expectations.bounds import Gate, compile_speedup_gate
from conformance.support.probes.env_limits import timing_unreliable
from conformance.support.results.recorder import RecordMetric, RecordNote
from conformance.support.workloads.compile_speed import CompileTiming, run_compile_speed
from conformance.support.workloads.gemm_bench import device_identity
from pytorch_cuda_contract.metrics import spread

pytestmark = pytest.mark.gpu

# Normalized error compiled vs eager.  fp16 inference: output rounding (2^-11) through 4 blocks;
# fp32 training: reordered reductions; max-autotune CNN: Triton conv templates may use TF32.
ERROR_BOUND = {"inference": 1e-2, "training": 1e-4, "max_autotune_cnn": 1e-2}


@pytest.fixture(scope="module")
def compile_speed() -> dict[str, CompileTiming | str]:
    return run_compile_speed(torch.device("cuda", 0))


@pytest.mark.parametrize("case", list(ERROR_BOUND))
def test_compiled_matches_eager_and_is_timed(
    case: str, compile_speed: dict[str, CompileTiming | str], record_metric: RecordMetric, record_note: RecordNote
) -> None:
    timing = compile_speed[case]
    if isinstance(timing, str):
        pytest.skip(timing)
    eager, compiled = spread(timing.eager_ms), spread(timing.compiled_ms)
    speedup = float(eager["median"]) / float(compiled["median"])  # type: ignore[arg-type]
    stable = case in ("inference", "training")
    prefix = "compile." if stable else "compile_"
    unreliable = timing_unreliable(torch.device("cuda", 0))
    gate = compile_speedup_gate() if unreliable is None else Gate(None, None, f"recorded, not gated: {unreliable}")
    name = f"{prefix}speedup.{case}" if stable else f"{prefix}{case}_speedup"
    record_metric(name, speedup, "x", **gate.metric_fields())
    record_metric(f"{prefix}compile_s.{case}" if stable else f"{prefix}{case}_compile_s", timing.compile_s, "s")
    record_metric(f"compile_{case}_eager_ms", float(eager["median"]), "ms", **eager)  # type: ignore[arg-type]
    record_metric(f"compile_{case}_compiled_ms", float(compiled["median"]), "ms", **compiled)  # type: ignore[arg-type]
    record_metric(f"compile_{case}_error", timing.error, "rel", bound=ERROR_BOUND[case], bound_kind="max")
    record_note(f"device {device_identity(torch.device('cuda', 0))['name']}; speed-up: {gate.why}")
    assert timing.code_modules > 0, (
        f"torch.compile ({case}) produced no Inductor code on the first call: compilation is disabled "
        "(TORCHDYNAMO_DISABLE=1?) or fell back to eager"
    )
    assert timing.error < ERROR_BOUND[case], (
        f"torch.compile ({case}) differs from eager: normalized error {timing.error:.2e} >= {ERROR_BOUND[case]:.0e}"
    )
    problem = gate.violation(speedup)
    assert problem is None, (
        f"torch.compile ({case}) step {compiled['median']:.3f} ms vs eager {eager['median']:.3f} ms: speed-up "
        f"{problem}: the compiled code recompiles every call, runs a debug/fallback path, or its guards always fail"
    )
