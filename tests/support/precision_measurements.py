"""Measurements for precision-check's verdict tests: H200- and V100-shaped runs as the runner records them, and
the CPU and H200 recordings under tests/precision_check/recorded/ (see its README.md), optionally given GPU timings;
and a recording upgraded to the current report version, as the report pages read it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from precision_check import upgrade
from precision_check.agreement import agreement, noise_floor
from precision_check.check_report import (
    Device,
    DtypeRun,
    Measurements,
    Overflow,
    ScalerHistory,
    Timing,
    ZeroGrads,
    report_from_json,
)

RECORDED = Path(__file__).resolve().parents[1] / "precision_check" / "recorded"
ATTN = Overflow("layer3.attn", 7, None)  # the third attention block went non-finite in fp16 at step 7

H200 = Device("cuda", "NVIDIA H200", "9.0", True, "2.11.0+cu130", "13.0")
V100 = Device("cuda", "Tesla V100-SXM2-16GB", "7.0", False, "2.11.0+cu126", "12.6")
STEPS = 50


def losses(final: float, *, drift: float = 0.0, bump: float = 0.0) -> tuple[float | None, ...]:
    """A falling loss curve from 4.0 to `final`; the last half multiplied by (1 + drift), step 25 by (1 + bump)."""
    curve = [4.0 + (final - 4.0) * step / (STEPS - 1) for step in range(STEPS)]
    return tuple(
        x * (1 + (drift if i >= STEPS // 2 else 0.0) + (bump if i == STEPS // 2 else 0.0)) for i, x in enumerate(curve)
    )


def run(
    dtype: str,
    step_ms: float,
    mem_mib: float,
    *,
    final: float = 1.0,
    drift: float = 0.0,
    bump: float = 0.0,
    overflows: tuple[Overflow, ...] = (),
    nonfinite: tuple[int, ...] = (),
    skipped: tuple[int, ...] = (0,),
    zero: ZeroGrads | None = None,
) -> DtypeRun:
    curve = tuple(None if i in nonfinite else x for i, x in enumerate(losses(final, drift=drift, bump=bump)))
    fp16 = dtype == "fp16"
    rel_final, rel_max, rel_max_step = agreement(curve, losses(1.0))
    return DtypeRun(
        dtype=dtype,
        losses=curve,
        nonfinite_steps=nonfinite,
        rel_diff_final=None if dtype == "fp32" else rel_final,
        rel_diff_max=None if dtype == "fp32" else rel_max,
        rel_diff_max_step=None if dtype == "fp32" else rel_max_step,
        overflows=overflows,
        scaler=ScalerHistory((32768.0,) * STEPS, skipped) if fp16 else None,
        zero_grads=(zero or ZeroGrads(0.01, 0.19, 0.01, 65536.0)) if fp16 else None,
        timing=Timing(step_ms, step_ms * 0.97, step_ms * 1.1, 20, "cuda-events"),
        peak_mem_mib=mem_mib,
    )


def measured(device: Device, *runs: DtypeRun) -> Measurements:
    return Measurements(device, STEPS, runs)


def healthy_h200() -> Measurements:
    """A compute-bound model: fp16 and bf16 both ~2x faster, 38% less memory, within 0.4%."""
    return measured(
        H200,
        run("fp32", 21.0, 1000.0),
        run("fp16", 10.3, 620.0, drift=0.003),
        run("bf16", 10.0, 620.0, drift=0.004),
    )


def with_run(m: Measurements, new: DtypeRun) -> Measurements:
    return replace(m, runs=tuple(new if r.dtype == new.dtype else r for r in m.runs))


def with_floor(m: Measurements, worst: float, *, nonfinite: tuple[int, ...] = ()) -> Measurements:
    """`m` with an fp32 control run whose loss is `worst` (relative) off fp32's over the second half."""
    control = tuple(None if i in nonfinite else x for i, x in enumerate(losses(1.0, drift=worst)))
    return replace(m, noise_floor=noise_floor(control, losses(1.0)))


def recorded(name: str, host: str = "cpu") -> Measurements:
    """The measurements of recorded/NAME.HOST.json: a real run on the CPU ("cpu") or an H200 ("h200")."""
    return report_from_json((RECORDED / f"{name}.{host}.json").read_text()).measurements


def on_gpu(m: Measurements, device: Device, step_ms: dict[str, float], mem_mib: dict[str, float]) -> Measurements:
    """A CPU recording's numerics with GPU-shaped timings and memory grafted on, as if run on `device`."""
    runs = tuple(
        replace(
            r,
            timing=Timing(step_ms[r.dtype], step_ms[r.dtype] * 0.97, step_ms[r.dtype] * 1.1, 20, "cuda-events"),
            peak_mem_mib=mem_mib[r.dtype],
        )
        for r in m.runs
    )
    return replace(m, device=device, runs=runs)


def upgraded(tmp_path: Path, recorded: Path) -> Path:
    """The recorded run rewritten as the current version (same file name), with its judged lines."""
    new = tmp_path / "upgraded" / recorded.name
    assert upgrade.main([str(recorded), str(new)]) == 0
    return new
