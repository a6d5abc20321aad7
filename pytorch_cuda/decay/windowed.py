"""`build.py results judge` on a window of each history: the last runs, and every run of a regression still open,
read through indexed queries, with the verdicts of a full read.

The decay model's memory is finite except while a regression is open: what it says about the next run depends
only on its state after the last one (detector.SeriesJudgement.resume_point: the baseline's tail, the last
nights, the open regression and its nights). So a window that starts at run S judges every later run exactly as the
full history does once, at some run T, the window's state equals the full read's. The judge keeps, per history, S
and T (with how many runs of the history sorted up to T, and which regressions were accepted) in the store
(``judge_windows``, derived, never exported), and reads from S on:

- with no window kept, or one the store no longer matches (a run stored late, before T; an acceptance since), it
  reads the whole history, which is exact;
- when what it read is longer than WINDOW_RUNS + SHOWN_RUNS + WINDOW_RUNS / MOVE_SHARE (100 runs), it judges alone
  the WINDOW_RUNS before the last SHOWN_RUNS, and where that tail ends in the state the read is in at the same run
  (each metric's resume point), moves S to the tail's first run and T to its last: the last SHOWN_RUNS runs of a
  history are always after T, judged exactly (the site shows them, reading the kept window without keeping one:
  ``read_window``). A regression open since before the tail keeps its nights in the state, so S stays before it: the
  window is the last runs plus the open regressions. A night reads from WINDOW_RUNS + SHOWN_RUNS + 1 runs (the
  night after a move) up to 20 more, and the night the window moves (1 in 21) judges its read and the tail: moving
  less often (once the read passed 2 x WINDOW_RUNS, 1 night in 41, before) reads more every night, and most on
  that one (benchmarks/store_night.py --window-move times it).

What it reports is exact for the runs after T: the regressions open on the latest nightly run, the noise, no
history yet; the findings listed are those on runs after T, and the counts are of the runs read (``window``).
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, replace
from typing import Any, Final

from pytorch_cuda.decay.judge import Judged, judge_history, order
from pytorch_cuda.run_store.accepted import Accepted
from pytorch_cuda.run_store.backend import RunOrder, RunStore
from pytorch_cuda.run_store.store import Stored

WINDOW_RUNS: Final = 60  # the tail judged alone to move the window: three noise windows (noise.WINDOW)
SHOWN_RUNS: Final = 20  # the last runs of a history always after T (exact): what the site shows of a history
MOVE_SHARE: Final = 3  # the window moves again once the read gains a third of the tail past the tail and shown runs
KIND: Final = "pytorch-cuda-judge-window"


@dataclass(frozen=True)
class JudgeWindow:
    since: RunOrder  # S: the first run read
    through: RunOrder  # T: from the run after it on, the window judges as the full history
    runs_through: int  # how many runs of the history sorted up to T when the window was kept
    accepted: str  # sha256 of the history's accepted regressions then
    shown: int  # how many runs after T there were when it was kept (a window kept before SHOWN_RUNS: 0)

    def document(self) -> str:
        doc = {"kind": KIND, "since": list(self.since), "through": list(self.through),
               "runs_through": self.runs_through, "accepted": self.accepted, "shown": self.shown}  # fmt: skip
        return json.dumps(doc, sort_keys=True)


@dataclass(frozen=True)
class WindowedJudged:
    judged: Judged  # the runs read (the window), their findings after ``exact_after``
    read_from: RunOrder | None  # None: the whole history was read
    exact_after: RunOrder | None  # findings on runs after it (None: every run's)
    moved: JudgeWindow | None = None  # the window this judgement kept (None: none; the next read starts as this)

    def next_read(self) -> Judged:
        """What ``read_window`` gives after this judgement, without reading the store again (the site beside the
        judge, `build.py site --judge`): where the window moved, the runs from its S on, with the findings after
        its T; else the judgement itself (the next read starts where this one did)."""
        if self.moved is None:
            return self.judged
        since, through = self.moved.since, self.moved.through
        runs = tuple(r for r in self.judged.runs if order(r) >= since)
        read = {r.record.sha256 for r in runs}
        return replace(
            self.judged,
            runs=runs,
            findings=tuple(f for f in self.judged.findings if order(f.run) > through),
            judged_against={k: n for k, n in self.judged.judged_against.items() if k[0] in read},
        )

    def document(self) -> dict[str, Any]:
        return {
            "runs_read": len(self.judged.runs),
            "since": _text(self.read_from),
            "findings_after": _text(self.exact_after),
        }


def _text(at: RunOrder | None) -> str | None:
    return None if at is None else f"{at[0]} {at[1][:12]}"


def _accepted_digest(accepted: list[Accepted]) -> str:
    return hashlib.sha256(json.dumps(sorted(a.sha256 for a in accepted)).encode()).hexdigest()


def _kept(store: RunStore, text: str, digest: str, shown: int) -> JudgeWindow | None:
    """The window kept for ``text``, if the store still matches it and it leaves the last ``shown`` runs after T."""
    raw = store.judge_window(text)
    if raw is None:
        return None
    try:
        doc = json.loads(raw)
        since, through, runs_through = tuple(doc["since"]), tuple(doc["through"]), int(doc["runs_through"])
        kept = JudgeWindow(since, through, runs_through, str(doc["accepted"]), int(doc.get("shown", 0)))
    except (ValueError, KeyError, TypeError):
        return None  # derived data: read the whole history and keep a new one
    if doc.get("kind") != KIND or kept.accepted != digest or kept.shown < shown:
        return None
    return kept if store.count_through(text, kept.through) == kept.runs_through else None


def moves_after(window_runs: int, shown: int) -> int:
    """The longest read that keeps its window: one run more moves it (``window_runs`` before the last ``shown``,
    and a MOVE_SHARE-th of ``window_runs`` gained past them)."""
    return window_runs + shown + window_runs // MOVE_SHARE


def _cut(runs: list[Stored], window_runs: int, shown: int) -> tuple[str, str] | None:
    """Where a window could move to (the last run before the last ``shown``), when the read is long enough."""
    return order(runs[len(runs) - shown - 1]) if len(runs) > moves_after(window_runs, shown) else None


def _advanced(
    runs: list[Stored], judged: Judged, accepted: list[Accepted], counted_before: int, *, window_runs: int, shown: int
) -> JudgeWindow | None:
    """A later window, where the ``window_runs`` before the last ``shown`` alone end in the state the read is in at
    the same run (the read is exact there: past the kept T, or a full read). The read's state there comes from its
    own pass (``judged.resume_at``, judged with ``_cut``) where the runs came in order, else from judging them
    again."""
    if judged.resume_at is None:  # the read is too short to move the window (``_cut``)
        return None
    head = runs[: len(runs) - shown]
    tail = head[-window_runs:]
    in_order = all(order(a) <= order(b) for a, b in itertools.pairwise(runs))
    at = judged.resume_at if in_order else judge_history(head, accepted).resume_point
    if judge_history(tail, accepted).resume_point != at:
        return None  # e.g. a regression open since before the tail
    digest = _accepted_digest([a for a in accepted if a.history == head[-1].key.text])
    return JudgeWindow(order(tail[0]), order(head[-1]), counted_before + len(head), digest, shown)


def judge_window_of(
    store: RunStore,
    text: str,
    accepted: list[Accepted],
    window_runs: int,
    shown: int = SHOWN_RUNS,
    *,
    keep: bool = True,
) -> WindowedJudged:
    """One history judged from its kept window (the whole history where none is kept, or the store no longer
    matches it); ``keep``: move the window and keep it where it can move (the judge; the site only reads)."""
    if not 0 <= shown < window_runs:
        raise ValueError(f"shown ({shown}) must be at least 0 and less than window_runs ({window_runs})")
    digest = _accepted_digest([a for a in accepted if a.history == text])
    kept = _kept(store, text, digest, shown)
    if kept is None:
        runs, counted_before = store.history(text), 0
    else:
        runs = store.history_since(text, kept.since)
        counted_before = kept.runs_through - sum(1 for r in runs if order(r) <= kept.through)
    judged = judge_history(runs, accepted, _cut(runs, window_runs, shown) if keep else None)
    exact_after = None if kept is None else kept.through
    if exact_after is not None:
        after = exact_after
        judged = replace(judged, findings=tuple(f for f in judged.findings if order(f.run) > after))
    moved = _advanced(runs, judged, accepted, counted_before, window_runs=window_runs, shown=shown) if keep else None
    if moved is not None:
        store.keep_judge_window(text, moved.document())
        if store.judge_window(text) != moved.document():
            moved = None  # a store this process cannot write kept none: the next read starts where this one did
    return WindowedJudged(judged, None if kept is None else kept.since, exact_after, moved)


def read_window(store: RunStore, text: str, accepted: list[Accepted]) -> WindowedJudged:
    """One history judged from the window the judge kept, keeping none: exact from the run after T on, which is
    at least the last SHOWN_RUNS runs (the site's read)."""
    return judge_window_of(store, text, accepted, WINDOW_RUNS, keep=False)


def judge_windowed(store: RunStore, window_runs: int = WINDOW_RUNS, shown: int = SHOWN_RUNS) -> list[WindowedJudged]:
    """Every history of a store, by key, each judged on its window (``window_runs``: the tail judged alone to move
    it; ``shown``: the last runs always judged exactly; the tests' histories are shorter)."""
    accepted = store.accepted()
    judged = [judge_window_of(store, text, accepted, window_runs, shown) for text in store.histories()]
    return sorted(judged, key=lambda w: w.judged.key)
