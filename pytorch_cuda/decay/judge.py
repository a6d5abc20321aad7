"""Each history judged: every watched metric night by night (detector.py), the accepted regressions of the store
applied, and what the nightly reports: the regressions open on the latest nightly run, or "no history yet".

A run is only ever compared with runs before it, never with itself, and only with runs of its own timing harness
(the results file's "harness", pytorch_cuda_contract.results_format.HARNESS_VERSION): a new harness moves every
timed number, so its first night starts a history of its own within the key ("no history yet" until it has
enough runs) instead of reading as a step. The runs of an earlier harness stay, judged among themselves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytorch_cuda.decay.detector import judge_series
from pytorch_cuda.decay.finding import DecayFinding
from pytorch_cuda.decay.limits import HISTORY_RUNS
from pytorch_cuda.decay.noise import Noise
from pytorch_cuda.decay.watched import WATCHED
from pytorch_cuda.run_store import Stored
from pytorch_cuda.run_store.accepted import Accepted
from pytorch_cuda.run_store.backend import RunStore
from pytorch_cuda.run_store.run_identity import HistoryKey
from pytorch_cuda_contract.results_format import FIRST_HARNESS


@dataclass(frozen=True)
class Judged:
    key: HistoryKey
    runs: tuple[Stored, ...]  # oldest first, every purpose
    noise: tuple[Noise, ...]  # what the next run is judged against, for each metric measured
    findings: tuple[DecayFinding, ...]
    judged_against: Mapping[tuple[str, str], Noise]  # (run sha256, metric) -> the noise that run was judged against
    accepted: tuple[Accepted, ...] = ()
    harness: int = FIRST_HARNESS  # the newest timing harness among the runs: the noise and the verdict are its own
    resume_point: tuple[object, ...] = ()  # each watched metric's (detector.SeriesJudgement.resume_point)
    # with judge_history's ``resume_after``: the resume point judging only the runs through it would end in
    resume_at: tuple[object, ...] | None = None

    def baseline(self, run: Stored, metric: str) -> Noise | None:
        """The noise ``run`` was judged against for ``metric`` (None: not judged, too little before it)."""
        return self.judged_against.get((run.record.sha256, metric))

    @property
    def nightly(self) -> tuple[Stored, ...]:
        return tuple(r for r in self.runs if r.purpose == "nightly")

    @property
    def current(self) -> tuple[Stored, ...]:
        """The nightly runs of the current timing harness (``harness``): the history the next run is judged in."""
        return tuple(r for r in self.nightly if r.results.harness == self.harness)

    @property
    def earlier_harness(self) -> int:
        """Nightly runs of an earlier timing harness: kept and shown, never compared with the current harness's."""
        return len(self.nightly) - len(self.current)

    @property
    def history_runs(self) -> int:
        return len(self.current)

    @property
    def no_history(self) -> str | None:
        """``no history yet (k of N runs)`` while no nightly run of the current harness can be judged yet (N: the
        first one that is), else None."""
        k = len(self.current)
        if k > HISTORY_RUNS:
            return None
        restarted = f" of timing harness {self.harness}" if self.earlier_harness else ""
        return f"no history yet ({k} of {HISTORY_RUNS + 1} runs{restarted})"

    def on(self, run: Stored) -> tuple[DecayFinding, ...]:
        return tuple(f for f in self.findings if f.run is run)

    def latest_regressions(self) -> tuple[DecayFinding, ...]:
        """What the nightly reports: the regressions open (confirmed) on the latest nightly run."""
        latest = self.nightly[-1:]
        return tuple(f for f in self.findings if latest and f.run is latest[0] and f.status == "confirmed")


def order(run: Stored) -> tuple[str, str]:
    return (run.results.started_at or "", run.record.sha256)


def judge_history(
    runs: Sequence[Stored], accepted: Sequence[Accepted] = (), resume_after: tuple[str, str] | None = None
) -> Judged:
    """One key's runs (any order) judged oldest first; ``accepted``: the store's accepted regressions;
    ``resume_after`` (a run's order): also the resume point judge_history of the runs through it alone would give
    (``Judged.resume_at``), from the same pass."""
    ordered = sorted(runs, key=order)
    key = ordered[0].key if ordered else HistoryKey("-", "-", "-")
    mine = tuple(a for a in accepted if a.history == key.text)
    by_harness: dict[int, list[Stored]] = {}
    for run in ordered:
        by_harness.setdefault(run.results.harness, []).append(run)
    current = max(by_harness, default=FIRST_HARNESS)
    findings: list[DecayFinding] = []
    judged_against: dict[tuple[str, str], Noise] = {}
    noise: list[Noise] = []
    resume: list[object] = []  # the current harness's detector end state, metric by metric
    current_at = (  # the newest harness among the runs through the cut: the one judging them alone would report
        None
        if resume_after is None
        else max((r.results.harness for r in ordered if order(r) <= resume_after), default=None)
    )
    resume_at: list[object] = []
    for harness, members in sorted(by_harness.items()):  # each harness's runs a history of their own
        cut = None if resume_after is None else sum(1 for run in members if order(run) <= resume_after)
        for watched in WATCHED:
            through = {a.through for a in mine if a.metric == watched.metric}
            judged = judge_series(watched, members, through, cut)
            findings += judged.findings
            judged_against.update({(sha, watched.metric): n for sha, n in judged.judged_against.items()})
            if harness == current:
                resume.append(judged.resume_point)
                if judged.noise is not None:
                    noise.append(judged.noise)
            if harness == current_at:
                resume_at.append(judged.resume_at)
    findings.sort(key=lambda f: order(f.run))
    return Judged(
        key, tuple(ordered), tuple(noise), tuple(findings), judged_against, mine, harness=current,
        resume_point=tuple(resume), resume_at=None if resume_after is None else tuple(resume_at),
    )  # fmt: skip


def judge_store(runs: Sequence[Stored], accepted: Sequence[Accepted] = ()) -> list[Judged]:
    """Every history of a store, by key."""
    by_key: dict[HistoryKey, list[Stored]] = {}
    for run in runs:
        by_key.setdefault(run.key, []).append(run)
    return [judge_history(members, accepted) for _, members in sorted(by_key.items())]


def judge_each(store: RunStore) -> list[Judged]:
    """Every history of a store, by key, each read on its own (an indexed query in a database)."""
    accepted = store.accepted()
    judged = [judge_history(store.history(text), accepted) for text in store.histories()]
    return sorted(judged, key=lambda j: j.key)
