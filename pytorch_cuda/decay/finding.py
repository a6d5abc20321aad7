"""What the decay model says about one metric on one run."""

from __future__ import annotations

from dataclasses import dataclass

from pytorch_cuda.decay.limits import DRIFT_SIGMAS, STEP_SIGMAS
from pytorch_cuda.decay.noise import Noise
from pytorch_cuda.run_store import Stored
from pytorch_cuda.run_store.run_identity import machine_of

# suspect: one night beyond the step limit; confirmed: a regression, open (reported every night) until it recovers
# or is accepted; cleared: a suspect the next night did not repeat; recovered, accepted: an open regression closed
# on this run; fault, control: a step on a run under a fault or a control (never a regression)
STATUSES = ("confirmed", "suspect", "cleared", "recovered", "accepted", "fault", "control")
KINDS = ("step", "drift", "missing")


@dataclass(frozen=True, eq=False)
class DecayFinding:
    metric: str
    kind: str  # one of KINDS
    run: Stored
    value: float  # the run's value (a drift when it opened: the mean of its nights; missing: NaN)
    noise: Noise  # what it was judged against (an open regression: the noise from before it)
    change: float  # relative to the noise's centre
    status: str  # one of STATUSES
    evidence: tuple[Stored, ...]  # the runs behind it (an open regression: every night since it began)

    @property
    def limit(self) -> float:
        return (STEP_SIGMAS if self.kind == "step" else DRIFT_SIGMAS) * self.noise.spread

    @property
    def machines(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(machine_of(r.identity) for r in self.evidence))

    @property
    def since(self) -> str:
        return (self.evidence[0].results.started_at or "?")[:16]

    def describe(self) -> str:
        where = ", ".join(self.machines)
        if self.kind == "missing":
            return f"{self.metric} missing: not reported (its history measured it); {self.status}"
        held = f" since {self.since}" if self.status == "confirmed" and len(self.evidence) > 2 else ""
        return (
            f"{self.metric} {self.kind}: {self.value:.4g} vs {self.noise.centre:.4g} ({self.change:+.1%}, limit "
            f"{self.limit:.1%}; noise {self.noise.describe()}); {self.status}{held}, {len(self.evidence)} run(s) "
            f"on {where}"
        )
