"""A history's runs over time for the site: each watched metric's series over the nightly runs (fault, control
and partial runs are judged, never drawn on the main charts), the noise band each run was judged against, and
the flags: the decay model's findings (pytorch_cuda.decay) and tests that passed in the last good nightly run and
fail now. Each is over the shown runs (cells.py: the last runs, read whole) of a judgement that may be of a
window (the judge's views): the shown runs take the place of their views."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from pytorch_cuda.decay import DecayFinding, Judged, Noise
from pytorch_cuda.decay.judge import order
from pytorch_cuda.decay.watched import BY_METRIC, WATCHED, WATCHED_SECTIONS
from pytorch_cuda.run_store import Stored

CHARTED: Final = tuple(
    (section, tuple(w.metric for w in WATCHED if w.section == section)) for section in WATCHED_SECTIONS
)
REPORTED: Final = ("confirmed", "suspect")  # drawn as regressions on the charts
ALERT_STATUSES: Final = ("confirmed", "failed", "error")  # what the home page and the nightly's issues report


@dataclass(frozen=True)
class Point:
    run: Stored
    value: float
    noise: Noise | None  # what the run was judged against (learned from the good nightly runs before it)
    finding: DecayFinding | None

    @property
    def regression(self) -> bool:
        return self.finding is not None and self.finding.status in REPORTED


@dataclass(frozen=True)
class Series:
    metric: str
    unit: str
    judged: bool
    points: tuple[Point, ...]


@dataclass(frozen=True)
class Flag:
    """A finding (a metric's step or drift), or a test that passed in the last good nightly run and fails now."""

    run: Stored
    what: str
    old: str  # the history's centre (a test: its outcome before)
    new: str
    note: str
    status: str  # confirmed | suspect | cleared | fault | control | partial (a metric); failed | error (a test)
    hosts: tuple[str, ...] = ()
    runs: tuple[str, ...] = ()  # the sha256 of the runs behind it


def _fmt(value: float | None, unit: str) -> str:
    return "-" if value is None else f"{value:.4g} {unit}".strip()


def series(judged: Judged, metric: str, shown: Mapping[str, Stored]) -> Series | None:
    """``metric`` over the shown nightly runs (sha256 -> the run read whole)."""
    points: list[Point] = []
    unit = ""
    for view in judged.nightly:
        run = shown.get(view.record.sha256)
        measured = None if run is None else run.results.measurement(metric)
        if run is not None and measured is not None and measured.number is not None:
            unit = measured.unit
            finding = next((f for f in judged.on(view) if f.metric == metric), None)
            points.append(Point(run, measured.number, judged.baseline(run, metric), finding))
    return Series(metric, unit, metric in BY_METRIC, tuple(points)) if points else None


def _finding_flag(finding: DecayFinding) -> Flag:
    measured = finding.run.results.measurement(finding.metric)
    unit = measured.unit if measured is not None else ""
    note = (
        f"{finding.kind} {finding.change:+.1%} (limit {finding.limit:.1%}, noise ±{finding.noise.spread:.1%} "
        f"from {finding.noise.runs} runs on {finding.noise.machines} hosts); {len(finding.evidence)} run(s)"
    )
    old, new = _fmt(finding.noise.centre, unit), _fmt(finding.value, unit)
    runs = tuple(r.record.sha256 for r in finding.evidence)
    return Flag(finding.run, finding.metric, old, new, note, finding.status, finding.machines, runs)


def _test_flags(nightly: Sequence[Stored], shown: Mapping[str, Stored]) -> list[Flag]:
    """A shown test that failed in a nightly run and passed in the latest earlier good nightly run that ran it (of
    those read: the judge's window, which reaches WINDOW_RUNS back before the shown runs)."""
    found = []
    complete = [r.results.complete for r in nightly]  # counted once a run, not once for every later shown run
    for i, view in enumerate(nightly):
        run = shown.get(view.record.sha256)
        if run is None:
            continue
        before = [r for r, done in zip(nightly[:i], complete, strict=False) if done]
        for nodeid, test in run.results.tests.items():
            if test.outcome not in ("failed", "error"):
                continue
            ran = [r for r in before if r.results.tests.get(nodeid) is not None]
            # a check not judged (on a carried stack) did not judge: the latest run that judged it is the baseline
            ran = [r for r in ran if r.results.tests[nodeid].outcome not in ("not_run", "not_judged", "unknown")]
            if ran and ran[-1].results.tests[nodeid].outcome == "passed":
                note = (test.message or "").splitlines()[0][:160] if test.message else ""
                runs = (ran[-1].record.sha256, run.record.sha256)
                found.append(Flag(run, nodeid, "passed", test.outcome, note, test.outcome, (), runs))
    return found


def flags(judged: Judged, shown: Mapping[str, Stored]) -> list[Flag]:
    """Every finding on the shown runs and every test that newly fails in them, oldest run first."""
    findings = [_finding_flag(f) for f in judged.findings if f.run.record.sha256 in shown]
    found = findings + _test_flags(judged.nightly, shown)
    return sorted(found, key=lambda f: (order(f.run), f.what))
