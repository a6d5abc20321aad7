"""Each history judged run by run against the noise learned from the good nightly runs before it.

- A step: one run beyond STEP_SIGMAS of the noise. A nightly step is a *suspect* until the next run of the
  history confirms it (beyond the same limit: *confirmed*, with both runs and their hosts) or clears it (within
  noise: a one-off, *cleared*). A re-run on another host is such a next run.
- A drift: the median of the last DRIFT_RUNS nightly runs beyond DRIFT_SIGMAS of the noise of the runs before
  them. It is a slide that no single night crosses (three nights at -4%), confirmed by its own three runs.
- Fault, control and partial runs are judged against the latest good runs (their steps say what the history
  would flag) and never join it.
A run is only ever compared with runs before it, never with itself.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

from pytorch_cuda.decay.noise import LEARNED_FROM, WINDOW, Noise, learn
from pytorch_cuda.decay.watched import BY_METRIC, WATCHED, Watched
from pytorch_cuda.run_store import Stored
from pytorch_cuda.run_store.run_identity import HistoryKey, machine_of

STEP_SIGMAS: Final = 3.5
DRIFT_SIGMAS: Final = 2.5
DRIFT_RUNS: Final = 3
STATUSES: Final = ("confirmed", "suspect", "cleared", "fault", "control", "partial")


@dataclass(frozen=True, eq=False)
class DecayFinding:
    metric: str
    kind: str  # step | drift
    run: Stored
    value: float  # the run's value (a drift: the median of its runs)
    noise: Noise  # what it was judged against
    change: float  # relative to the noise's centre
    status: str  # one of STATUSES
    evidence: tuple[Stored, ...]  # the runs behind it (a confirmed step: both; a drift: its runs)

    @property
    def limit(self) -> float:
        return (STEP_SIGMAS if self.kind == "step" else DRIFT_SIGMAS) * self.noise.spread

    @property
    def machines(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(machine_of(r.identity) for r in self.evidence))

    def describe(self) -> str:
        where = ", ".join(self.machines)
        return (
            f"{self.metric} {self.kind}: {self.value:.4g} vs {self.noise.centre:.4g} ({self.change:+.1%}, limit "
            f"{self.limit:.1%}; noise {self.noise.describe()}); {self.status}, {len(self.evidence)} run(s) on {where}"
        )


@dataclass(frozen=True)
class Judged:
    key: HistoryKey
    runs: tuple[Stored, ...]  # oldest first, every purpose
    noise: tuple[Noise, ...]  # learned from the last good nightly runs, for each metric measured
    findings: tuple[DecayFinding, ...]
    judged_against: Mapping[tuple[str, str], Noise]  # (run sha256, metric) -> the noise that run was judged against

    def baseline(self, run: Stored, metric: str) -> Noise | None:
        """The noise ``run`` was judged against for ``metric`` (None: nothing before it measured the metric)."""
        return self.judged_against.get((run.record.sha256, metric))

    @property
    def nightly(self) -> tuple[Stored, ...]:
        return tuple(r for r in self.runs if r.purpose == "nightly")

    def on(self, run: Stored) -> tuple[DecayFinding, ...]:
        return tuple(f for f in self.findings if f.run is run)

    def latest_regressions(self) -> tuple[DecayFinding, ...]:
        """What the nightly reports: confirmed findings on the latest nightly run."""
        latest = self.nightly[-1:]
        return tuple(f for f in self.findings if latest and f.run is latest[0] and f.status == "confirmed")


def _worse(watched: Watched, change: float) -> float:
    """How much worse a relative change is (positive: worse)."""
    return -change if watched.higher_is_better else change


def _noise_before(watched: Watched, good: Sequence[Stored]) -> Noise | None:
    measured = [(v, machine_of(r.identity)) for r in good if (v := r.results.number(watched.metric)) is not None]
    return learn(watched, [v for v, _ in measured], [m for _, m in measured])


def _step(watched: Watched, run: Stored, noise: Noise | None) -> DecayFinding | None:
    value = run.results.number(watched.metric)
    if value is None or noise is None or noise.centre == 0:
        return None
    change = value / noise.centre - 1
    if _worse(watched, change) <= STEP_SIGMAS * noise.spread:
        return None
    status = "suspect" if run.purpose == "nightly" else run.purpose
    return DecayFinding(watched.metric, "step", run, value, noise, change, status, (run,))


def _drift(watched: Watched, nightly: Sequence[Stored], good: Sequence[Stored]) -> DecayFinding | None:
    recent = [r for r in nightly if r.results.number(watched.metric) is not None][-DRIFT_RUNS:]
    if len(recent) < DRIFT_RUNS:
        return None
    before = [r for r in good if order(r) < order(recent[0])]
    noise = _noise_before(watched, before[-WINDOW:])
    if noise is None or noise.runs < LEARNED_FROM or noise.centre == 0:
        return None
    value = statistics.median(v for r in recent if (v := r.results.number(watched.metric)) is not None)
    change = value / noise.centre - 1
    if _worse(watched, change) <= DRIFT_SIGMAS * noise.spread:
        return None
    return DecayFinding(watched.metric, "drift", recent[-1], value, noise, change, "confirmed", tuple(recent))


def order(run: Stored) -> tuple[str, str]:
    return (run.results.started_at or "", run.record.sha256)


def _confirm(findings: list[DecayFinding], nightly: Sequence[Stored]) -> list[DecayFinding]:
    """A nightly step is confirmed by the next nightly run beyond the same limit, cleared by one within it."""
    out = list(findings)
    for i, finding in enumerate(out):
        if finding.kind != "step" or finding.status != "suspect":
            continue
        later = [r for r in nightly if order(r) > order(finding.run) and r.results.number(finding.metric) is not None]
        if not later:
            continue
        following = later[0]
        value = following.results.number(finding.metric)
        assert value is not None
        watched = BY_METRIC[finding.metric]
        beyond = _worse(watched, value / finding.noise.centre - 1) > STEP_SIGMAS * finding.noise.spread
        out[i] = replace(finding, status="confirmed" if beyond else "cleared", evidence=(finding.run, following))
        if beyond:  # the confirming run's own step (if it has one) is confirmed by the same pair
            for j, other in enumerate(out):
                if other.run is following and other.metric == finding.metric and other.kind == "step":
                    out[j] = replace(other, status="confirmed", evidence=(finding.run, following))
    return out


def judge_history(runs: Sequence[Stored]) -> Judged:
    """One key's runs (any order) judged oldest first."""
    ordered = sorted(runs, key=order)
    good: list[Stored] = []  # nightly runs that passed: the baseline of every later run
    nightly: list[Stored] = []
    findings: list[DecayFinding] = []
    judged_against: dict[tuple[str, str], Noise] = {}
    everything_good = [r for r in ordered if r.purpose == "nightly" and r.results.complete]
    for run in ordered:
        if run.purpose == "nightly":
            nightly.append(run)
        # a nightly run is judged against the good runs before it; a fault, control or partial run (an experiment
        # that never joins the history) against the latest good runs of the history, whenever it ran
        baseline = good[-WINDOW:] if run.purpose == "nightly" else everything_good[-WINDOW:]
        for watched in WATCHED:
            learned = _noise_before(watched, baseline) if run.results.number(watched.metric) is not None else None
            if learned is not None:
                judged_against[(run.record.sha256, watched.metric)] = learned
            step = _step(watched, run, learned)
            if step is not None:
                findings.append(step)
            elif run.purpose == "nightly":
                drift = _drift(watched, nightly, good)
                if drift is not None:
                    findings.append(drift)
        if run.purpose == "nightly" and run.results.complete:
            good.append(run)
    noise = tuple(n for w in WATCHED if (n := _noise_before(w, good[-WINDOW:])) is not None)
    key = ordered[0].key if ordered else HistoryKey("-", "-", "-")
    return Judged(key, tuple(ordered), noise, tuple(_confirm(findings, nightly)), judged_against)


def judge_store(runs: Sequence[Stored]) -> list[Judged]:
    """Every history of a store, by key."""
    by_key: dict[HistoryKey, list[Stored]] = {}
    for run in runs:
        by_key.setdefault(run.key, []).append(run)
    return [judge_history(members) for _, members in sorted(by_key.items())]
