"""The metrics the history judges: which way is better, and the least relative noise assumed for each (a prior
that holds until the history has enough runs to learn its own spread, and a floor under what it learns: a
history of near-identical runs must not make a 0.5% wobble a regression)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class Watched:
    metric: str
    section: str
    higher_is_better: bool
    least_noise: float  # relative


def _rows(section: str, least_noise: float, names: tuple[str, ...], higher: bool = True) -> tuple[Watched, ...]:
    return tuple(Watched(name, section, higher, least_noise) for name in names)


WATCHED: Final[tuple[Watched, ...]] = (
    *_rows("GEMM", 0.015, tuple(f"gemm.{d}.tflops" for d in ("fp16", "bf16", "tf32", "fp32"))),
    *_rows("GEMM", 0.015, tuple(f"gemm.{d}.x_fp32" for d in ("fp16", "bf16", "tf32"))),
    *_rows("conv", 0.03, tuple(f"conv.{d}.tflops" for d in ("fp32", "fp16", "bf16"))),
    *_rows("AMP", 0.02, ("amp.speedup.fp16", "amp.speedup.bf16", "amp.mem_saving_pct.fp16", "amp.mem_saving_pct.bf16")),
    *_rows("AMP", 0.02, tuple(f"amp.peak_mem_mib.{d}" for d in ("fp32", "fp16", "bf16")), higher=False),
    *_rows("SDPA", 0.03, tuple(f"sdpa.{d}.tflops" for d in ("fp32", "fp16", "bf16"))),
    *_rows(
        "compile",
        0.05,
        (
            "compile.speedup.training",
            "compile.speedup.inference",
            "compile.speedup.lm_training",
            "compile.amortised_speedup.lm_training",
        ),
    ),
    *_rows("compile", 0.10, ("compile.compile_s.training", "compile.compile_s.lm_training"), higher=False),
    *_rows("matmul search (MAMF)", 0.02, ("mamf.bf16.tflops", "mamf.fp16.tflops")),
)
BY_METRIC: Final = {w.metric: w for w in WATCHED}
WATCHED_SECTIONS: Final = tuple(dict.fromkeys(w.section for w in WATCHED))
