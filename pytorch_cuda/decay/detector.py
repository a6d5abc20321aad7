"""One watched metric of one history, judged night by night against the noise learned from its baseline.

Every night, each on its own (limits.py has the numbers):
- a step: one night beyond STEP_SIGMAS is a suspect; the next night beyond it too confirms it (one beyond
  GROSS_SIGMAS is confirmed alone); a suspect followed by a night within the limit is cleared (an outlier);
- a drift: the mean of the last DRIFT_RUNS nights beyond DRIFT_SIGMAS, each of them beyond AGREE_SIGMAS (a held
  shift or a slide that no single night crosses);
- a missing metric: a complete nightly that no longer reports a metric its baseline measured (suspect; two such
  nights: confirmed).
A confirmed regression stays open, and is reported every night, until two nights running are back within
RECOVERED_SIGMAS (recovered) or it is accepted (`results accept`: the accepted level becomes the centre, the
learned spread is kept). While it is open nothing joins the baseline, and the nights it rests on are taken out of
it, so a held regression never widens the noise (a cleared outlier stays in: it is the history's noise). Fault
and control runs are judged (one night, a step) against the latest baseline, whenever they ran, and never join.
A metric with fewer than HISTORY_RUNS baseline runs is not judged: "no history yet".
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace

from pytorch_cuda.decay.finding import DecayFinding
from pytorch_cuda.decay.limits import (
    AGREE_SIGMAS,
    DRIFT_RUNS,
    DRIFT_SIGMAS,
    GROSS_SIGMAS,
    HISTORY_RUNS,
    RECOVERED_SIGMAS,
    STEP_SIGMAS,
)
from pytorch_cuda.decay.noise import WINDOW, Noise, learn
from pytorch_cuda.decay.watched import Watched
from pytorch_cuda.run_store import Stored
from pytorch_cuda.run_store.run_identity import machine_of


@dataclass(frozen=True)
class Night:
    run: Stored
    value: float
    noise: Noise
    z: float  # how much worse than the noise's centre, in robust sigmas (positive: worse)


@dataclass(frozen=True)
class SeriesJudgement:
    findings: tuple[DecayFinding, ...]
    judged_against: dict[str, Noise]  # run sha256 -> the noise it was judged against
    noise: Noise | None  # what the next run will be judged against
    open: DecayFinding | None  # the regression still open after the last run
    # what the next run's judgement depends on (_State.resume_point): equal resume points judge every later run the
    # same, so a window of the history that ends in the full read's resume point judges as the full read (windowed.py)
    resume_point: tuple[object, ...] = ()
    resume_at: tuple[object, ...] | None = None  # the resume point after the first ``resume_runs`` runs, if asked


@dataclass
class _State:
    watched: Watched
    baseline: list[tuple[Stored, float]] = field(default_factory=list)
    nights: list[Night] = field(default_factory=list)  # every judged nightly value, oldest first
    findings: list[DecayFinding] = field(default_factory=list)
    open: DecayFinding | None = None
    held: list[Night] = field(default_factory=list)  # the nights of the open regression
    after: int = 0  # nights judged since it opened
    missing: int = 0  # complete nightly runs in a row without the metric

    def noise(self) -> Noise | None:
        # learn reads the last WINDOW values and hosts; every baseline value is finite (judge_series keeps no other),
        # so the tail alone is exact, and a night costs the same however long the history (not its length squared)
        tail = self.baseline[-WINDOW:]
        return learn(self.watched, [v for _, v in tail], [machine_of(r.identity) for r, _ in tail])

    def finding(self, kind: str, status: str, nights: Sequence[Night], value: float | None = None) -> DecayFinding:
        last = nights[-1]
        shown = last.value if value is None else value
        change = shown / last.noise.centre - 1
        return DecayFinding(self.watched.metric, kind, last.run, shown, last.noise, change, status,
                            tuple(n.run for n in nights))  # fmt: skip

    def resume_point(self) -> tuple[object, ...]:
        """Everything of this state a later night reads: the baseline's tail (the noise learns from its last WINDOW;
        confirming a regression takes at most the last DRIFT_RUNS nights back out of it), the last nights, the
        regression open and its nights, the counters, and the last night's findings (the next night may restatus
        them)."""
        last = self.nights[-1].run if self.nights else None
        return (
            tuple((r.record.sha256, v) for r, v in self.baseline[-(WINDOW + DRIFT_RUNS) :]),
            len(self.baseline) >= WINDOW + DRIFT_RUNS,
            tuple((n.run.record.sha256, n.value, n.noise, n.z) for n in self.nights[-DRIFT_RUNS:]),
            None if self.open is None else (self.open.kind, self.open.status, self.open.noise, self.open.value,
                                            tuple(r.record.sha256 for r in self.open.evidence)),
            tuple(n.run.record.sha256 for n in self.held),
            self.after,
            self.missing,
            tuple((f.kind, f.status) for f in self.findings if last is not None and f.run is last),
        )  # fmt: skip

    def restatus(self, run: Stored, old: str, new: str) -> None:
        for i, f in enumerate(self.findings):
            if f.run is run and f.status == old:
                self.findings[i] = replace(f, status=new)


def _z(watched: Watched, value: float, noise: Noise) -> float:
    change = value / noise.centre - 1
    return (-change if watched.higher_is_better else change) / noise.spread


def _open(state: _State, kind: str, nights: Sequence[Night]) -> None:
    runs = {id(n.run) for n in nights}
    state.baseline = [(r, v) for r, v in state.baseline if id(r) not in runs]
    for night in nights[:-1]:
        state.restatus(night.run, "suspect", "confirmed")
    value = statistics.mean(n.value for n in nights) if kind == "drift" else None
    state.open = state.finding(kind, "confirmed", nights, value)
    state.held, state.after = list(nights), 0
    state.findings.append(state.open)


def _judge_held(state: _State, night: Night) -> None:
    assert state.open is not None
    state.held.append(night)
    state.after += 1
    last_two = state.nights[-2:]
    if state.after >= 2 and all(n.z <= RECOVERED_SIGMAS for n in last_two):
        state.findings.append(state.finding(state.open.kind, "recovered", last_two))
        state.baseline += [(n.run, n.value) for n in last_two]
        state.open, state.held = None, []
        return
    state.findings.append(replace(state.finding(state.open.kind, "confirmed", state.held), kind=state.open.kind))


def _judge_night(state: _State, night: Night) -> None:
    state.nights.append(night)
    if state.open is not None:
        _judge_held(state, night)
        return
    previous = state.nights[-2] if len(state.nights) > 1 else None
    step = night.z > STEP_SIGMAS
    recent = state.nights[-DRIFT_RUNS:]
    if step and night.z > GROSS_SIGMAS:
        _open(state, "step", [night])
    elif step and previous is not None and previous.z > STEP_SIGMAS:
        _open(state, "step", [previous, night])
    elif (
        len(recent) == DRIFT_RUNS
        and all(n.z > AGREE_SIGMAS for n in recent)
        and statistics.mean(n.z for n in recent) > DRIFT_SIGMAS
    ):
        _open(state, "drift", recent)
    else:
        if step:
            state.findings.append(state.finding("step", "suspect", [night]))
        elif previous is not None:
            state.restatus(previous.run, "suspect", "cleared")
        # a night that is no regression (yet) is the history's noise, an outlier too; confirming takes it out again
        state.baseline.append((night.run, night.value))


def _accept(state: _State) -> None:
    """The open regression accepted: its nights are the new level, the spread learned before it is kept."""
    assert state.open is not None
    level = statistics.median(n.value for n in state.held)
    ratio = level / state.open.noise.centre
    state.baseline = [(r, v * ratio) for r, v in state.baseline] + [(n.run, n.value) for n in state.held]
    state.restatus(state.held[-1].run, "confirmed", "accepted")
    state.open, state.held = None, []


def judge_series(
    watched: Watched, runs: Sequence[Stored], accepted_through: Collection[str] = (), resume_runs: int | None = None
) -> SeriesJudgement:
    """``runs`` oldest first (every purpose); ``accepted_through``: the sha256 of the runs through which an open
    regression of this metric was accepted (`results accept`); ``resume_runs``: also keep the resume point after
    that many runs (what judging only them would end in, without a second pass: windowed.py)."""
    state = _State(watched)
    judged_against: dict[str, Noise] = {}
    experiments: list[tuple[Stored, float]] = []
    resume_at: tuple[object, ...] | None = None
    for index, run in enumerate(runs):
        if index == resume_runs:
            resume_at = state.resume_point()
        raw = run.results.number(watched.metric)
        value = raw if raw is not None and math.isfinite(raw) else None
        if run.purpose != "nightly":
            if value is not None:
                experiments.append((run, value))
            continue
        noise = state.noise()
        enough = noise is not None and noise.runs >= HISTORY_RUNS and noise.centre != 0
        if value is None:
            if enough and not run.partial:
                assert noise is not None
                state.missing += 1
                status = "confirmed" if state.missing > 1 else "suspect"
                state.findings.append(DecayFinding(watched.metric, "missing", run, math.nan, noise, math.nan,
                                                   status, (run,)))  # fmt: skip
            continue
        state.missing = 0
        if not enough or noise is None:
            state.baseline.append((run, value))
            continue
        judged_against[run.record.sha256] = noise
        _judge_night(state, Night(run, value, noise, _z(watched, value, noise)))
        if state.open is not None and run.record.sha256 in accepted_through:
            _accept(state)
    if resume_runs is not None and resume_at is None:
        resume_at = state.resume_point()
    final = state.noise()
    if final is not None and final.runs >= HISTORY_RUNS and final.centre != 0:
        # a fault or control run is an experiment: judged against the history's latest baseline, whenever it ran
        for run, value in experiments:
            judged_against[run.record.sha256] = final
            night = Night(run, value, final, _z(watched, value, final))
            if night.z > STEP_SIGMAS:
                state.findings.append(state.finding("step", run.purpose, [night]))
    return SeriesJudgement(tuple(state.findings), judged_against, final, state.open, state.resume_point(), resume_at)
