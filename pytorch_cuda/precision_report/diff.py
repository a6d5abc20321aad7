"""`build.py report --diff OLD NEW`: what changed between two conformance runs (the last release's and a
bump's), as Markdown for a pull request: GEMM ratios, AMP speed and memory, compile speed-up, dtype verdicts
and tests, old -> new, with each move beyond noise marked a regression or an improvement.

Noise: a timed metric's own spread ((max - min) / median over its samples, the wider of the two runs), and
never less than its section's floor: 5% for GEMM and AMP, 10% for compile (one timed compile per run).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytorch_cuda.precision_report.diff_baseline import mismatches
from pytorch_cuda_contract.results_file import ConformanceResults, Metric

DIFF_SECTIONS: tuple[tuple[str, float, tuple[str, ...]], ...] = (
    (
        "GEMM",
        0.05,
        tuple(f"gemm.{d}.x_fp32" for d in ("fp16", "bf16", "tf32"))
        + tuple(f"gemm.{d}.tflops" for d in ("fp16", "bf16", "tf32", "fp32")),
    ),
    (
        "AMP",
        0.05,
        (
            "amp.speedup.fp16",
            "amp.speedup.bf16",
            "amp.mem_saving_pct.fp16",
            "amp.mem_saving_pct.bf16",
            *(f"amp.peak_mem_mib.{d}" for d in ("fp32", "fp16", "bf16")),
        ),
    ),
    (
        "compile",
        0.10,
        ("compile.speedup.training", "compile.speedup.inference", "compile.compile_s.training"),
    ),
)
LOWER_IS_BETTER = ("peak_mem_mib", "compile_s", "step_ms")


@dataclass(frozen=True)
class MetricRow:
    section: str
    name: str
    unit: str
    old: float | None
    new: float | None
    change: float | None  # relative, new / old - 1
    noise: float  # relative
    status: str  # regression | improved | within noise | only in one run


@dataclass(frozen=True)
class ChangeRow:
    what: str  # a dtype or a test node id
    old: str
    new: str
    status: str  # regression | improved | changed
    note: str = ""


@dataclass(frozen=True)
class Diff:
    old: ConformanceResults
    new: ConformanceResults
    metrics: tuple[MetricRow, ...]
    verdicts: tuple[ChangeRow, ...]
    tests: tuple[ChangeRow, ...]
    mismatches: tuple[str, ...] = ()  # how the runs differ beyond the image's pins (torch, CUDA, GPU, variant)

    @property
    def regressions(self) -> int:
        rows: Sequence[MetricRow | ChangeRow] = [*self.metrics, *self.verdicts, *self.tests]
        return sum(row.status == "regression" for row in rows)


def _number(metric: Metric | None) -> float | None:
    value = None if metric is None else metric.value
    return float(value) if isinstance(value, int | float) else None


def _spread(metric: Metric | None) -> float:
    if metric is None or metric.min is None or metric.max is None or not metric.median:
        return 0.0
    return (metric.max - metric.min) / metric.median


def _metric_row(section: str, floor: float, name: str, old: ConformanceResults, new: ConformanceResults) -> MetricRow:
    before, after = old.measurements.get(name), new.measurements.get(name)
    a, b = _number(before), _number(after)
    either = after if after is not None else before
    unit = either.unit if either is not None else ""
    noise = max(floor, _spread(before), _spread(after))
    if a is None or b is None or a == 0:
        status = "only in one run" if (a is None) != (b is None) else ""  # absent from both: no row
        return MetricRow(section, name, unit, a, b, None, noise, status)
    change = b / a - 1
    better = -change if name.split(".")[1] in LOWER_IS_BETTER else change
    status = "within noise" if abs(change) <= noise else ("improved" if better > 0 else "regression")
    return MetricRow(section, name, unit, a, b, change, noise, status)


def _verdicts(old: ConformanceResults, new: ConformanceResults) -> list[ChangeRow]:
    rows = []
    for dtype in sorted(old.dtypes.keys() | new.dtypes.keys()):
        a = old.dtypes[dtype].verdict if dtype in old.dtypes else "-"
        b = new.dtypes[dtype].verdict if dtype in new.dtypes else "-"
        status = "same" if a == b else ("improved" if b == "native" else "regression")
        rows.append(ChangeRow(dtype, a, b, status))
    return rows


def _tests(old: ConformanceResults, new: ConformanceResults) -> list[ChangeRow]:
    rows = []
    for nodeid in sorted(old.tests.keys() | new.tests.keys()):
        a = old.tests[nodeid].outcome if nodeid in old.tests else "-"
        b = new.tests[nodeid].outcome if nodeid in new.tests else "-"
        if a == b:
            continue
        status = "regression" if b == "failed" else ("improved" if a == "failed" and b == "passed" else "changed")
        message = new.tests[nodeid].message if nodeid in new.tests else None
        rows.append(ChangeRow(nodeid, a, b, status, (message or "").splitlines()[0][:160] if message else ""))
    return rows


def diff_results(old: ConformanceResults, new: ConformanceResults) -> Diff:
    metrics = [_metric_row(s, floor, name, old, new) for s, floor, names in DIFF_SECTIONS for name in names]
    kept = tuple(row for row in metrics if row.status)
    return Diff(old, new, kept, tuple(_verdicts(old, new)), tuple(_tests(old, new)), mismatches(old, new))
