"""benchmarks/store_night.py's window-move night: the nights it stores in bulk end the night before the judge's
windows move, and --put-back leaves the store as it was before the timed night (no timing asserts)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.store_night import kept_windows, nights_to_move, put_back
from benchmarks.synthetic_fleet import Fleet, bulk_store
from pytorch_cuda.decay.windowed import WINDOW_RUNS, judge_windowed
from pytorch_cuda.run_store.backend import open_store


def test_the_window_move_night_is_the_first_whose_judge_moves_the_windows(tmp_path: Path) -> None:
    fleet, location = Fleet(1, 2), tmp_path / "store.sqlite"
    first = 2 * WINDOW_RUNS + 10  # longer than a window: the first judge keeps one
    bulk_store(fleet, location, range(first), every=10**9)
    judge_windowed(open_store(location))  # last night's judge: it kept each history's window
    before = nights_to_move(open_store(location))
    assert before > 0
    bulk_store(fleet, location, range(first, first + before), every=10**9)
    assert nights_to_move(open_store(location)) == 0
    store = open_store(location)
    windows = kept_windows(store)
    assert all(windows.values())
    judge_windowed(store)  # the night before the move: the windows stay
    assert kept_windows(store) == windows
    runs = {s.record.sha256 for s in store.runs()}
    bulk_store(fleet, location, range(first + before, first + before + 1), every=10**9)
    judge_windowed(store)  # the move night: every window moves
    moved = kept_windows(store)
    assert all(moved[text] != windows[text] for text in windows)
    night = [str(row[0]) for row, _ in fleet.entries(range(first + before, first + before + 1))]
    put_back(store, night, windows)
    assert {s.record.sha256 for s in store.runs()} == runs
    assert kept_windows(store) == windows
    assert nights_to_move(store) == 0
