"""Decay detection over the results store: a noise model learned from each history's own runs, and the findings
it supports (a step beyond noise, confirmed by the next run or a re-run on another host; a slow drift that no
single night crosses).

A history is every stored run of one key (run_store.run_identity.HistoryKey: variant x GPU model x driver branch),
so a nightly's new digest joins the series of the one before. Only nightly runs that passed are a baseline; runs
under a fault or a control and partial selections are judged against the history and never join it.
"""

from pytorch_cuda.decay.judge import DecayFinding, Judged, judge_history, judge_store
from pytorch_cuda.decay.noise import Noise, learn
from pytorch_cuda.decay.watched import WATCHED, Watched

__all__ = ["WATCHED", "DecayFinding", "Judged", "Noise", "Watched", "judge_history", "judge_store", "learn"]
