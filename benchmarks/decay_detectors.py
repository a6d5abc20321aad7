"""The nightly's change-point detector (pytorch_cuda/decay/detector.py) against the anchor, Apache Otava's
e-divisive means with its t-test (vendored alone in benchmarks/otava_edivisive/), on the same series, in one run
(issue 49, item 2): precision, recall and detection delay.

    .venv/bin/uv export --frozen --no-emit-project --extra test --extra decay-bench --format requirements-txt \\
        --no-header -q -o /tmp/bench.txt && .venv/bin/pip install --require-hashes --no-deps -r /tmp/bench.txt
    .venv/bin/python benchmarks/decay_detectors.py [--seeds N]

Series:
- otava-test-data's generated patterns (CombinationGenerator, length 50, each with noise sigma 0, 2, 5 and 10 on a
  level of 100, seeds 0..N-1). The truth is each pattern's mean shifts (step, regression start and end); an outlier,
  a variance change, a phase change or banding is no change, so flagging one counts against precision.
- our histories: each watched metric of the committed untouched runs (evidence/fleet-runs/, H100 and H200, in time
  order; ours with that metric's least noise), then each fault of evidence/decay-faults/ held for 3 nights after
  them; the truth is the metrics docs/decay.md lists the fault as moving (detections on the fault's other metrics
  are counted apart: a fault moves more than its headline).
Scoring: a detection matches a true change when it places the change within TOLERANCE points after it (or 2
before). Precision and recall: over the whole series. Delay: nights from the change to the first night the
detector, run as the nightly runs it (on every prefix for Otava; once, night by night, for ours), reports it.
Ours judges one direction (a regression), so it runs twice (higher is better, and lower), and its detections are
the opening and recovery nights of its confirmed regressions; on generated series its noise floor is 1.5%.
It prints a table and writes build-output/decay-detectors.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from pytorch_cuda.decay.detector import judge_series
from pytorch_cuda.decay.watched import WATCHED, Watched
from pytorch_cuda.run_store import Stored
from pytorch_cuda_contract.results_file import parse_results

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "build-output" / "decay-detectors.json"
TOLERANCE = 5
MEAN_SHIFTS = ("step", "regression_start", "regression_end")
FAULT_METRICS = {
    "cublas-workspace-0": ("gemm.tf32.tflops", "gemm.tf32.x_fp32"),
    "cudnn-v8-off": ("conv.fp32.tflops", "conv.fp16.tflops", "conv.bf16.tflops"),
    "launch-blocking": ("amp.speedup.fp16", "amp.speedup.bf16"),
    "busy-gpu": ("gemm.bf16.tflops", "gemm.tf32.tflops", "gemm.fp32.tflops", "conv.fp32.tflops", "sdpa.fp32.tflops"),
}


@dataclass(frozen=True)
class Series:
    name: str
    values: tuple[float, ...]
    changes: tuple[int, ...]  # the index of each true change
    watched: Watched | None = None  # ours judges it as this metric (its least noise); None: a generic 1.5% floor
    labelled: bool = True  # False: a metric a fault may move without the table saying so (not scored, counted)


@dataclass
class Score:
    truths: int = 0
    found: int = 0  # true changes detected
    detections: int = 0
    correct: int = 0  # detections that match a true change
    delays: list[int] = field(default_factory=list)
    seconds: float = 0.0
    unlabelled: int = 0  # detections on metrics a fault was not listed as moving (neither right nor wrong)


# --- ours, through the nightly's own code: each value a stored run of one history ---------------------------------
@dataclass(frozen=True)
class _Results:
    value: float
    started_at: str

    def number(self, metric: str) -> float:
        return self.value


@dataclass(frozen=True)
class _Record:
    sha256: str
    fault: None = None
    control: None = None


@dataclass(frozen=True)
class _Identity:
    host: str
    gpu_uuids: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class _Night:
    results: _Results
    record: _Record
    identity: _Identity
    purpose: str = "nightly"
    partial: bool = False


def ours(values: Sequence[float], metric: Watched | None = None) -> tuple[list[int], list[int]]:
    """(where each change is placed, the night it is reported) over both directions."""
    nights = [
        _Night(_Results(v, f"2026-01-01T00:00:{i:05d}"), _Record(f"{i:064d}"), _Identity(f"host-{i % 3}"))
        for i, v in enumerate(values)
    ]
    index = {id(n): i for i, n in enumerate(nights)}
    placed, reported = [], []
    for higher in (True, False):
        watched = Watched("bench", "bench", higher, metric.least_noise if metric else 0.015)
        judged = judge_series(watched, cast("list[Stored]", nights))
        opened: set[int] = set()
        for f in judged.findings:
            onset = index[id(f.evidence[0])]
            if (f.status == "confirmed" and onset not in opened) or f.status == "recovered":
                opened.add(onset)
                placed.append(onset)
                reported.append(index[id(f.run)])
    return placed, reported


# --- the anchor: Otava's e-divisive, as its CLI runs it (window 50, p 0.001, no minimum magnitude) -----------------
def otava(values: Sequence[float]) -> list[int]:
    from benchmarks.otava_edivisive.analysis import compute_change_points

    points, _ = compute_change_points(list(values), window_len=50, max_pvalue=0.001, min_magnitude=0.0)
    return [int(p.index) for p in points]


def _match(change: int, placed: int) -> bool:
    return change - 2 <= placed <= change + TOLERANCE


def score_offline(score: Score, series: Series, placed: Sequence[int]) -> None:
    if not series.labelled:
        score.unlabelled += len(placed)
        return
    score.truths += len(series.changes)
    score.detections += len(placed)
    score.correct += sum(any(_match(c, p) for c in series.changes) for p in placed)
    score.found += sum(any(_match(c, p) for p in placed) for c in series.changes)


def otava_delays(series: Series) -> list[int]:
    """Otava run after every night: the first night a change is placed at each true change."""
    delays = []
    pending = list(series.changes)
    for end in range(3, len(series.values) + 1):
        found = otava(series.values[:end])
        for change in list(pending):
            if any(_match(change, p) for p in found):
                delays.append(end - 1 - change)
                pending.remove(change)
    return delays


def run(all_series: Sequence[Series]) -> dict[str, Score]:
    scores = {"ours (nightly detector)": Score(), "Otava e-divisive (anchor)": Score()}
    for s in all_series:
        began = time.perf_counter()
        placed, reported = ours(s.values, s.watched)
        score_offline(scores["ours (nightly detector)"], s, placed)
        for change in s.changes:
            hits = [r for p, r in zip(placed, reported, strict=True) if _match(change, p)]
            if hits:
                scores["ours (nightly detector)"].delays.append(min(hits) - change)
        scores["ours (nightly detector)"].seconds += time.perf_counter() - began
        began = time.perf_counter()
        score_offline(scores["Otava e-divisive (anchor)"], s, otava(s.values))
        if s.labelled:
            scores["Otava e-divisive (anchor)"].delays += otava_delays(s)
        scores["Otava e-divisive (anchor)"].seconds += time.perf_counter() - began
    return scores


def generated(seeds: int) -> list[Series]:
    from otava_test_data.generators.combiner import CombinationGenerator

    found = []
    for seed in range(seeds):
        for ts in CombinationGenerator(lengths=[50], seed=seed).generate_with_noise_variants():
            changes = tuple(c.index for c in ts.change_points if c.change_type in MEAN_SHIFTS)
            found.append(Series(f"{ts.generator_name} seed {seed}", tuple(float(v) for v in ts.data), changes))
    return found


def _results(path: Path) -> Any:
    return parse_results(path.read_bytes(), source=str(path))


def ours_histories() -> tuple[list[Series], list[Series]]:
    """(the untouched histories: no change; each fault held 3 nights after them)."""
    untouched, faulted = [], []
    for card in ("h100", "h200"):
        runs = sorted((_results(p) for p in (ROOT / "evidence/fleet-runs" / card).glob("*.json")),
                      key=lambda r: r.started_at or "")  # fmt: skip
        faults = {p.stem: _results(p) for p in (ROOT / "evidence/decay-faults" / card).glob("*.json")}
        for w in WATCHED:
            values = [v for r in runs if (v := r.number(w.metric)) is not None]
            if len(values) < 4:
                continue
            untouched.append(Series(f"{card} {w.metric}", tuple(values), (), w))
            for fault, results in sorted(faults.items()):
                value = results.number(w.metric)
                if value is None:
                    continue
                moved = w.metric in FAULT_METRICS.get(fault, ())
                held = (*values, value, value, value)
                faulted.append(Series(f"{card} {w.metric} + {fault}", held, (len(values),) if moved else (), w, moved))
    return untouched, faulted


def _row(name: str, s: Score) -> dict[str, Any]:
    return {
        "detector": name,
        "precision": s.correct / s.detections if s.detections else None,
        "recall": s.found / s.truths if s.truths else None,
        "detections": s.detections,
        "true_changes": s.truths,
        "false_alarms": s.detections - s.correct,
        "median_delay": statistics.median(s.delays) if s.delays else None,
        "mean_delay": statistics.mean(s.delays) if s.delays else None,
        "seconds": s.seconds,
        "on_metrics_not_listed": s.unlabelled,
    }


def _print(title: str, rows: list[dict[str, Any]]) -> None:
    print(f"\n{title}")
    for r in rows:

        def pct(x: float | None) -> str:
            return "-" if x is None else f"{x:.1%}"

        delay: Callable[[float | None], str] = lambda x: "-" if x is None else f"{x:.1f}"  # noqa: E731
        print(
            f"  {r['detector']:28} precision {pct(r['precision']):>6}  recall {pct(r['recall']):>6}  "
            f"false alarms {r['false_alarms']:4}  delay median {delay(r['median_delay'])} mean "
            f"{delay(r['mean_delay'])} nights  ({r['detections']} detections, {r['true_changes']} true changes, "
            f"{r['seconds']:.1f} s)"
            + (
                f"; {r['on_metrics_not_listed']} on metrics the fault is not listed as moving"
                if r["on_metrics_not_listed"]
                else ""
            )
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="otava-test-data seeds (40 series each; default 5)")
    args = parser.parse_args()
    untouched, faulted = ours_histories()
    suites = {
        f"otava-test-data, {args.seeds} seeds x 40 series of 50 points": generated(args.seeds),
        f"our untouched histories ({len(untouched)} metric series, H100 + H200): every detection is a false alarm": (
            untouched
        ),
        f"our faults held 3 nights after them ({len(faulted)} series)": faulted,
    }
    document = {}
    for title, series in suites.items():
        rows = [_row(name, score) for name, score in run(series).items()]
        _print(title, rows)
        document[title] = rows
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
