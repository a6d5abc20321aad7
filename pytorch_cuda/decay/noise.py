"""A metric's noise, learned from the good runs of its history: a robust centre (the median) and spread
(1.4826 x the median absolute deviation, or the interquartile range / 1.349 where that is wider, relative to the
centre, never below the metric's least noise). Runs from other hosts and leases are in the window, so
host-to-host spread is part of what is learned; the quartiles keep a host that runs a few percent slower from
collapsing the MAD to zero when the faster host holds the majority of the window."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from pytorch_cuda.decay.limits import detectable
from pytorch_cuda.decay.watched import Watched

WINDOW: Final = 20  # the last N good runs a noise estimate is learned from
LEARNED_FROM: Final = 4  # fewer good runs than this: the prior, doubled (too few to know the spread)
MAD_TO_SIGMA: Final = 1.4826  # the MAD of a normal distribution is 0.6745 sigma
IQR_TO_SIGMA: Final = 1 / 1.349  # its interquartile range is 1.349 sigma


@dataclass(frozen=True)
class Noise:
    metric: str
    centre: float
    spread: float  # relative: one robust sigma as a share of the centre
    runs: int
    machines: int  # distinct hosts (or GPUs) among those runs
    source: str  # learned | prior

    @property
    def detectable(self) -> float:
        """The minimum detectable regression (relative) against this noise (limits.detectable)."""
        return detectable(self.spread)

    def describe(self) -> str:
        how = (
            f"learned from {self.runs} runs on {self.machines} hosts"
            if self.source == "learned"
            else (f"prior: only {self.runs} good run(s), fewer than {LEARNED_FROM}")
        )
        return f"{self.centre:.4g} ± {self.spread:.1%} ({how})"


def learn(watched: Watched, values: Sequence[float], machines: Sequence[str]) -> Noise | None:
    """The noise of ``values`` (oldest first; the last WINDOW are used), or None when there are none."""
    recent = [v for v in values if math.isfinite(v)][-WINDOW:]  # NaN never informs a centre
    if not recent:
        return None
    centre = statistics.median(recent)
    kinds = len(set(machines[-WINDOW:]))
    if len(recent) < LEARNED_FROM or centre == 0:
        return Noise(watched.metric, centre, 2 * watched.least_noise, len(recent), kinds, "prior")
    mad = statistics.median(abs(v - centre) for v in recent)
    first, _, third = statistics.quantiles(recent, n=4, method="inclusive")
    spread = max(MAD_TO_SIGMA * mad, IQR_TO_SIGMA * (third - first)) / abs(centre)
    spread = max(spread, watched.least_noise)
    return Noise(watched.metric, centre, spread, len(recent), kinds, "learned")
