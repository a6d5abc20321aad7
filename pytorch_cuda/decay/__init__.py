"""Decay detection over the results store: a noise model learned from each history's own runs, and the findings
it supports (detector.py: a step confirmed by the next night, a drift no single night crosses, a missing metric;
a confirmed regression open until it recovers or is accepted).

A history is every stored run of one key (run_store.run_identity.HistoryKey: variant x GPU model x driver branch),
so a nightly's new digest joins the series of the one before. Every nightly run is judged, a partial one (a failed
check, a selection) on the numbers it has; its numbers join the baseline unless they are part of a regression.
Runs under a fault or a control are judged against the history and never join it.
"""

from pytorch_cuda.decay.finding import DecayFinding
from pytorch_cuda.decay.judge import Judged, judge_each, judge_history, judge_store
from pytorch_cuda.decay.noise import Noise, learn
from pytorch_cuda.decay.watched import WATCHED, Watched

__all__ = [
    "WATCHED",
    "DecayFinding",
    "Judged",
    "Noise",
    "Watched",
    "judge_each",
    "judge_history",
    "judge_store",
    "learn",
]
