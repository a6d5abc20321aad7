"""The judge's work on the night a history's window moves (issue 55: then 1 night in 41, the 44,000-run night's
slow one; 1 in 21 since it moves once the read passes windowed.moves_after, 100 runs): the read (2 x WINDOW_RUNS + 1
runs, as it moved then) is judged, then the WINDOW_RUNS before the last SHOWN_RUNS alone,
and the two states compared at the tail's end. The read's state there comes either from judging the head again
(the previous code: a second pass over nearly the whole read) or from the read's own pass (judge_history's
``resume_after``, now), side by side on the same histories in one process, alternating:

    .venv/bin/python benchmarks/window_move.py [--histories 24] [--repeats 5]

The histories are the synthetic fleet's (benchmarks/synthetic_fleet.py: real H100 runs with seeded noise), read
from a SQLite store once; both ways must agree on every history's state, or it exits 1.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.synthetic_fleet import Fleet, bulk_store  # noqa: E402
from pytorch_cuda.decay.judge import judge_history, order  # noqa: E402
from pytorch_cuda.decay.windowed import SHOWN_RUNS, WINDOW_RUNS  # noqa: E402
from pytorch_cuda.run_store import Stored  # noqa: E402
from pytorch_cuda.run_store.backend import open_store  # noqa: E402


def previous(runs: list[Stored]) -> bool:
    head = runs[: len(runs) - SHOWN_RUNS]
    judge_history(runs)
    return judge_history(head[-WINDOW_RUNS:]).resume_point == judge_history(head).resume_point


def one_pass(runs: list[Stored]) -> bool:
    head = runs[: len(runs) - SHOWN_RUNS]
    at = judge_history(runs, (), order(head[-1])).resume_at
    return judge_history(head[-WINDOW_RUNS:]).resume_point == at


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--histories", type=int, default=24, help="GPU models x 6 variants (a multiple of 6)")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    nights = 2 * WINDOW_RUNS + 1
    with tempfile.TemporaryDirectory() as folder:
        location = Path(folder) / "store.sqlite"
        bulk_store(Fleet(max(1, args.histories // 6), 6), location, range(nights), every=10**9)
        store = open_store(location)
        histories = [store.history(text) for text in store.histories()]
    agree = [previous(runs) == one_pass(runs) for runs in histories]
    times: dict[str, list[float]] = {"previous": [], "one_pass": []}
    for _ in range(args.repeats):
        for name, way in (("previous", previous), ("one_pass", one_pass)):
            started = time.perf_counter()
            for runs in histories:
                way(runs)
            times[name].append(time.perf_counter() - started)
    medians = {name: statistics.median(t) for name, t in times.items()}
    result = {
        "histories": len(histories),
        "runs_each": nights,
        "agree": all(agree),
        "seconds": {name: {"median": medians[name], "min": min(t), "max": max(t)} for name, t in times.items()},
        "ratio": medians["previous"] / medians["one_pass"],
    }
    print(json.dumps(result, indent=1))
    return 0 if all(agree) else 1


if __name__ == "__main__":
    raise SystemExit(main())
