"""A cell's runs over time: each metric's series, and each run judged against its baseline with `report --diff`.

A run's baseline for a metric is the latest earlier run of the same cell (image x GPU) that measured it and did
not run under an injected fault. The judgement is `report --diff`'s own (precision_report.diff.diff_results: its
sections, noise floors and the metrics' own spread), so a regression here is one there. Metrics that --diff does
not judge (the matmul search, the LM compile row) are charted, never flagged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Final

from pytorch_cuda.precision_report.diff import SECTIONS, ChangeRow, MetricRow, diff_results
from pytorch_cuda.run_store import Stored

CHARTED: Final = (
    *((title, names) for title, _, names in SECTIONS),
    ("matmul search (MAMF)", ("mamf.bf16.tflops", "mamf.fp16.tflops")),
    ("LM compile", ("compile.speedup.lm_training", "compile.amortised_speedup.lm_training")),
)
JUDGED: Final = frozenset(name for _, _, names in SECTIONS for name in names)


@dataclass(frozen=True)
class Point:
    run: Stored
    value: float
    baseline: Stored | None
    row: MetricRow | None  # --diff's row against the baseline (None: no baseline, or a metric --diff does not judge)

    @property
    def regression(self) -> bool:
        return self.row is not None and self.row.status == "regression"


@dataclass(frozen=True)
class Series:
    metric: str
    unit: str
    judged: bool
    points: tuple[Point, ...]


@dataclass(frozen=True)
class Flag:
    """One regression beyond noise: a metric (row) or a test that passed in the baseline and failed (change)."""

    run: Stored
    baseline: Stored
    what: str
    old: str
    new: str
    note: str


@cache
def _diff_rows(old: Stored, new: Stored) -> tuple[dict[str, MetricRow], tuple[ChangeRow, ...]]:
    """--diff's metric rows by name, and its dtype verdicts that regressed (both runs judged the dtype)."""
    diff = diff_results(old.results, new.results)
    verdicts = tuple(c for c in diff.verdicts if c.status == "regression" and "-" not in (c.old, c.new))
    return {row.name: row for row in diff.metrics}, verdicts


def _test_flags(runs: Sequence[Stored], i: int) -> list[Flag]:
    """A test that failed in run i and passed in the latest earlier clean run that ran it (--diff's rule)."""
    found = []
    for nodeid, test in runs[i].results.tests.items():
        if test.outcome not in ("failed", "error"):
            continue
        ran = [r for r in runs[:i] if _clean(r) and r.results.tests.get(nodeid) is not None]
        ran = [r for r in ran if r.results.tests[nodeid].outcome not in ("not_run", "unknown")]
        if ran and ran[-1].results.tests[nodeid].outcome == "passed":
            note = (test.message or "").splitlines()[0][:160] if test.message else ""
            found.append(Flag(runs[i], ran[-1], nodeid, "passed", test.outcome, note))
    return found


def _clean(run: Stored) -> bool:
    return run.record.fault is None


def series(runs: Sequence[Stored], metric: str) -> Series | None:
    points: list[Point] = []
    unit = ""
    for i, run in enumerate(runs):
        measured = run.results.measurement(metric)
        if measured is None or measured.number is None:
            continue
        unit = measured.unit
        earlier = [r for r in runs[:i] if _clean(r) and r.results.number(metric) is not None]
        baseline = earlier[-1] if earlier else None
        row = _diff_rows(baseline, run)[0].get(metric) if baseline is not None and metric in JUDGED else None
        points.append(Point(run, measured.number, baseline, row))
    return Series(metric, unit, metric in JUDGED, tuple(points)) if points else None


def _fmt(value: float | None, unit: str) -> str:
    return "-" if value is None else f"{value:.4g} {unit}".strip()


def flags(runs: Sequence[Stored]) -> list[Flag]:
    """Every regression beyond noise in the cell's history: metrics, then tests and dtype verdicts."""
    found: list[Flag] = []
    for _, names in CHARTED:
        for name in names:
            s = series(runs, name)
            if s is None:
                continue
            for p in s.points:
                if p.regression and p.row is not None and p.baseline is not None:
                    note = f"{p.row.change:+.1%} (noise {p.row.noise:.0%})" if p.row.change is not None else ""
                    found.append(Flag(p.run, p.baseline, name, _fmt(p.row.old, s.unit), _fmt(p.row.new, s.unit), note))
    for i, run in enumerate(runs):
        found += _test_flags(runs, i)
        earlier = [r for r in runs[:i] if _clean(r) and r.results.dtypes]
        for change in _diff_rows(earlier[-1], run)[1] if earlier and run.results.dtypes else ():
            found.append(Flag(run, earlier[-1], f"{change.what} verdict", change.old, change.new, change.note))
    return sorted(found, key=lambda f: (f.run.results.started_at or "", f.what))
