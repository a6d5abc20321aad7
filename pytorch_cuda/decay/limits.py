"""The decay model's limits, in robust sigmas of a metric's learned noise (noise.py), and the smallest held
regression they let through: the minimum detectable regression published per metric and card."""

from __future__ import annotations

import math
from typing import Final

STEP_SIGMAS: Final = 3.5  # one night beyond: a suspect; two nights running: a confirmed step
GROSS_SIGMAS: Final = 10.0  # one night this far beyond is confirmed on its own: no noise of a history goes there
DRIFT_SIGMAS: Final = 2.5  # the mean of the last DRIFT_RUNS nights beyond it (each beyond AGREE_SIGMAS): a drift
DRIFT_RUNS: Final = 3
AGREE_SIGMAS: Final = 1.0  # every night of a drift is at least this much worse: one outlier is not a drift
RECOVERED_SIGMAS: Final = 1.0  # two nights running within it: an open regression has recovered
HISTORY_RUNS: Final = 4  # fewer nightly runs in a history's baseline: "no history yet", nothing judged


def detectable(spread: float) -> float:
    """The minimum detectable regression: the held step (relative) that the drift test confirms by the third
    night in 84% of cases when the nightly numbers scatter normally with ``spread`` (one robust sigma)."""
    return (DRIFT_SIGMAS + 1 / math.sqrt(DRIFT_RUNS)) * spread
