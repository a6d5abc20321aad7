"""What a results file says about itself: the suite's name, the schema it is written in and the words it uses.

The writer (``conformance.support.results.recorder``) and the reader (``results_file``) both take them from here;
a metric's own fields are ``metrics``'s.
"""

from __future__ import annotations

from typing import Final

SUITE: Final = "pytorch-cuda-conformance"
RESULTS_SCHEMA: Final = 2  # what the suite writes
SUPPORTED_SCHEMAS: Final = (2,)  # what the reader reads
# not_judged: a check that judges the image's own filesystem, with no equivalent on the shipped stack carried to a
# bare host, did not judge there (only on a "carried" stack; its message starts with NOT_JUDGED_PREFIX). Counted
# apart from passed and skipped; a file written before it has no such key in "totals" (read as 0).
OUTCOMES: Final = ("passed", "failed", "skipped", "not_run", "not_judged")
NOT_JUDGED_PREFIX: Final = "not judged on a bare host:"
VERDICTS: Final = ("native", "emulated", "unsupported")  # a dtype on a device, measured
# The suite's GPU timing harness, recorded in each results file ("harness"): a change moves every timed number, so
# the decay history compares a run only with runs of its own harness (pytorch_cuda/decay/judge.py, docs/decay.md).
# 1: a fixed count of CUDA-event timed calls after a warm-up, no L2 flush (every file written before the field);
# 2: the L2 flushed before every repetition, repetitions until the median's relative standard error reaches the
#    target or a time cap ends them, each number's own spread recorded, AMP and compile speed-ups interleaved;
# 3: harness 2 with each repetition held behind a spin kernel while the CPU enqueues it (nvbench's blocking kernel),
#    and a repetition whose start the GPU reached first timed again: no launch gap in any time.
FIRST_HARNESS: Final = 1
HARNESS_VERSION: Final = 3
# Why a timed number's repetitions stopped (its metric's "stopped" field).
STOPPED: Final = ("target", "time_cap", "max_reps")
