"""The seed article's claims, checked against one run's measurements. Standard library only.

Each claim gets the measured value and a verdict: confirmed, refuted, or not measurable here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from pytorch_cuda_contract.gpu import is_native, native_from
from pytorch_cuda_contract.results_file import ConformanceResults, Gpu

CONFIRMED: Final = "confirmed"
REFUTED: Final = "refuted"
NOT_MEASURABLE: Final = "not measurable here"

FP16_GEMM: Final = "FP16 GEMM up to 3x FP32"
HALVES_MEMORY: Final = "half precision halves memory"
COMPILE_GAIN: Final = "torch.compile gives +10-20%"
BF16_NO_SCALER: Final = "BF16 needs no GradScaler"
CC_THRESHOLDS: Final = f"FP16 tensor cores need cc >= {native_from('fp16')}, BF16 needs cc >= {native_from('bf16')}"

# Tolerances: "up to 3x" still holds at 3.3x; "halves" holds from 40% saved;
# "+10-20%" holds from 1.08x to 1.22x; bf16 without a scaler converges when its final
# loss is within 10% of fp32's.
FP16_RATIO_MAX: Final = 3.3
MEMORY_SAVING_MIN: Final = 40.0
COMPILE_RANGE: Final = (1.08, 1.22)
LOSS_TOLERANCE: Final = 0.10


@dataclass(frozen=True)
class Claim:
    claim: str
    measured: str
    verdict: str


def _fp16_gemm(r: ConformanceResults, gpu: Gpu | None) -> Claim:
    ratio = r.number("gemm.fp16.x_fp32")
    fp16, fp32 = r.number("gemm.fp16.tflops"), r.number("gemm.fp32.tflops")
    if ratio is None and fp16 is not None and fp32:
        ratio = fp16 / fp32
    if ratio is None:
        return Claim(FP16_GEMM, "fp16 or fp32 GEMM throughput not measured", NOT_MEASURABLE)
    sizes = {r.number(f"gemm.{d}.size") for d in ("fp16", "fp32")} - {None}
    note = " (fp16 and fp32 measured at different sizes)" if len(sizes) > 1 else ""
    measured = f"fp16 GEMM {ratio:.1f}x fp32{note}"
    if ratio <= 1.0:
        return Claim(FP16_GEMM, measured + ": fp16 is not faster at all", REFUTED)
    if ratio > FP16_RATIO_MAX:
        return Claim(FP16_GEMM, measured + ": far beyond 3x, the claim understates it", REFUTED)
    return Claim(FP16_GEMM, measured, CONFIRMED)


def _memory(r: ConformanceResults, gpu: Gpu | None) -> Claim:
    savings = {d: r.number(f"amp.mem_saving_pct.{d}") for d in ("fp16", "bf16")}
    known = {d: v for d, v in savings.items() if v is not None}
    if not known:
        return Claim(HALVES_MEMORY, "AMP peak memory not measured", NOT_MEASURABLE)
    measured = ", ".join(f"{d} saves {v:.0f}% of fp32's peak memory" for d, v in known.items())
    verdict = CONFIRMED if min(known.values()) >= MEMORY_SAVING_MIN else REFUTED
    return Claim(HALVES_MEMORY, measured + " (training step, peak allocated)", verdict)


def _compile(r: ConformanceResults, gpu: Gpu | None) -> Claim:
    """Judged on the transformer LM's training step when measured (the workload the article means), else on the
    suite's small training step, else on its inference step; the other rows are shown beside it."""
    rows = (
        ("transformer LM training", r.number("compile.speedup.lm_training")),
        ("small-model training", r.number("compile.speedup.training")),
        ("inference", r.number("compile.speedup.inference")),
    )
    known = [(name, value) for name, value in rows if value is not None]
    if not known:
        return Claim(COMPILE_GAIN, "compiled vs eager step time not measured", NOT_MEASURABLE)
    parts = [f"{name} {value - 1:+.0%}" for name, value in known]
    key = known[0][1]
    verdict = CONFIRMED if COMPILE_RANGE[0] <= key <= COMPILE_RANGE[1] else REFUTED
    return Claim(COMPILE_GAIN, ", ".join(parts) + f" (judged on {known[0][0]})", verdict)


def _bf16_scaler(r: ConformanceResults, gpu: Gpu | None) -> Claim:
    bf16, fp32 = r.number("training.final_loss.bf16"), r.number("training.final_loss.fp32")
    if bf16 is None or not fp32:
        return Claim(BF16_NO_SCALER, "bf16 training without GradScaler not measured", NOT_MEASURABLE)
    off = abs(bf16 / fp32 - 1.0)
    measured = f"bf16 without GradScaler ends {off:.1%} from fp32's final loss ({bf16:.4g} vs {fp32:.4g})"
    overflow = r.number("range.bf16_overflow")
    if overflow:
        return Claim(BF16_NO_SCALER, measured + "; but bf16 overflowed", REFUTED)
    unscaled = r.number("amp.fp16_zero_grad_fraction.unscaled")
    if unscaled:
        measured += f"; fp16 without it lost {unscaled:.0%} of its gradients to underflow"
    return Claim(BF16_NO_SCALER, measured, CONFIRMED if off <= LOSS_TOLERANCE else REFUTED)


def _cc(r: ConformanceResults, gpu: Gpu | None) -> Claim:
    cc = gpu.cc if gpu else None
    if gpu is None or cc is None:
        return Claim(CC_THRESHOLDS, "no GPU with a known compute capability", NOT_MEASURABLE)
    expected = {d: is_native(d, cc) for d in ("fp16", "bf16")}
    seen = {d: r.dtypes[d].verdict == "native" for d in expected if d in r.dtypes}
    if not seen:
        check = next((t for t in r.tests.values() if t.name == "test_bf16_native_exactly_on_ampere_and_newer"), None)
        if check is None or check.outcome != "passed":
            return Claim(CC_THRESHOLDS, f"cc {gpu.compute_capability}: native dtypes not measured", NOT_MEASURABLE)
        seen = {"bf16": expected["bf16"]}  # the suite's own check passed: native bf16 exactly from its cc
    shown = ", ".join(f"{d} {'native' if v else 'not native'}" for d, v in seen.items())
    agree = all(expected[d] == v for d, v in seen.items())
    return Claim(CC_THRESHOLDS, f"cc {gpu.compute_capability}: {shown}", CONFIRMED if agree else REFUTED)


CHECKS: Final[tuple[Callable[[ConformanceResults, Gpu | None], Claim], ...]] = (
    _fp16_gemm,
    _memory,
    _compile,
    _bf16_scaler,
    _cc,
)


def check_claims(results: ConformanceResults, gpu: Gpu | None) -> tuple[Claim, ...]:
    return tuple(check(results, gpu) for check in CHECKS)
