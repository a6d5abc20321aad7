"""Which precision to train in on this GPU with this image, computed from a results file.

Standard library only: the in-image summary and the host report both use it, so the
recommendation is made in one place. Every line carries the numbers behind it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pytorch_cuda_contract.claims import Claim, check_claims
from pytorch_cuda_contract.gpu import verdict_by_capability
from pytorch_cuda_contract.peaks import lookup_peak
from pytorch_cuda_contract.results_file import ConformanceResults, Gpu

DTYPES: Final = ("fp32", "tf32", "fp16", "bf16")
# bf16 counts as "at least as fast as fp16" within this fraction (run-to-run noise).
SPEED_TOLERANCE: Final = 0.03
# torch.compile "pays" when the compiled training step is at least this much faster.
COMPILE_PAYS: Final = 1.05


@dataclass(frozen=True)
class DtypeRow:
    dtype: str
    verdict: str  # native | emulated | unsupported | unknown
    verdict_source: str  # "measured" (the run's dtypes block) or "compute capability"
    gemm_tflops: float | None
    peak_tflops: float | None
    x_fp32: float | None
    error: float | None
    conv_tflops: float | None
    sdpa_tflops: float | None
    mamf_tflops: float | None  # the best of the suite's shape search (maximum achievable matmul FLOPS)

    @property
    def pct_peak(self) -> float | None:
        if self.gemm_tflops is None or not self.peak_tflops:
            return None
        return 100.0 * self.gemm_tflops / self.peak_tflops

    @property
    def pct_mamf(self) -> float | None:
        """The fixed GEMM as a % of MAMF. Since the suite counts its fixed GEMM among MAMF's candidates it is at most
        100; results from before that (the search alone) can exceed 100: on an H100 the search, run after the GEMM
        benches, measured below the fixed 8192^3 GEMM."""
        if self.gemm_tflops is None or not self.mamf_tflops:
            return None
        return 100.0 * self.gemm_tflops / self.mamf_tflops


@dataclass(frozen=True)
class AmpRow:
    dtype: str
    step_ms: float | None
    speedup: float | None
    peak_mem_mib: float | None
    mem_saving_pct: float | None


@dataclass(frozen=True)
class Line:
    topic: str  # precision | grad_scaler | tf32 | compile
    choice: str | None
    text: str
    numbers: str


@dataclass(frozen=True)
class Assessment:
    gpu: Gpu | None
    dtypes: tuple[DtypeRow, ...]
    amp: tuple[AmpRow, ...]
    compile: dict[str, float | None]
    recommendation: tuple[Line, ...]
    claims: tuple[Claim, ...]

    def row(self, dtype: str) -> DtypeRow | None:
        return next((r for r in self.dtypes if r.dtype == dtype), None)

    def amp_row(self, dtype: str) -> AmpRow | None:
        return next((r for r in self.amp if r.dtype == dtype), None)

    @property
    def choice(self) -> str | None:
        return next((line.choice for line in self.recommendation if line.topic == "precision"), None)


def fmt(value: float | None, digits: int = 3) -> str:
    """A number for people: 3 significant digits, '-' when missing."""
    if value is None:
        return "-"
    if value != 0 and (abs(value) < 1e-2 or abs(value) >= 1e5):
        return f"{value:.1e}"
    return f"{value:.{digits}g}" if abs(value) < 10**digits else f"{value:.0f}"


def _verdict_by_cc(dtype: str, gpu: Gpu) -> str:
    cc = gpu.cc
    return "unknown" if cc is None else verdict_by_capability(dtype, cc)


def _dtype_row(results: ConformanceResults, gpu: Gpu, dtype: str) -> DtypeRow:
    measured = results.dtypes.get(dtype)
    gemm = results.measurement(f"gemm.{dtype}.tflops")
    peak = gemm.peak if gemm is not None else None
    if peak is None and gemm is None:  # not measured: the datasheet's peak, for the table
        spec = lookup_peak(gpu.name)
        peak = spec.peak(dtype) if spec else None
    fp32 = results.number("gemm.fp32.tflops")
    x_fp32 = results.number(f"gemm.{dtype}.x_fp32")
    if x_fp32 is None and gemm is not None and gemm.number is not None and fp32:
        x_fp32 = gemm.number / fp32
    return DtypeRow(
        dtype=dtype,
        verdict=measured.verdict if measured else _verdict_by_cc(dtype, gpu),
        verdict_source="measured" if measured else "compute capability",
        gemm_tflops=gemm.number if gemm else None,
        peak_tflops=peak,
        x_fp32=x_fp32,
        error=results.number(f"gemm.{dtype}.error"),
        conv_tflops=results.number(f"conv.{dtype}.tflops"),
        sdpa_tflops=results.number(f"sdpa.{dtype}.tflops"),
        mamf_tflops=results.number(f"mamf.{dtype}.tflops"),
    )


def _amp_rows(results: ConformanceResults) -> tuple[AmpRow, ...]:
    return tuple(
        AmpRow(
            dtype,
            results.number(f"amp.step_ms.{dtype}"),
            results.number(f"amp.speedup.{dtype}") if dtype != "fp32" else None,
            results.number(f"amp.peak_mem_mib.{dtype}"),
            results.number(f"amp.mem_saving_pct.{dtype}") if dtype != "fp32" else None,
        )
        for dtype in ("fp32", "fp16", "bf16")
    )


def _speed(row: DtypeRow | None, amp: AmpRow | None) -> float | None:
    """How much faster than fp32: the AMP training step when measured, else the GEMM."""
    if amp is not None and amp.speedup is not None:
        return amp.speedup
    return row.x_fp32 if row else None


def _evidence(row: DtypeRow | None, amp: AmpRow | None) -> str:
    parts = []
    if row and row.gemm_tflops is not None:
        parts.append(f"{row.dtype} GEMM {fmt(row.gemm_tflops)} TFLOP/s ({fmt(row.x_fp32)}x fp32)")
    if amp and amp.speedup is not None:
        parts.append(f"AMP step {fmt(amp.step_ms)} ms ({fmt(amp.speedup)}x fp32)")
    if amp and amp.mem_saving_pct is not None:
        parts.append(f"peak memory {fmt(-amp.mem_saving_pct)}%")
    return ", ".join(parts) or f"{row.dtype if row else '?'}: no speed measured"


def _precision(a: Assessment, cc: str) -> Line:
    fp16, bf16, tf32 = a.row("fp16"), a.row("bf16"), a.row("tf32")
    s16, sb16 = _speed(fp16, a.amp_row("fp16")), _speed(bf16, a.amp_row("bf16"))
    bf16_native = bf16 is not None and bf16.verdict == "native"
    fp16_native = fp16 is not None and fp16.verdict == "native"
    half = [s for s in (s16, sb16 if bf16_native else None) if s is not None]
    basis16, basisb = _evidence(fp16, a.amp_row("fp16")), _evidence(bf16, a.amp_row("bf16"))
    if half and max(half) < 1.0:
        choice = "tf32" if tf32 is not None and tf32.verdict == "native" else "fp32"
        text = f"Stay in fp32{' with TF32 matmuls' if choice == 'tf32' else ''}: half precision is slower here"
        return Line("precision", choice, text, f"{basis16}; {basisb}")
    if bf16_native and (s16 is None or sb16 is None or sb16 >= s16 * (1 - SPEED_TOLERANCE)):
        if sb16 is None:
            return Line("precision", "bf16", f"Train in bf16 autocast: native on cc {cc} (speed not measured)", basisb)
        versus = f"; vs {basis16}" if s16 is not None else ""
        text = f"Train in bf16 autocast, no GradScaler: native on cc {cc} and at least as fast as fp16"
        return Line("precision", "bf16", text, basisb + versus)
    if fp16_native:
        why = (
            f"bf16 is {bf16.verdict if bf16 else 'unknown'} on cc {cc}"
            if not bf16_native
            else f"bf16 is slower than fp16 here by more than {SPEED_TOLERANCE:.0%}"
        )
        text = f"Train in fp16 autocast with GradScaler: {why}"
        return Line("precision", "fp16+GradScaler", text, f"{basis16}; {basisb}")
    return Line("precision", "fp32", f"Stay in fp32: no native half precision on cc {cc}", f"{basis16}; {basisb}")


def _extras(results: ConformanceResults, a: Assessment, choice: str | None) -> list[Line]:
    lines = []
    unscaled = results.number("amp.fp16_zero_grad_fraction.unscaled")
    scaled = results.number("amp.fp16_zero_grad_fraction.scaled")
    if choice == "fp16+GradScaler" or unscaled is not None:
        shown = [
            f"{fmt(_pct(v))}% {label}" for v, label in ((unscaled, "without it"), (scaled, "with it")) if v is not None
        ]
        numbers = "fp16 gradients that underflow to zero: " + (", ".join(shown) or "not measured")
        need = "needed" if unscaled is None or unscaled > (scaled or 0.0) else "not shown to be needed"
        lines.append(Line("grad_scaler", None, f"With fp16, GradScaler is {need}", numbers))
    fp32, tf32 = a.row("fp32"), a.row("tf32")
    if tf32 and tf32.verdict == "native" and tf32.gemm_tflops is not None and fp32 and fp32.gemm_tflops is not None:
        numbers = (
            f"tf32 {fmt(tf32.gemm_tflops)} vs fp32 {fmt(fp32.gemm_tflops)} TFLOP/s ({fmt(tf32.x_fp32)}x), "
            f"error {fmt(tf32.error)} vs {fmt(fp32.error)}"
        )
        text = "For work left in fp32, allow TF32 matmuls (torch.backends.cuda.matmul.fp32_precision = 'tf32')"
        lines.append(Line("tf32", "tf32", text, numbers))
    train, infer = a.compile.get("training"), a.compile.get("inference")
    if train is None and infer is None:
        lines.append(Line("compile", None, "torch.compile: speedup not measured in this run", ""))
    else:
        pays = (train if train is not None else infer or 0.0) >= COMPILE_PAYS
        numbers = (
            f"training {fmt(train)}x, inference {fmt(infer)}x; compile time "
            f"{fmt(a.compile.get('training_s'))} s + {fmt(a.compile.get('inference_s'))} s"
        )
        verdict = "pays" if pays else "does not pay"
        lines.append(Line("compile", verdict, f"torch.compile {verdict} for this workload", numbers))
    return lines


def _pct(fraction: float | None) -> float | None:
    return None if fraction is None else 100.0 * fraction


def assess(results: ConformanceResults, device_index: int = 0) -> Assessment:
    gpu = next((g for g in results.gpus if g.index == device_index), results.gpus[0] if results.gpus else None)
    compile_numbers = {
        "training": results.number("compile.speedup.training"),
        "inference": results.number("compile.speedup.inference"),
        "training_s": results.number("compile.compile_s.training"),
        "inference_s": results.number("compile.compile_s.inference"),
    }
    claims = check_claims(results, gpu)
    if gpu is None:
        line = Line("precision", None, "No GPU was measured in this run: no precision recommendation", "")
        return Assessment(None, (), (), compile_numbers, (line,), claims)
    rows = tuple(_dtype_row(results, gpu, d) for d in DTYPES)
    partial = Assessment(gpu, rows, _amp_rows(results), compile_numbers, (), claims)
    precision = _precision(partial, gpu.compute_capability or "?")
    lines = (precision, *_extras(results, partial, precision.choice))
    return Assessment(gpu, rows, partial.amp, compile_numbers, lines, claims)
